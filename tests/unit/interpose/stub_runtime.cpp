#include "stub_runtime.hpp"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "s4bxi/time_math.hpp"
#include "threads/lockstep.hpp"

namespace stub {

bool rank = false;
pid_t simulated_tid = 0;
double now = 0.0;
double epoch = 0.0;
std::string node = "node0";
std::vector<double> sleeps;
int yields = 0;
int report_fd = -1;
std::vector<uint32_t> outside_waits;
std::atomic<int64_t> threads_offset{0};

void reset()
{
    rank = true;
    simulated_tid = static_cast<pid_t>(syscall(SYS_gettid));
    now = 0.0;
    epoch = 1700000000.25;
    node = "node0";
    sleeps.clear();
    yields = 0;
    report_fd = -1;
    outside_waits.clear();
    virtual_now_and_publish();
}

}  // namespace stub

namespace s4bxi::interpose {

// No thread of a test runs in lockstep (threads/lockstep.hpp).
thread_local __attribute__((tls_model("initial-exec"))) int t_lockstep_index = -1;
std::atomic<bool> g_lockstep_running{false};

bool is_rank() { return stub::rank; }
int simulated_thread_id() { return stub::rank ? stub::simulated_tid : 0; }
bool on_simulated_thread() { return stub::rank && static_cast<pid_t>(syscall(SYS_gettid)) == stub::simulated_tid; }
double virtual_now()
{
    // As the runtime does: the rank's other threads continue from this reading.
    if (on_simulated_thread()) {
        timespec ts{};
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
        stub::threads_offset = s4bxi::timemath::threads_clock_offset(s4bxi::timemath::seconds_to_ns(stub::now),
                                                                     s4bxi::timemath::timespec_to_ns(ts));
    }
    return stub::now;
}
int64_t threads_clock_offset() { return stub::threads_offset; }
void set_threads_clock_offset(int64_t offset_ns) { stub::threads_offset = offset_ns; }
double virtual_epoch() { return stub::epoch; }
int64_t host_monotonic_ns()
{
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return s4bxi::timemath::timespec_to_ns(ts);
}
void simulated_sleep(double seconds)
{
    stub::sleeps.push_back(seconds);
    stub::now += seconds;
}
void simulated_yield() { ++stub::yields; }
const char* node_name() { return stub::node.c_str(); }
uint64_t thread_cpu_ns()
{
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
double real_monotonic() { return 0.0; }
int create_own_thread(pthread_t* thread, const pthread_attr_t* attributes, void* (*start)(void*), void* argument)
{
    return pthread_create(thread, attributes, start, argument);
}

const wire::Reply& call(wire::Op op, const void* args, uint32_t)
{
    static wire::Reply reply{};
    if (op == wire::Op::OutsideWait) stub::outside_waits.push_back(static_cast<const wire::OutsideWaitArgs*>(args)->kind);
    if (op == wire::Op::Backtrace && stub::report_fd >= 0) {
        const auto* text = static_cast<const wire::TextArgs*>(args);
        (void)!write(stub::report_fd, text->text, text->length);
    }
    return reply;
}

}  // namespace s4bxi::interpose

namespace stub {

double virtual_now_and_publish()
{
    return s4bxi::interpose::virtual_now();
}

}  // namespace stub

// No thread of a test runs in lockstep (threads/lockstep.hpp).
namespace s4bxi::interpose::lockstep {
void yield() {}
int cond_wait(pthread_cond_t*, pthread_mutex_t*, bool) { return ENOSYS; }
int sem_wait(sem_t*, bool) { return ENOSYS; }
int rwlock_lock(pthread_rwlock_t*, bool, bool) { return ENOSYS; }
bool shielded() { return false; }
}  // namespace s4bxi::interpose::lockstep
