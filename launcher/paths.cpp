#include "paths.hpp"

#include <algorithm>
#include <fstream>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef S4BXI_REL_SIMKERNEL
#error "S4BXI_REL_SIMKERNEL (path of s4bxi-simkernel relative to bindir) must be defined by the build"
#endif
#if !defined(S4BXI_REL_PLATFORMS) || !defined(S4BXI_SOURCE_PLATFORMS)
#error "S4BXI_REL_PLATFORMS and S4BXI_SOURCE_PLATFORMS (where shipped platforms are) must be defined by the build"
#endif
#ifndef S4BXI_REL_LIBRARY
#error "S4BXI_REL_LIBRARY (path of libportals.so.4 relative to bindir) must be defined by the build"
#endif

namespace fs = std::filesystem;

namespace s4bxi::launcher {

namespace {

bool is_regular(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_executable_file(const std::string& path)
{
    return is_regular(path) && ::access(path.c_str(), X_OK) == 0;
}

bool is_readable_file(const std::string& path)
{
    return is_regular(path) && ::access(path.c_str(), R_OK) == 0;
}

std::string absolute_normal(const std::string& path)
{
    std::error_code ec;
    fs::path absolute = fs::absolute(path, ec);
    if (ec) return path;
    return absolute.lexically_normal().string();
}

}  // namespace

Checked<std::string> resolve_program(const std::string& name, const char* path_env)
{
    Checked<std::string> result;
    if (name.empty()) {
        result.error = "the program name is empty";
        return result;
    }
    // Returns true if `candidate` is usable; otherwise records the first problem found with
    // an existing but unusable file (like execvp, the search goes on after it).
    auto usable = [&](const std::string& candidate) -> bool {
        struct stat st {};
        if (::stat(candidate.c_str(), &st) != 0) return false;
        std::string problem;
        if (S_ISDIR(st.st_mode)) problem = fmt::format("program '{}' is a directory", name);
        else if (!S_ISREG(st.st_mode) || ::access(candidate.c_str(), X_OK) != 0)
            problem = fmt::format("program '{}' is not executable", name);
        if (problem.empty()) return true;
        if (result.error.empty()) result.error = problem;
        return false;
    };

    if (name.find('/') != std::string::npos) {
        if (usable(name)) result.value = name;
        else if (result.error.empty()) result.error = fmt::format("program '{}' not found", name);
        return result;
    }

    std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (true) {
        size_t end = path.find(':', start);
        std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (dir.empty()) dir = ".";
        std::string candidate = dir + "/" + name;
        if (usable(candidate)) {
            result.error.clear();
            result.value = candidate;
            return result;
        }
        if (end == std::string::npos) break;
        start = end + 1;
    }
    if (result.error.empty()) result.error = fmt::format("program '{}' not found in PATH", name);
    return result;
}

Checked<std::string> check_platform_file(const std::string& file)
{
    Checked<std::string> result;
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
        result.error = fmt::format("platform file '{}': {}", file, std::strerror(errno));
        return result;
    }
    if (!S_ISREG(st.st_mode)) {
        result.error = fmt::format("platform file '{}' is not a regular file", file);
        return result;
    }
    if (::access(file.c_str(), R_OK) != 0) {
        result.error = fmt::format("platform file '{}' is not readable", file);
        return result;
    }
    result.value = absolute_normal(file);
    return result;
}

Checked<std::string> find_platform(const std::string& name, const std::vector<std::string>& dirs)
{
    std::error_code ec;
    if (name.find('/') != std::string::npos || fs::exists(name, ec)) return check_platform_file(name);
    std::string file = name.size() > 5 && name.ends_with(".toml") ? name : name + ".toml";
    std::vector<std::string> shipped;
    for (const std::string& dir : dirs) {
        if (fs::exists(fs::path(dir) / file, ec)) return check_platform_file((fs::path(dir) / file).string());
        for (const auto& entry : fs::directory_iterator(dir, ec))
            if (entry.path().extension() == ".toml") shipped.push_back(entry.path().stem().string());
    }
    std::sort(shipped.begin(), shipped.end());
    shipped.erase(std::unique(shipped.begin(), shipped.end()), shipped.end());
    Checked<std::string> result;
    result.error = fmt::format("platform '{}': no such file, and no shipped platform of that name{}", name,
                               shipped.empty() ? std::string(" (none found)")
                                               : fmt::format(" (shipped: {})", fmt::join(shipped, ", ")));
    return result;
}

std::vector<std::string> platform_dirs(const std::string& launcher_dir)
{
    return {absolute_normal(launcher_dir + "/" + S4BXI_REL_PLATFORMS), S4BXI_SOURCE_PLATFORMS};
}

SiblingLayout default_layout()
{
    SiblingLayout layout;
    layout.installed_simkernel = S4BXI_REL_SIMKERNEL;
    layout.installed_library = S4BXI_REL_LIBRARY;
    return layout;
}

Checked<Siblings> find_siblings(const std::string& launcher_dir, const SiblingLayout& layout,
                                const std::optional<std::string>& simkernel_override,
                                const std::optional<std::string>& library_override)
{
    Checked<Siblings> result;
    Siblings siblings;

    auto locate = [&](const std::vector<std::string>& relatives) -> std::optional<std::string> {
        for (const auto& relative : relatives) {
            if (relative.empty()) continue;
            fs::path candidate = fs::path(relative).is_absolute() ? fs::path(relative)
                                                                  : fs::path(launcher_dir) / relative;
            std::string text = candidate.lexically_normal().string();
            if (is_regular(text)) return text;
        }
        return std::nullopt;
    };

    if (simkernel_override) {
        if (!is_executable_file(*simkernel_override)) {
            result.error = fmt::format("--simkernel '{}' is not an executable file", *simkernel_override);
            return result;
        }
        siblings.simkernel = absolute_normal(*simkernel_override);
    } else {
        auto found = locate({layout.build_simkernel, layout.installed_simkernel});
        if (!found) {
            result.error = fmt::format("cannot find the simulation server s4bxi-simkernel (looked in {} and {}); "
                                       "is s4bxi built and installed completely?",
                                       (fs::path(launcher_dir) / layout.build_simkernel).lexically_normal().string(),
                                       (fs::path(launcher_dir) / layout.installed_simkernel).lexically_normal().string());
            return result;
        }
        if (::access(found->c_str(), X_OK) != 0) {
            result.error = fmt::format("the simulation server {} is not executable", *found);
            return result;
        }
        siblings.simkernel = *found;
    }

    if (library_override) {
        if (!is_readable_file(*library_override)) {
            result.error = fmt::format("--preload '{}' is not a readable file", *library_override);
            return result;
        }
        siblings.library = absolute_normal(*library_override);
    } else {
        auto found = locate({layout.build_library, layout.installed_library});
        if (!found) {
            result.error = fmt::format("cannot find the Portals library libportals.so.4 (looked in {} and {}); "
                                       "is s4bxi built and installed completely?",
                                       (fs::path(launcher_dir) / layout.build_library).lexically_normal().string(),
                                       (fs::path(launcher_dir) / layout.installed_library).lexically_normal().string());
            return result;
        }
        siblings.library = *found;
    }
    // LD_PRELOAD separates entries by ':' and spaces: such a path cannot be preloaded.
    if (siblings.library.find_first_of(": \t") != std::string::npos) {
        result.error = fmt::format("the library path '{}' contains a space or ':' and cannot be used in LD_PRELOAD",
                                   siblings.library);
        return result;
    }
    // Recorded by tools/setup next to the build tree's launcher; ignored when stale.
    if (std::ifstream recorded{fs::path(launcher_dir) / ".." / "openmpi-portals4-components"}) {
        std::string directory;
        std::getline(recorded, directory);
        std::error_code ec;
        if (!directory.empty() && fs::is_directory(directory, ec)) siblings.openmpi_components = directory;
    }
    if (siblings.openmpi_components.empty()) siblings.openmpi_components = cached_openmpi_components();
    result.value = siblings;
    return result;
}

std::string cached_openmpi_components()
{
    fs::path root;
    if (const char* dir = std::getenv("S4BXI_CACHE_DIR"); dir && *dir) root = dir;
    else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) root = fs::path(xdg) / "s4bxi";
    else if (const char* home = std::getenv("HOME"); home && *home) root = fs::path(home) / ".cache" / "s4bxi";
    else return {};
    std::error_code ec;
    std::string newest;
    fs::file_time_type newest_time{};
    const std::string suffix = std::string("-") + S4BXI_PORTALS4_H_HASH;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
        std::string name = entry.path().filename().string();
        if (name.rfind("openmpi-", 0) != 0 || !name.ends_with(suffix)) continue;
        fs::path components = entry.path() / "lib" / "openmpi";
        if (!fs::exists(components / "mca_mtl_portals4.so", ec)) continue;
        auto time = fs::last_write_time(components, ec);
        if (newest.empty() || time > newest_time) {
            newest = components.string();
            newest_time = time;
        }
    }
    return newest;
}

Checked<std::string> self_directory()
{
    Checked<std::string> result;
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
        result.error = fmt::format("cannot read /proc/self/exe: {}", ec.message());
        return result;
    }
    result.value = exe.parent_path().string();
    return result;
}

}  // namespace s4bxi::launcher
