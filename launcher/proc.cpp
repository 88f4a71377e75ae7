#include "proc.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include "options.hpp"

namespace s4bxi::launcher {

std::optional<pid_t> parse_stat_ppid(std::string_view stat_line)
{
    size_t close = stat_line.rfind(')');
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view rest = stat_line.substr(close + 1);
    // " S 1234 ..."
    size_t i = 0;
    auto skip_spaces = [&] {
        while (i < rest.size() && rest[i] == ' ') ++i;
    };
    skip_spaces();
    if (i >= rest.size()) return std::nullopt;
    while (i < rest.size() && rest[i] != ' ') ++i;  // state
    skip_spaces();
    size_t begin = i;
    while (i < rest.size() && rest[i] != ' ' && rest[i] != '\n') ++i;
    auto value = parse_integer(rest.substr(begin, i - begin));
    if (!value || *value < 0) return std::nullopt;
    return static_cast<pid_t>(*value);
}

std::vector<pid_t> descendants_in(const std::map<pid_t, pid_t>& parent_of, pid_t root)
{
    std::multimap<pid_t, pid_t> children;
    for (const auto& [pid, ppid] : parent_of) children.emplace(ppid, pid);
    std::vector<pid_t> result;
    std::vector<pid_t> stack{root};
    while (!stack.empty()) {
        pid_t parent = stack.back();
        stack.pop_back();
        auto [first, last] = children.equal_range(parent);
        for (auto it = first; it != last; ++it) {
            if (it->second == root) continue;  // cannot happen, but never loop
            result.push_back(it->second);
            stack.push_back(it->second);
        }
    }
    return result;
}

std::map<pid_t, pid_t> process_table()
{
    std::map<pid_t, pid_t> table;
    DIR* dir = ::opendir("/proc");
    if (!dir) return table;
    while (dirent* entry = ::readdir(dir)) {
        auto pid = parse_integer(entry->d_name);
        if (!pid || *pid <= 0) continue;
        char path[64];
        std::snprintf(path, sizeof path, "/proc/%lld/stat", *pid);
        int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char buffer[1024];
        ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
        ::close(fd);
        if (n <= 0) continue;
        auto ppid = parse_stat_ppid(std::string_view(buffer, static_cast<size_t>(n)));
        if (ppid) table[static_cast<pid_t>(*pid)] = *ppid;
    }
    ::closedir(dir);
    return table;
}

std::vector<pid_t> descendants_of(pid_t root)
{
    return descendants_in(process_table(), root);
}

std::string signal_name(int signal)
{
    const char* abbrev = sigabbrev_np(signal);
    if (abbrev) return fmt::format("SIG{}", abbrev);
    return fmt::format("signal {}", signal);
}

}  // namespace s4bxi::launcher
