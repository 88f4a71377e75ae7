// A rank's host name is its simulated node's (host_identity.cpp), and programs look names
// up: their own, to find an address to listen on or to print; a peer's, from
// MPI_Get_processor_name. No resolver knows "node3", so the simulated node names resolve
// to the loopback host here, where every rank really runs. Any other name goes to libc.
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <sys/socket.h>

#include <atomic>
#include <cstring>

#include "runtime.hpp"

#define S4BXI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace s4bxi::interpose;

// "node" followed by decimal digits: the names the server gives the simulated nodes.
bool simulated_node_name(const char* name)
{
    if (!name || !is_rank() || strncmp(name, "node", 4) != 0 || !name[4]) return false;
    for (const char* c = name + 4; *c; ++c)
        if (*c < '0' || *c > '9') return false;
    return true;
}

// The name to give libc instead: one /etc/hosts and every resolver know.
const char* resolvable(const char* name)
{
    return simulated_node_name(name) ? "localhost" : name;
}

// libc's own function, looked up once per caller (`cache` is the caller's).
template <class Fn>
Fn real(std::atomic<void*>& cache, const char* symbol)
{
    void* fn = cache.load(std::memory_order_acquire);
    if (!fn) {
        fn = dlsym(RTLD_NEXT, symbol);
        cache.store(fn, std::memory_order_release);
    }
    return reinterpret_cast<Fn>(fn);
}

}  // namespace

S4BXI_EXPORT int getaddrinfo(const char* node, const char* service, const struct addrinfo* hints,
                             struct addrinfo** result)
{
    using Fn = int (*)(const char*, const char*, const struct addrinfo*, struct addrinfo**);
    static std::atomic<void*> cache{nullptr};
    auto fn = real<Fn>(cache, "getaddrinfo");
    return fn ? fn(resolvable(node), service, hints, result) : EAI_SYSTEM;
}

S4BXI_EXPORT struct hostent* gethostbyname(const char* name)
{
    using Fn = struct hostent* (*)(const char*);
    static std::atomic<void*> cache{nullptr};
    auto fn = real<Fn>(cache, "gethostbyname");
    return fn ? fn(resolvable(name)) : nullptr;
}

S4BXI_EXPORT struct hostent* gethostbyname2(const char* name, int family)
{
    using Fn = struct hostent* (*)(const char*, int);
    static std::atomic<void*> cache{nullptr};
    auto fn = real<Fn>(cache, "gethostbyname2");
    return fn ? fn(resolvable(name), family) : nullptr;
}

S4BXI_EXPORT int gethostbyname_r(const char* name, struct hostent* entry, char* buffer, size_t length,
                                 struct hostent** result, int* error)
{
    using Fn = int (*)(const char*, struct hostent*, char*, size_t, struct hostent**, int*);
    static std::atomic<void*> cache{nullptr};
    auto fn = real<Fn>(cache, "gethostbyname_r");
    return fn ? fn(resolvable(name), entry, buffer, length, result, error) : ENOSYS;
}

S4BXI_EXPORT int gethostbyname2_r(const char* name, int family, struct hostent* entry, char* buffer, size_t length,
                                  struct hostent** result, int* error)
{
    using Fn = int (*)(const char*, int, struct hostent*, char*, size_t, struct hostent**, int*);
    static std::atomic<void*> cache{nullptr};
    auto fn = real<Fn>(cache, "gethostbyname2_r");
    return fn ? fn(resolvable(name), family, entry, buffer, length, result, error) : ENOSYS;
}
