/* Prints "rank R host NAME" from gethostname(); checks that uname() agrees, that a second
 * thread sees the same name, and that the name, and another simulated node's, resolve
 * (getaddrinfo, gethostbyname, gethostbyname_r) to a loopback address. Exit status 0 when
 * all hold.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
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

/* 0 when `name` resolves, through every lookup function, to loopback addresses only. */
static int resolves_to_loopback(const char* name)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct addrinfo* found = NULL;
    int rc = getaddrinfo(name, "4000", &hints, &found);
    if (rc != 0) {
        fprintf(stderr, "identity: getaddrinfo(%s): %s\n", name, gai_strerror(rc));
        return 1;
    }
    int bad = 0;
    for (struct addrinfo* a = found; a; a = a->ai_next) {
        const struct sockaddr_in* in = (const struct sockaddr_in*)a->ai_addr;
        if (ntohl(in->sin_addr.s_addr) >> 24 != 127 || ntohs(in->sin_port) != 4000) bad = 1;
    }
    freeaddrinfo(found);
    struct hostent* entry = gethostbyname(name);
    if (!entry || entry->h_addrtype != AF_INET || (unsigned char)entry->h_addr_list[0][0] != 127) bad = 1;
    struct hostent storage, *result = NULL;
    char buffer[1024];
    int error = 0;
    if (gethostbyname_r(name, &storage, buffer, sizeof buffer, &result, &error) != 0 || !result ||
        (unsigned char)result->h_addr_list[0][0] != 127)
        bad = 1;
    if (bad) fprintf(stderr, "identity: %s does not resolve to a loopback address\n", name);
    return bad;
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
    return resolves_to_loopback(name) || resolves_to_loopback("node0");
}
