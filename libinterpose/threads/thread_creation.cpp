// pthread_create: the server learns that the program started a thread before that thread
// has made any call (wire::Slot::threads_created), so that a wait for what the new thread
// will bring is not taken for a deadlock while the thread is on its way; and a thread of an
// OpenSHMEM program joins its rank's lockstep (threads/lockstep.hpp).
#include <pthread.h>

#include "rank/rank_state.hpp"
#include "threads/lockstep.hpp"

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attributes,
                                                                     void* (*start)(void*), void* argument)
{
    // Counted once it exists, before its creator goes on (to a wait, say): the server,
    // seeing the count move, finds the thread in /proc.
    namespace lockstep = s4bxi::interpose::lockstep;
    lockstep::Start how = lockstep::before_create(start, argument);
    int rc = s4bxi::interpose::create_own_thread(thread, attributes, how.start, how.argument);
    lockstep::after_create(how, rc, rc == 0 ? *thread : pthread_t{});
    if (rc == 0) s4bxi::interpose::count_thread_created();
    return rc;
}
