// A rank's host name is its simulated node's (host_identity.cpp), and programs look names
// up: their own, to find an address to listen on or to print; a peer's, from
// MPI_Get_processor_name. No resolver knows "node3", so the simulated node names resolve
// to the loopback host here, where every rank really runs. Any other name goes to libc.
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cstring>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"

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

// The definition that `Self` (one of ours below) hides: libc's, looked up once.
template <auto Self>
decltype(Self) next(const char* symbol)
{
    static const auto fn = reinterpret_cast<decltype(Self)>(dlsym(RTLD_NEXT, symbol));
    return fn;
}

}  // namespace

S4BXI_EXPORT int getaddrinfo(const char* node, const char* service, const struct addrinfo* hints,
                             struct addrinfo** result)
{
    auto fn = next<getaddrinfo>("getaddrinfo");
    return fn ? fn(resolvable(node), service, hints, result) : EAI_SYSTEM;
}

S4BXI_EXPORT struct hostent* gethostbyname(const char* name)
{
    auto fn = next<gethostbyname>("gethostbyname");
    return fn ? fn(resolvable(name)) : nullptr;
}

S4BXI_EXPORT struct hostent* gethostbyname2(const char* name, int family)
{
    auto fn = next<gethostbyname2>("gethostbyname2");
    return fn ? fn(resolvable(name), family) : nullptr;
}

S4BXI_EXPORT int gethostbyname_r(const char* name, struct hostent* entry, char* buffer, size_t length,
                                 struct hostent** result, int* error)
{
    auto fn = next<gethostbyname_r>("gethostbyname_r");
    return fn ? fn(resolvable(name), entry, buffer, length, result, error) : ENOSYS;
}

S4BXI_EXPORT int gethostbyname2_r(const char* name, int family, struct hostent* entry, char* buffer, size_t length,
                                  struct hostent** result, int* error)
{
    auto fn = next<gethostbyname2_r>("gethostbyname2_r");
    return fn ? fn(resolvable(name), family, entry, buffer, length, result, error) : ENOSYS;
}
