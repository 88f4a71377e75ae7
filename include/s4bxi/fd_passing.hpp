// One message with file descriptors attached (SCM_RIGHTS), over the registration socket:
// how the server hands a rank its channel and how a rank hands over its trap.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>

namespace s4bxi::wire {

inline constexpr int kMaxPassedFds = 2;

// Sends `size` bytes with `count` descriptors (0 .. kMaxPassedFds). True if all was sent.
inline bool send_with_fds(int socket_fd, const void* data, size_t size, const int* fds, int count)
{
    iovec iov{const_cast<void*>(data), size};
    alignas(cmsghdr) char control[CMSG_SPACE(kMaxPassedFds * sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (count > 0) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(count * sizeof(int));
        cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(count * sizeof(int));
        std::memcpy(CMSG_DATA(cmsg), fds, count * sizeof(int));
    }
    return sendmsg(socket_fd, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(size);
}

// Receives exactly `size` bytes and up to `count` descriptors (missing ones are -1,
// received ones close-on-exec). Returns false on a short or failed read.
inline bool receive_with_fds(int socket_fd, void* data, size_t size, int* fds, int count)
{
    iovec iov{data, size};
    alignas(cmsghdr) char control[CMSG_SPACE(kMaxPassedFds * sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t got;
    do {
        got = recvmsg(socket_fd, &msg, MSG_CMSG_CLOEXEC);
    } while (got < 0 && errno == EINTR);
    for (int i = 0; i < count; ++i) fds[i] = -1;
    for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
        if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
        int passed = static_cast<int>((cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < passed && i < count; ++i) std::memcpy(&fds[i], CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
    }
    return got == static_cast<ssize_t>(size);
}

}  // namespace s4bxi::wire
