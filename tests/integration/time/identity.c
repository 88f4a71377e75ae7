/* Prints "rank R host NAME" from gethostname(); checks that uname() agrees and that a
 * second thread sees the same name. Exit status 0 when they agree.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static char from_thread[256];

static void* thread_main(void* unused)
{
    (void)unused;
    if (gethostname(from_thread, sizeof from_thread) != 0) from_thread[0] = '\0';
    return NULL;
}

int main(void)
{
    char name[256];
    struct utsname u;
    if (gethostname(name, sizeof name) != 0 || uname(&u) != 0) {
        perror("identity");
        return 1;
    }
    pthread_t thread;
    pthread_create(&thread, NULL, thread_main, NULL);
    pthread_join(thread, NULL);
    const char* rank = getenv("S4BXI_RANK");
    printf("rank %s host %s\n", rank ? rank : "?", name);
    if (strcmp(name, u.nodename) != 0 || strcmp(name, from_thread) != 0) {
        fprintf(stderr, "identity: gethostname %s, uname %s, other thread %s\n", name, u.nodename, from_thread);
        return 1;
    }
    return 0;
}
