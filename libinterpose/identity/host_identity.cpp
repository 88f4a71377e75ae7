// A rank sees the name of its simulated node (node_name()) as its host name, on every
// thread: gethostname() and uname().nodename. Other processes see the real host.
#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"

#define S4BXI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace s4bxi::interpose;

int real_uname(struct utsname* buf)
{
    using Fn = int (*)(struct utsname*);
    static std::atomic<Fn> cache{nullptr};
    Fn fn = cache.load(std::memory_order_acquire);
    if (!fn) {
        fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "uname"));
        cache.store(fn, std::memory_order_release);
    }
    return fn ? fn(buf) : static_cast<int>(syscall(SYS_uname, buf));
}

template <class T>
T* opaque(T* pointer)
{
    asm volatile("" : "+r"(pointer));
    return pointer;
}

}  // namespace

S4BXI_EXPORT int uname(struct utsname* buf) noexcept
{
    int rc = real_uname(buf);
    if (rc == 0 && is_rank()) {
        const char* node = node_name();
        size_t length = strnlen(node, sizeof buf->nodename - 1);
        memcpy(buf->nodename, node, length);
        buf->nodename[length] = '\0';
    }
    return rc;
}

// As glibc's: copies what fits, and fails with ENAMETOOLONG when the name (with its NUL)
// does not fit in `length`.
S4BXI_EXPORT int gethostname(char* name, size_t length) noexcept
{
    struct utsname buf;
    if (uname(&buf) != 0) return -1;
    name = opaque(name);
    size_t needed = strlen(buf.nodename) + 1;
    memcpy(name, buf.nodename, length < needed ? length : needed);
    if (needed > length) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

// What programs built with _FORTIFY_SOURCE (as Debian builds them) call instead of
// gethostname(); glibc's own goes to its internal gethostname, not to ours.
extern "C" [[noreturn]] void __chk_fail(void);

S4BXI_EXPORT int __gethostname_chk(char* name, size_t length, size_t buffer_size) noexcept
{
    if (length > buffer_size) __chk_fail();
    return gethostname(name, length);
}
