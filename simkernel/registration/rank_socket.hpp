// A rank's unix socket after registration: liveness (EOF = the rank is gone) and
// re-attachment of a rank that exec'd a new program image.
#pragma once

#include <cstdint>
#include <string>

#include "run/registry.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

wire::Welcome make_welcome(const RankRecord& rank, uint32_t node_count);
bool send_welcome(int fd, const wire::Welcome& welcome, int slot_fd, int doorbell_fd);
void refuse(int fd, const std::string& reason);

// The rank's second registration message: the listener fd of its time trap (-1 if it
// has none), or -2 if the message never came.
int receive_trap(int fd);

enum class SocketStatus { Quiet, Reattached, Closed };

// Non-blocking: answers a re-attach request if one is pending.
SocketStatus serve_rank_socket(RankRecord& rank, uint32_t node_count);

// The same for any rank: its socket on this machine, or what the agent of its machine
// said of it (a re-attach it answered, the end of its socket).
SocketStatus serve_rank(RankRecord& rank, uint32_t node_count);

// A rank exec'd a new program (a wrapper script, a shim), which said hello anew: its
// simulated thread, and what the new program asks for (an OpenSHMEM program's memory
// waits and lockstep).
void adopt_new_image(RankRecord& rank, const wire::Hello& hello);

}  // namespace s4bxi::sim
