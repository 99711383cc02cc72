/*
 * Test helper: print a TCP port that is free on ADDR (default 127.0.0.1).
 * With -l SECONDS, keep listening on it that long without ever answering
 * (a server that accepts connections but stays silent).
 *
 *   free_port [-l SECONDS] [ADDR]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int listen_s = 0;
    int arg = 1;
    if (argc > 2 && strcmp(argv[1], "-l") == 0) {
        listen_s = atoi(argv[2]);
        arg = 3;
    }
    const char *addr = arg < argc ? argv[arg] : "127.0.0.1";
    struct sockaddr_in sin = { .sin_family = AF_INET };
    if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
        fprintf(stderr, "free_port: bad IPv4 address %s\n", addr);
        return 2;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t len = sizeof(sin);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
        getsockname(fd, (struct sockaddr *)&sin, &len) != 0 ||
        (listen_s > 0 && listen(fd, 16) != 0)) {
        perror("free_port");
        return 1;
    }
    printf("%d\n", ntohs(sin.sin_port));
    fflush(stdout);
    if (listen_s > 0) {
        /* Detach from the caller's pipe so $(free_port -l ...) returns. */
        if (fork() != 0)
            return 0;
        fclose(stdout);
        sleep((unsigned)listen_s);
    }
    close(fd);
    return 0;
}
