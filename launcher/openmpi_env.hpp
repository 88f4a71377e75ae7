#pragma once
// The environment s4bxi-launch gives Open MPI so that every byte between ranks crosses the
// simulated network. Users keep the last word: a variable they set is left alone.

#include <string>
#include <string_view>
#include <vector>

namespace s4bxi::launcher {

struct OpenMpiSetting {
    std::string name;
    std::string value;    // the value the ranks will see
    bool user_set;        // true: taken from the user's environment, not ours
    std::string reason;   // why the launcher sets it
};

// The NAME=value entry of `environment` for `name`, or nullptr.
const std::string* find_value(const std::vector<std::string>& environment, std::string_view name);

// `components` is the directory of the Portals components built by tools/setup (empty when
// they were not built: then only the settings that do not need them are returned).
// `environment` is the launcher's own environment (NAME=value strings).
std::vector<OpenMpiSetting> open_mpi_settings(const std::string& components,
                                              const std::vector<std::string>& environment, bool running_as_root);

}  // namespace s4bxi::launcher
