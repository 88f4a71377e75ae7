// s4bxi-agent --socket PATH --server HOST:PORT (the run's secret in S4BXI_RUN_SECRET): the
// agent of one machine of a run whose server is on another (docs/multi-host.md). Started
// by the first rank of the run on this machine; a second one finds the socket taken and
// leaves. It ends when the server says the run is over or is gone.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "local_ranks.hpp"
#include "payload_peers.hpp"
#include "s4bxi/remote_wire.hpp"
#include "server_link.hpp"
#include "services/seccomp_supervisor.hpp"

namespace {

using namespace s4bxi;

[[noreturn]] void fail(const std::string& why)
{
    std::fprintf(stderr, "s4bxi-agent: error: %s\n", why.c_str());
    std::exit(1);
}

// mkdir -p of the run directory (the ranks' S4BXI_SOCKET names a file in it), private.
void make_folders(const std::string& path)
{
    for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1))
        mkdir(path.substr(0, at).c_str(), 0700);
}

// Binds the run's registration socket; -1 when another agent of this run serves it.
int bind_registration(const std::string& path)
{
    make_folders(path);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) fail("socket path too long: " + path);
    std::strcpy(address.sun_path, path.c_str());
    for (int attempt = 0; attempt < 2; ++attempt) {
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0) fail(std::string("cannot create a socket: ") + std::strerror(errno));
        if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
            chmod(path.c_str(), 0600);
            if (listen(fd, 256) != 0) fail("cannot listen on " + path + ": " + std::strerror(errno));
            return fd;
        }
        int error = errno;
        close(fd);
        if (error != EADDRINUSE) fail("cannot bind " + path + ": " + std::strerror(error));
        // Taken: by a live agent (it accepts), or left by a dead one.
        int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        bool live = connect(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
        close(probe);
        if (live) return -1;
        unlink(path.c_str());
    }
    fail("cannot bind " + path);
}

std::string option(int argc, char** argv, const char* name)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
    fail(std::string("missing ") + name + " (usage: s4bxi-agent --socket PATH --server HOST:PORT)");
}

}  // namespace

int main(int argc, char** argv)
{
    signal(SIGPIPE, SIG_IGN);
    std::string socket_path = option(argc, argv, "--socket");
    std::string server_address = option(argc, argv, "--server");
    const char* secret = std::getenv(remote::kSecretVariable);
    if (!secret || !remote::secret_well_formed(secret)) fail(std::string(remote::kSecretVariable) + " is missing or malformed");
    std::string kept = secret;
    unsetenv(remote::kSecretVariable);

    int listen_fd = bind_registration(socket_path);
    if (listen_fd < 0) return 0;  // this machine has its agent
    std::unique_ptr<remote::FrameStream> server;
    try {
        server = agent::connect_to_server(server_address, kept);
    } catch (const std::exception& error) {
        unlink(socket_path.c_str());
        fail(error.what());
    }
    std::unique_ptr<agent::PayloadPeers> peers;
    try {
        peers = std::make_unique<agent::PayloadPeers>(agent::local_address(*server), kept);
    } catch (const std::exception& error) {
        unlink(socket_path.c_str());
        fail(error.what());
    }
    server->send(remote::Kind::PayloadAddress, {{peers->address().data(), peers->address().size()}});
    sim::SeccompSupervisor trap;  // outlives the ranks' channels
    agent::LocalRanks ranks(*server, trap);
    std::atomic<bool> stop{false};
    std::thread relay([&] { ranks.relay(stop); });
    std::thread registrations([&] { ranks.serve_registrations(listen_fd, stop); });
    std::string why = agent::serve_server(*server, ranks, *peers);
    stop = true;
    ranks.ring();
    relay.join();
    registrations.join();
    close(listen_fd);
    unlink(socket_path.c_str());
    if (!why.empty()) {
        std::fprintf(stderr, "s4bxi-agent: the run ended: %s\n", why.c_str());
        return 1;
    }
    // A run that ended well leaves nothing on this machine: the run directory held the
    // socket and this agent's log (the ranks' first one created it).
    std::string folder = socket_path.substr(0, socket_path.rfind('/'));
    unlink((folder + "/agent.log").c_str());
    rmdir(folder.c_str());
    return 0;
}
