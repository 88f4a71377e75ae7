// What the server asks of a rank's process on this machine (remote::Call): its memory
// read or written, its threads' states and figures from /proc, a signal. The answers are
// what the server's own ProcessAccess gives for a rank of its machine.
#pragma once

#include <cstdint>
#include <vector>

#include "s4bxi/remote_wire.hpp"

namespace s4bxi::agent {

// Carries out `call` (with `bytes` to write for WriteMemory); fills `result` and, for
// calls that return bytes, `out`.
void carry_out(const remote::Call& call, const uint8_t* bytes, size_t length, remote::Result& result,
               std::vector<uint8_t>& out);

}  // namespace s4bxi::agent
