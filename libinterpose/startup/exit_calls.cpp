// _exit and _Exit: the rank tells the server it finished before the process goes.
#include <sys/syscall.h>
#include <unistd.h>

#include "startup/registration.hpp"

// Programs that end with _exit (dash, forked helpers, some runtimes) skip on_exit
// handlers: the rank must still tell the server it finished, with its status.
extern "C" __attribute__((visibility("default"), noreturn)) void _exit(int status)
{
    s4bxi::interpose::finish_rank(status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

extern "C" __attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
    _exit(status);
}
