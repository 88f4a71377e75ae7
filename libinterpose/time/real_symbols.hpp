// libc's own definitions of the calls this library interposes, found once (dlsym
// RTLD_NEXT) and cached; and a way to keep the compiler from trusting libc's nonnull
// declarations. For the interposers of time/ and threads/.
#pragma once

#include <dlfcn.h>

#include <atomic>

namespace s4bxi::interpose {

// Set while this thread is inside dlsym: a clock call made from there gets the raw syscall.
inline __attribute__((tls_model("initial-exec"))) thread_local bool t_resolving = false;

template <class Fn>
Fn resolve(std::atomic<Fn>& cache, const char* name)
{
    Fn fn = cache.load(std::memory_order_acquire);
    if (fn || t_resolving) return fn;
    t_resolving = true;
    fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
    t_resolving = false;
    cache.store(fn, std::memory_order_release);
    return fn;
}

#define REAL(name, ...)                                              \
    ([]() {                                                          \
        using Fn = __VA_ARGS__;                                      \
        static std::atomic<Fn> cache{nullptr};                       \
        return resolve<Fn>(cache, #name);                            \
    }())

// Hides a pointer from the compiler: libc declares some of these parameters nonnull, and
// GCC would otherwise drop our NULL checks (which real callers do exercise).
template <class T>
T* opaque(T* pointer)
{
    asm volatile("" : "+r"(pointer));
    return pointer;
}

}  // namespace s4bxi::interpose
