// pthread_create: the server learns that the program started a thread before that thread
// has made any call (wire::Slot::threads_created), so that a wait for what the new thread
// will bring is not taken for a deadlock while the thread is on its way.
#include <dlfcn.h>
#include <pthread.h>

#include "runtime.hpp"

namespace s4bxi::interpose {

int create_own_thread(pthread_t* thread, const pthread_attr_t* attributes, void* (*start)(void*), void* argument)
{
    using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
    static const auto next = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
    return next(thread, attributes, start, argument);
}

}  // namespace s4bxi::interpose

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attributes,
                                                                     void* (*start)(void*), void* argument)
{
    // Counted once it exists, before its creator goes on (to a wait, say): the server,
    // seeing the count move, finds the thread in /proc.
    int rc = s4bxi::interpose::create_own_thread(thread, attributes, start, argument);
    if (rc == 0) s4bxi::interpose::count_thread_created();
    return rc;
}
