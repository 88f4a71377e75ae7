#include "log.hpp"

#include <cerrno>
#include <string>

#include <unistd.h>

namespace s4bxi::launcher::log {

namespace {
LogLevel g_level = LogLevel::Warning;

void write_all(std::string_view text)
{
    // Unbuffered and in one write() where possible, so lines do not interleave with the
    // output of the children sharing our stderr.
    while (!text.empty()) {
        ssize_t written = ::write(STDERR_FILENO, text.data(), text.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            return;
        }
        text.remove_prefix(static_cast<size_t>(written));
    }
}
}  // namespace

void set_level(LogLevel level)
{
    g_level = level;
}

bool enabled(LogLevel level)
{
    return static_cast<int>(level) <= static_cast<int>(g_level);
}

void line(LogLevel level, std::string_view text)
{
    std::string out = "s4bxi-launch: ";
    if (level != LogLevel::Info) {
        out += to_string(level);
        out += ": ";
    }
    out += text;
    out += '\n';
    write_all(out);
}

void raw(std::string_view text)
{
    write_all(text);
}

}  // namespace s4bxi::launcher::log
