// Process-tree helpers: finding every descendant of the launcher through /proc.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace s4bxi::launcher {

// Parent pid from the contents of /proc/PID/stat ("pid (comm) state ppid ..."); the command
// name may contain spaces and parentheses, so parsing starts after the last ')'.
std::optional<pid_t> parse_stat_ppid(std::string_view stat_line);

// All processes whose parent chain reaches `root`, given a pid -> parent pid table.
std::vector<pid_t> descendants_in(const std::map<pid_t, pid_t>& parent_of, pid_t root);

// pid -> parent pid of every process visible in /proc.
std::map<pid_t, pid_t> process_table();

// Live descendants of `root` (the launcher itself by default).
std::vector<pid_t> descendants_of(pid_t root);

// Signal name as in "SIGSEGV" (or "signal 42").
std::string signal_name(int signal);

}  // namespace s4bxi::launcher
