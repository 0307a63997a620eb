/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* LD_PRELOAD shim for a what-if in bench/run.sh: sets TCP_NODELAY on every TCP socket before it
 * connects, to show what Nagle's algorithm costs the key exchange. The client writes the TLS
 * Finished message and the NTS-KE request in two segments; without TCP_NODELAY the second waits
 * for the server's delayed ACK of the first (40 ms on Linux). */

#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

__attribute__((visibility("default"))) int connect(int fd, const struct sockaddr *a, socklen_t l) {
        static int (*real)(int, const struct sockaddr *, socklen_t);
        socklen_t size = sizeof(int);
        int type = 0, one = 1;

        if (!real)
                real = (int (*)(int, const struct sockaddr *, socklen_t)) dlsym(RTLD_NEXT, "connect");
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) == 0 && type == SOCK_STREAM)
                (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return real(fd, a, l);
}
