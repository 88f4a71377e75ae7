// Messages of s4bxi-launch on stderr: "s4bxi-launch: <level>: ...". Errors are always shown.
#pragma once

#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "options.hpp"

namespace s4bxi::launcher::log {

void set_level(LogLevel level);
bool enabled(LogLevel level);
// Writes one line (the prefix, the level word unless `level` is Info, the text).
void line(LogLevel level, std::string_view text);
// Writes text as it is (used for the run summary).
void raw(std::string_view text);

template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args)
{
    line(LogLevel::Error, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void warning(fmt::format_string<Args...> format, Args&&... args)
{
    if (enabled(LogLevel::Warning)) line(LogLevel::Warning, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args)
{
    if (enabled(LogLevel::Info)) line(LogLevel::Info, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args)
{
    if (enabled(LogLevel::Debug)) line(LogLevel::Debug, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace s4bxi::launcher::log
