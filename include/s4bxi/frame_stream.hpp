// Frames (remote_wire.hpp) over a connected stream socket between the server and an
// agent: whole frames, one writer at a time (several threads of a side send), and a reader
// that takes them one by one.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "s4bxi/remote_wire.hpp"

namespace s4bxi::remote {

// The next `T` of a frame's body from `at` on; false when the body is too short.
template <class T>
bool take(const std::vector<uint8_t>& body, size_t& at, T& value)
{
    if (body.size() < at || body.size() - at < sizeof value) return false;
    std::memcpy(&value, body.data() + at, sizeof value);
    at += sizeof value;
    return true;
}

struct Part {
    const void* bytes;
    size_t length;
};

class FrameStream {
public:
    explicit FrameStream(int fd) : fd_(fd) {}
    FrameStream(const FrameStream&) = delete;
    FrameStream& operator=(const FrameStream&) = delete;

    int fd() const { return fd_; }
    // The last receive() found nothing within the socket's receive timeout.
    bool timed_out() const { return timed_out_; }

    // Sends one frame whose body is `parts` end to end. False when the peer is gone.
    bool send(Kind kind, std::initializer_list<Part> parts)
    {
        FrameHeader header;
        header.kind = static_cast<uint16_t>(kind);
        size_t length = 0;
        for (const Part& part : parts) length += part.length;
        if (length > kMaxBody) return false;
        header.length = static_cast<uint32_t>(length);
        iovec pieces[8];
        int count = 0;
        pieces[count++] = {&header, sizeof header};
        for (const Part& part : parts)
            if (part.length > 0 && count < 8) pieces[count++] = {const_cast<void*>(part.bytes), part.length};
        std::lock_guard<std::mutex> hold(send_);
        return send_all(pieces, count);
    }

    // Blocks until a whole frame came. False when the stream ended, the frame is
    // malformed, or (with a receive timeout on the socket, SO_RCVTIMEO) nothing came
    // before it: `problem` then says which (empty: the peer closed between frames; the
    // timeout: timed_out()).
    bool receive(FrameHeader& header, std::vector<uint8_t>& body, std::string& problem)
    {
        problem.clear();
        timed_out_ = false;
        if (!read_all(&header, sizeof header, true)) {
            if (!at_end_ && !timed_out_) problem = "the stream ended inside a frame";
            return false;
        }
        if (problem = frame_problem(header); !problem.empty()) return false;
        body.resize(header.length);
        if (header.length > 0 && !read_all(body.data(), header.length, false)) {
            problem = "the stream ended inside a frame";
            return false;
        }
        return true;
    }

    // receive(), but a silence of the peer's is answered with a beat every kBeatSeconds
    // (the socket's receive timeout: time_out_receives) and taken for its loss after
    // kSilenceSeconds, which `problem` then says, naming the peer as `who`.
    bool receive_or_beat(FrameHeader& header, std::vector<uint8_t>& body, std::string& problem, const char* who)
    {
        for (int silent = 0;;) {
            if (receive(header, body, problem)) return true;
            if (!timed_out()) return false;
            if (++silent >= kSilenceSeconds) {
                problem = std::string("no word from ") + who + " for " + std::to_string(kSilenceSeconds) +
                          " s (a network partition, or it stopped)";
                return false;
            }
            send(Kind::Beat, {});
        }
    }

private:
    bool send_all(iovec* pieces, int count)
    {
        while (count > 0) {
            msghdr message{};
            message.msg_iov = pieces;
            message.msg_iovlen = static_cast<size_t>(count);
            ssize_t sent = sendmsg(fd_, &message, MSG_NOSIGNAL);
            if (sent < 0) {
                if (errno == EINTR) continue;
                return false;
            }
            auto left = static_cast<size_t>(sent);
            while (count > 0 && left >= pieces->iov_len) {
                left -= pieces->iov_len;
                ++pieces;
                --count;
            }
            if (count > 0) {
                pieces->iov_base = static_cast<char*>(pieces->iov_base) + left;
                pieces->iov_len -= left;
            }
        }
        return true;
    }

    // `between_frames`: an end before the first byte is the peer's orderly close, and a
    // timeout there is timed_out(). Inside a frame, the rest is waited for (kMidFrameWaits
    // timeouts at most).
    bool read_all(void* into, size_t size, bool between_frames)
    {
        auto* bytes = static_cast<char*>(into);
        size_t got_total = 0;
        int waits = 0;
        while (got_total < size) {
            ssize_t got = recv(fd_, bytes + got_total, size - got_total, 0);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                if (between_frames && got_total == 0) {
                    timed_out_ = true;
                    return false;
                }
                if (++waits < kMidFrameWaits) continue;
            }
            if (got <= 0) {
                at_end_ = between_frames && got_total == 0;
                return false;
            }
            got_total += static_cast<size_t>(got);
        }
        return true;
    }

    static constexpr int kMidFrameWaits = 10;
    int fd_;
    bool at_end_ = false;
    bool timed_out_ = false;
    std::mutex send_;
};

}  // namespace s4bxi::remote
