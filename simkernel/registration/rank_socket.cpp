#include "registration/rank_socket.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "registration/machine_link.hpp"
#include "run/context.hpp"
#include "s4bxi/fd_passing.hpp"
#include "s4bxi/rank_hello.hpp"
#include "services/rank_delivery.hpp"

namespace s4bxi::sim {

bool send_welcome(int fd, const wire::Welcome& welcome, int slot_fd, int doorbell_fd)
{
    int fds[2] = {slot_fd, doorbell_fd};
    return wire::send_with_fds(fd, &welcome, sizeof welcome, fds, slot_fd >= 0 ? 2 : 0);
}

void refuse(int fd, const std::string& reason)
{
    wire::refuse_rank(fd, reason.c_str());
}

// The rank's second message: whether it installed the time trap, with its listener fd.
int receive_trap(int fd)
{
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, 10000) <= 0) return -2;
    int32_t kind = 0;
    int trap = -1;
    return wire::receive_with_fds(fd, &kind, sizeof kind, &trap, 1) ? trap : -2;
}

wire::Welcome make_welcome(const RankRecord& rank, uint32_t node_count)
{
    const Config& config = context().config;
    wire::Welcome welcome{};
    welcome.nid = rank.nid;
    welcome.core = rank.core;
    welcome.node_count = node_count;
    welcome.server_pid = getpid();
    // The launcher started the server and the ranks: its descendants are the run's
    // processes. A server adopted by init (its starter gone) names itself.
    pid_t parent = getppid();
    welcome.ptracer_pid = parent > 1 ? parent : getpid();
    welcome.copy_once_from = copy_once_from();
    welcome.cpu_model = static_cast<uint32_t>(config.cpu_model);
    welcome.threads_lockstep = rank.threads_lockstep ? 1 : 0;
    welcome.cpu_factor = config.cpu_factor;
    welcome.cpu_threshold = config.cpu_threshold;
    welcome.epoch = config.epoch;
    welcome.world_size = config.world_size;
    welcome.ranks_per_node = config.ppn;
    std::snprintf(welcome.node_name, sizeof welcome.node_name, "%s", rank.node_name.c_str());
    return welcome;
}

SocketStatus serve_rank_socket(RankRecord& rank, uint32_t node_count)
{
    pollfd pfd{rank.socket_fd, POLLIN, 0};
    if (poll(&pfd, 1, 0) <= 0) return SocketStatus::Quiet;
    wire::Hello hello{};
    ssize_t got = recv(rank.socket_fd, &hello, sizeof hello, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) return SocketStatus::Closed;
    if (got != sizeof hello || !(hello.flags & wire::kHelloReattach) || hello.pid != rank.pid ||
        hello.version != wire::kVersion)
        return SocketStatus::Quiet;  // malformed: ignored, the rank keeps running
    forget_delivery_thread(*rank.slot.object);  // gone with the old image; the new one starts its own
    adopt_new_image(rank, hello);
    if (!send_welcome(rank.socket_fd, make_welcome(rank, node_count), rank.slot.fd, context().doorbell.fd))
        return SocketStatus::Closed;
    int trap = receive_trap(rank.socket_fd);
    if (trap >= 0) close(trap);  // the filter of the first image still serves this one
    return trap == -2 ? SocketStatus::Closed : SocketStatus::Reattached;
}

void adopt_new_image(RankRecord& rank, const wire::Hello& hello)
{
    rank.tid = hello.tid;
    rank.thread_cpu = rank.process().thread_cpu_clock(rank.pid, rank.tid);
    // The new image may be an OpenSHMEM program (a wrapper exec'd it).
    const Config& config = context().config;
    bool openshmem = hello.flags & wire::kHelloOpenShmem;
    rank.memory_waits = rank.memory_waits || config.applies(config.memory_waits, openshmem);
    rank.threads_lockstep = rank.threads_lockstep || config.applies(config.lockstep, openshmem);
}

SocketStatus serve_rank(RankRecord& rank, uint32_t node_count)
{
    return rank.machine ? rank.machine->serve_rank(rank) : serve_rank_socket(rank, node_count);
}

}  // namespace s4bxi::sim
