#include "time_trap.hpp"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace s4bxi::agent {

TimeTrap::TimeTrap()
{
    if (pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
    thread_ = std::thread([this] { serve(); });
}

TimeTrap::~TimeTrap()
{
    stop_ = true;
    char byte = 1;
    (void)!write(wake_[1], &byte, 1);
    if (thread_.joinable()) thread_.join();
    for (int fd : listeners_) close(fd);
    close(wake_[0]);
    close(wake_[1]);
}

void TimeTrap::add(int listener)
{
    {
        std::lock_guard<std::mutex> hold(mutex_);
        listeners_.push_back(listener);
    }
    char byte = 1;
    (void)!write(wake_[1], &byte, 1);
}

void TimeTrap::serve()
{
    while (!stop_) {
        std::vector<pollfd> watched{{wake_[0], POLLIN, 0}};
        {
            std::lock_guard<std::mutex> hold(mutex_);
            for (int fd : listeners_) watched.push_back({fd, POLLIN, 0});
        }
        if (poll(watched.data(), watched.size(), -1) < 0 && errno != EINTR) return;
        if (watched[0].revents) {
            char bytes[64];
            (void)!read(wake_[0], bytes, sizeof bytes);
        }
        for (size_t i = 1; i < watched.size(); ++i) {
            if (watched[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {  // the rank is gone
                std::lock_guard<std::mutex> hold(mutex_);
                std::erase(listeners_, watched[i].fd);
                close(watched[i].fd);
                continue;
            }
            if (!(watched[i].revents & POLLIN)) continue;
            seccomp_notif notification;
            std::memset(&notification, 0, sizeof notification);
            if (ioctl(watched[i].fd, SECCOMP_IOCTL_NOTIF_RECV, &notification) != 0) continue;
            seccomp_notif_resp response;
            std::memset(&response, 0, sizeof response);
            response.id = notification.id;
            response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            ioctl(watched[i].fd, SECCOMP_IOCTL_NOTIF_SEND, &response);
        }
    }
}

}  // namespace s4bxi::agent
