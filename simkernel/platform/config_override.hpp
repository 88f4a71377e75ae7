// The effective configuration: the platform file (or the built-in default), then the
// S4BXI_* environment variables, then `--set key=value` (and `--trace DIR`), each value
// remembering where it came from. `s4bxi-launch --print-config` prints the result.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "platform/platform.hpp"
#include "s4bxi/config_keys.hpp"

namespace s4bxi::sim {

// What overrides the platform file, in increasing precedence: environment, then --set
// (in the order given), then --trace.
struct Overrides {
    std::vector<std::pair<std::string, std::string>> env;  // S4BXI_* name, value
    std::vector<std::string> sets;                         // "key=value"
    std::string trace_folder;                              // --trace DIR (empty: not given)
};

// The overrides given to s4bxi-simkernel on its command line (filled by main).
Overrides& command_line_overrides();

// Applies the overrides then finalize_platform(); throws std::runtime_error naming the
// variable or the --set, the key and the value.
void apply_overrides(PlatformSpec& spec, const Overrides& overrides);

// Reads and parses a platform file (empty path: the built-in default platform); throws
// std::runtime_error.
PlatformSpec load_platform_file(const std::string& path);

// Every effective parameter, one per line, as a valid TOML file of dotted keys with the
// origin of each value in a comment ("# default", "# platform file F:12",
// "# environment S4BXI_QUICK_ACKS", "# --set").
std::string format_config(const PlatformSpec& spec);

// The field of `spec` that a key of config::kKeys names (nullptr alternative: unknown key).
using FieldRef = std::variant<std::monostate, bool*, uint32_t*, uint64_t*, double*, std::string*,
                              std::vector<uint32_t>*>;
FieldRef field_of(PlatformSpec& spec, std::string_view key);

// Stores a parsed value into its field; the type must match the key's.
void store(PlatformSpec& spec, const config::Key& key, const config::Parsed& value);

}  // namespace s4bxi::sim
