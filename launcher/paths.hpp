// File-system checks of s4bxi-launch: the program to run, the platform file, and the two
// siblings installed with the launcher (the simulation server and the preloaded library).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s4bxi::launcher {

// Either a value or the one-line description of why there is none.
template <typename T>
struct Checked {
    std::optional<T> value;
    std::string error;
    explicit operator bool() const { return value.has_value(); }
};

// Resolves a program name like execvp does: a name with a '/' is taken as it is, any other
// is searched in `path_env` (PATH; empty entries mean the current directory). The result
// must be an executable regular file. The error names the program.
Checked<std::string> resolve_program(const std::string& name, const char* path_env);

// The platform file must exist, be a regular file and be readable. Returns its absolute path.
Checked<std::string> check_platform_file(const std::string& file);

// A platform given by name (no '/'), as `--platform quito` or `--platform quito.toml`,
// when no such file is in the current directory: a shipped platform, in `platform_dirs`
// (the installed ones, then the source tree's for a build-tree launcher). Any other value
// is a file name (check_platform_file).
Checked<std::string> find_platform(const std::string& name, const std::vector<std::string>& platform_dirs);

// Where shipped platforms are, for a launcher in `launcher_dir`: datadir/s4bxi/platforms of
// its installation, and the source tree's platforms/ it was built from.
std::vector<std::string> platform_dirs(const std::string& launcher_dir);

struct Siblings {
    std::string simkernel;  // absolute path of s4bxi-simkernel
    std::string library;    // absolute path of libportals.so.4
    // Directory of Open MPI's Portals 4 components, as tools/setup recorded it in
    // <build>/openmpi-portals4-components (empty: not built).
    std::string openmpi_components;
};

// Candidate locations relative to the directory holding s4bxi-launch, first match wins:
// the build tree (../simkernel/s4bxi-simkernel, ../libinterpose/libportals.so.4), then the
// installed layout (relative paths from bindir computed when the build was configured).
struct SiblingLayout {
    std::string build_simkernel = "../simkernel/s4bxi-simkernel";
    std::string build_library = "../libinterpose/libportals.so.4";
    std::string installed_simkernel;
    std::string installed_library;
};
SiblingLayout default_layout();

// launcher_dir: directory of the running s4bxi-launch. Overrides (from --simkernel and
// --preload) are used instead of the search when given.
Checked<Siblings> find_siblings(const std::string& launcher_dir, const SiblingLayout& layout,
                                const std::optional<std::string>& simkernel_override,
                                const std::optional<std::string>& library_override);

// Open MPI's Portals components built by build-openmpi-portals4 for this launcher's
// portals4.h, in the cache it uses (S4BXI_CACHE_DIR, else $XDG_CACHE_HOME/s4bxi, else
// ~/.cache/s4bxi): how an installed launcher finds them. Empty when there are none.
std::string cached_openmpi_components();

// Directory of the running executable (/proc/self/exe).
Checked<std::string> self_directory();

}  // namespace s4bxi::launcher
