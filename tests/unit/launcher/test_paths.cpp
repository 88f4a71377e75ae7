#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include "paths.hpp"

using namespace s4bxi::launcher;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir()
    {
        std::string pattern = (fs::temp_directory_path() / "s4bxi-launcher-test-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string file(const std::string& name, mode_t mode)
    {
        fs::path p = path / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << "#!/bin/sh\n";
        ::chmod(p.c_str(), mode);
        return p.string();
    }
};

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("programs are resolved like execvp", "[paths]")
{
    TempDir dir;
    std::string exe = dir.file("bin/tool", 0755);
    dir.file("other/tool", 0644);
    dir.file("other/data", 0644);
    std::string bin = (dir.path / "bin").string();
    std::string other = (dir.path / "other").string();

    auto found = resolve_program("tool", (other + ":" + bin).c_str());
    REQUIRE(found);
    CHECK(*found.value == exe);

    auto not_executable = resolve_program("data", (other + ":" + bin).c_str());
    REQUIRE_FALSE(not_executable);
    CHECK(contains(not_executable.error, "not executable"));
    CHECK(contains(not_executable.error, "data"));

    auto missing = resolve_program("no-such-tool", bin.c_str());
    REQUIRE_FALSE(missing);
    CHECK(contains(missing.error, "not found"));

    auto by_path = resolve_program(exe, "");
    REQUIRE(by_path);
    CHECK(*by_path.value == exe);

    auto missing_path = resolve_program((dir.path / "nope").string(), bin.c_str());
    REQUIRE_FALSE(missing_path);
    CHECK(contains(missing_path.error, "not found"));

    auto directory = resolve_program(bin, bin.c_str());
    REQUIRE_FALSE(directory);
    CHECK(contains(directory.error, "directory"));

    CHECK(resolve_program("sh", "/usr/bin:/bin"));
}

TEST_CASE("platform files must be readable regular files", "[paths]")
{
    TempDir dir;
    std::string file = dir.file("p.toml", 0644);
    auto ok = check_platform_file(file);
    REQUIRE(ok);
    CHECK(fs::path(*ok.value).is_absolute());

    auto missing = check_platform_file((dir.path / "missing.toml").string());
    REQUIRE_FALSE(missing);
    CHECK(contains(missing.error, "missing.toml"));

    auto directory = check_platform_file(dir.path.string());
    REQUIRE_FALSE(directory);
    CHECK(contains(directory.error, "not a regular file"));
}

TEST_CASE("siblings: build tree first, then the installed layout", "[paths]")
{
    TempDir dir;
    SiblingLayout layout;
    layout.installed_simkernel = "../libexec/s4bxi/s4bxi-simkernel";
    layout.installed_library = "../lib/libportals.so.4";
    std::string launcher_dir = (dir.path / "bin").string();
    fs::create_directories(launcher_dir);

    auto none = find_siblings(launcher_dir, layout, std::nullopt, std::nullopt);
    REQUIRE_FALSE(none);
    CHECK(contains(none.error, "s4bxi-simkernel"));

    std::string installed_server = dir.file("libexec/s4bxi/s4bxi-simkernel", 0755);
    auto no_library = find_siblings(launcher_dir, layout, std::nullopt, std::nullopt);
    REQUIRE_FALSE(no_library);
    CHECK(contains(no_library.error, "libportals.so.4"));

    std::string installed_library = dir.file("lib/libportals.so.4", 0644);
    auto installed = find_siblings(launcher_dir, layout, std::nullopt, std::nullopt);
    REQUIRE(installed);
    CHECK(installed.value->simkernel == installed_server);
    CHECK(installed.value->library == installed_library);

    std::string build_server = dir.file("simkernel/s4bxi-simkernel", 0755);
    std::string build_library = dir.file("libinterpose/libportals.so.4", 0644);
    auto build = find_siblings(launcher_dir, layout, std::nullopt, std::nullopt);
    REQUIRE(build);
    CHECK(build.value->simkernel == build_server);
    CHECK(build.value->library == build_library);

    std::string own_server = dir.file("mine/server", 0755);
    std::string own_library = dir.file("mine/lib.so", 0644);
    auto overridden = find_siblings(launcher_dir, layout, own_server, own_library);
    REQUIRE(overridden);
    CHECK(overridden.value->simkernel == own_server);
    CHECK(overridden.value->library == own_library);

    auto bad_override = find_siblings(launcher_dir, layout, own_library, std::nullopt);
    REQUIRE_FALSE(bad_override);
    CHECK(contains(bad_override.error, "--simkernel"));
}

TEST_CASE("the installed layout comes from the build configuration", "[paths]")
{
    SiblingLayout layout = default_layout();
    CHECK(contains(layout.installed_simkernel, "s4bxi/s4bxi-simkernel"));
    CHECK(contains(layout.installed_library, "libportals.so.4"));
    CHECK_FALSE(fs::path(layout.installed_simkernel).is_absolute());
}

TEST_CASE("self_directory finds the test executable", "[paths]")
{
    auto self = self_directory();
    REQUIRE(self);
    CHECK(fs::is_directory(*self.value));
}
