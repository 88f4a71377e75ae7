// What crosses the network between the server and the agents of the machines of ranks
// that are not on its own (docs/multi-host.md): frames over a TCP stream, the first of
// which proves that the peer belongs to this run.
//
// Fixed-size fields, little-endian as both sides are (x86-64 and aarch64 Linux); the
// version is wire::kVersion, so a peer built from another s4bxi is refused with both
// numbers named.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "s4bxi/wire.hpp"

namespace s4bxi::remote {

inline constexpr uint32_t kMagic = 0x58423453;  // "S4BX" in a little-endian dump
// The run's secret: 32 random bytes in hex, created by the launcher, handed to the ranks
// in their environment (never on a command line, which `ps` shows on any machine).
inline constexpr size_t kSecretChars = 64;
inline constexpr const char* kSecretVariable = "S4BXI_RUN_SECRET";
// How long a peer may take to send its greeting before it is refused.
inline constexpr double kGreetingSeconds = 5.0;

enum class Kind : uint16_t {
    Hello = 1,        // agent -> server, first: Hello
    Answer = 2,       // server -> agent: Answer
    RankHello = 3,    // agent -> server: a rank registers on the agent's machine (wire::Hello)
    RankWelcome = 4,  // server -> agent: RankHeader + wire::Welcome (status != 0: refused)
    Delta = 5,        // both ways: RankHeader + a channel delta (channel_sync.hpp)
    RankGone = 6,     // agent -> server: RankHeader (status: how it ended, RankGoneStatus)
    Call = 7,         // server -> agent: Call + bytes to write (Op::WriteMemory)
    Result = 8,       // agent -> server: Result + bytes read
    Bye = 9,          // server -> agent: the run is over
    Beat = 10,        // both ways, after kBeatSeconds without a frame: still there
    PayloadAddress = 11,  // agent -> server, after its greeting: where other agents reach it (text)
};

// Each side sends a beat after kBeatSeconds of silence from the other, and takes the
// other for lost after kSilenceSeconds without a frame: a machine cut off by the network
// is seen within the server's deadlock timeout.
inline constexpr int kBeatSeconds = 1;
inline constexpr int kSilenceSeconds = 10;

// Which rank a frame is about, and a status where the kind has one.
struct RankHeader {
    int32_t rank = -1;
    int32_t status = 0;
};

// How a rank's registration socket ended, as the agent saw it.
enum class RankGoneStatus : int32_t { Closed = 1 };

// What the server asks of a rank's process on the agent's machine (the server's
// ProcessAccess, simkernel/host/): answered in order, one Result each.
enum class CallOp : uint32_t {
    ReadMemory = 1,      // address, length -> the bytes (value: 1 when all were read)
    WriteMemory = 2,     // address, the bytes -> value 1 when all were written
    ThreadState = 3,     // tid -> value: the scheduler state letter, 0 if unreadable
    ReadThreadFile = 4,  // tid, name -> the text (value: 1 when read)
    ListThreads = 5,     // -> the thread ids, int32 each
    PeakResident = 6,    // -> value: VmHWM in bytes
    InvoluntarySwitches = 7,  // tid -> value
    Signal = 8,          // length: the signal -> value 1 when sent
    ThreadAlive = 9,     // tid -> value 1 while it exists
    ThreadCpu = 10,      // tid -> value: CPU ns; extra: page faults
    // address, length, then a MoveTarget: the bytes go from this process to the target's,
    // on this machine or straight to the agent of the target's (value 1 when all moved).
    Move = 11,
};

// Where a Move's bytes go: a process of this machine (`machine` empty) or of the machine
// whose agent listens at `machine` ("HOST:PORT", remote::Kind::PayloadAddress).
struct MoveTarget {
    int32_t pid = 0;
    uint32_t reserved = 0;
    uint64_t address = 0;
    char machine[64] = {};
};
static_assert(sizeof(MoveTarget) == 80);

struct Call {
    uint64_t id = 0;
    uint32_t op = 0;  // CallOp
    int32_t pid = 0;
    int32_t tid = 0;
    uint32_t reserved = 0;
    uint64_t address = 0;
    uint64_t length = 0;
    char name[32] = {};  // ReadThreadFile
};
static_assert(sizeof(Call) == 72);

struct Result {
    uint64_t id = 0;
    int64_t value = 0;
    uint64_t extra = 0;
};
static_assert(sizeof(Result) == 24);

// Sets the socket's receive timeout to kBeatSeconds (FrameStream::timed_out()).
inline void time_out_receives(int fd)
{
    timeval beat{kBeatSeconds, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &beat, sizeof beat);
}

// The largest frame body either side accepts: a channel delta is at most the channel,
// a memory transfer at most what one call moves (the server splits larger ones).
inline constexpr uint32_t kMaxBody = 64u << 20;
inline constexpr uint64_t kMaxTransfer = 16u << 20;

struct FrameHeader {
    uint32_t magic = kMagic;
    uint32_t version = wire::kVersion;
    uint16_t kind = 0;
    uint16_t reserved = 0;
    uint32_t length = 0;  // bytes of the body that follows
};
static_assert(sizeof(FrameHeader) == 16);

// The first frame of a peer: who it is and the run's secret.
struct Hello {
    char secret[kSecretChars] = {};
    char machine[64] = {};  // its host name, for the server's messages
    uint32_t rank = 0;
    uint32_t pid = 0;
};
static_assert(sizeof(Hello) == 136);

// The server's answer to a Hello that proved itself.
struct Answer {
    int32_t accepted = 0;  // 0: refused, `message` says why
    char message[252] = {};
};
static_assert(sizeof(Answer) == 256);

inline bool secret_well_formed(std::string_view secret)
{
    if (secret.size() != kSecretChars) return false;
    for (char c : secret)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

// Compares in a time that does not depend on where the two differ: a peer cannot guess
// the secret a character at a time from how long its refusal takes.
inline bool same_secret(std::string_view expected, const char (&offered)[kSecretChars])
{
    if (expected.size() != kSecretChars) return false;
    unsigned char difference = 0;
    for (size_t i = 0; i < kSecretChars; ++i)
        difference |= static_cast<unsigned char>(expected[i] ^ offered[i]);
    return difference == 0;
}

// A greeting with the run's secret, all of its 64 characters (no NUL: the field is exact).
inline Hello greeting(std::string_view secret)
{
    Hello hello;
    std::memcpy(hello.secret, secret.data(), std::min(secret.size(), sizeof hello.secret));
    return hello;
}

// What is wrong with a greeting's header, or empty.
inline std::string header_problem(const FrameHeader& header)
{
    if (header.magic != kMagic) return "not an s4bxi peer (no magic number)";
    if (header.version != wire::kVersion)
        return "built from another s4bxi (protocol " + std::to_string(header.version) + ", this server " +
               std::to_string(wire::kVersion) + ")";
    if (header.kind != static_cast<uint16_t>(Kind::Hello) || header.length != sizeof(Hello))
        return "its first frame is not a greeting";
    return {};
}

// What is wrong with a later frame's header, or empty.
inline std::string frame_problem(const FrameHeader& header)
{
    if (header.magic != kMagic) return "a frame without the magic number (the stream is out of step)";
    if (header.version != wire::kVersion) return "a frame of another protocol version";
    if (header.kind < static_cast<uint16_t>(Kind::Hello) || header.kind > static_cast<uint16_t>(Kind::PayloadAddress))
        return "a frame of unknown kind " + std::to_string(header.kind);
    if (header.length > kMaxBody) return "a frame of " + std::to_string(header.length) + " bytes, over the limit";
    return {};
}

// A field of fixed size as text: up to its first NUL.
template <size_t N>
std::string text_of(const char (&field)[N])
{
    return std::string(field, strnlen(field, N));
}

template <size_t N>
void set_text(char (&field)[N], std::string_view text)
{
    std::memset(field, 0, N);
    std::memcpy(field, text.data(), std::min(text.size(), N - 1));
}

}  // namespace s4bxi::remote
