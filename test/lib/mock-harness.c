/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <ftw.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "log.h"
#include "mock-harness.h"
#include "nts-crypto.h"
#include "string-util.h"

/* Children die with us: a failed assertion aborts the test and must not leave a mock server
 * behind. */
static int spawn(char *const argv[], int stdout_fd, pid_t *ret) {
        pid_t parent = getpid(), pid;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                        _exit(EXIT_FAILURE);
                if (stdout_fd >= 0 && dup2(stdout_fd, STDOUT_FILENO) < 0)
                        _exit(EXIT_FAILURE);
                execv(argv[0], argv);
                _exit(127);
        }

        *ret = pid;
        return 0;
}

static int wait_exit_status(pid_t pid) {
        int status;

        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int mock_certs_make(char **ret) {
        _cleanup_free_ char *dir = strdup("/tmp/nts-certs-XXXXXX");
        pid_t pid;
        int r;

        if (!dir)
                return -ENOMEM;
        if (!mkdtemp(dir))
                return -errno;

        r = spawn((char *[]){ (char *) "/bin/bash", (char *) MAKE_CERTS_PATH, dir, NULL }, -1,
                  &pid);
        if (r < 0)
                return r;
        r = wait_exit_status(pid);
        if (r != 0)
                return log_error_errno(EIO, "%s %s exited with status %i.", MAKE_CERTS_PATH, dir,
                                       r);

        *ret = TAKE_PTR(dir);
        return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path) < 0 ? -errno : 0;
}

void mock_certs_remove(char *dir) {
        if (!dir)
                return;
        (void) nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        free(dir);
}

/* Runs argv with stdout into a pipe and returns the read end. */
static int spawn_reading_stdout(char *const argv[], pid_t *ret_pid) {
        _cleanup_close_ int rfd = -EBADF, wfd = -EBADF;
        int fds[2], r;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        rfd = fds[0];
        wfd = fds[1];

        r = spawn(argv, wfd, ret_pid);
        if (r < 0)
                return r;
        return TAKE_FD(rfd);
}

/* Reads from fd until a newline, EOF or the timeout; returns the length read. */
static ssize_t read_line(int fd, char *buf, size_t size, int timeout_msec) {
        size_t n = 0;

        assert(size > 0);

        while (n < size - 1 && !memchr(buf, '\n', n)) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                ssize_t l;

                if (poll(&pfd, 1, timeout_msec) <= 0)
                        return -ETIMEDOUT;
                l = read(fd, buf + n, size - 1 - n);
                if (l < 0 && errno == EINTR)
                        continue;
                if (l < 0)
                        return -errno;
                if (l == 0)
                        break;
                n += (size_t) l;
        }
        buf[n] = 0;
        return (ssize_t) n;
}

bool mock_server_has_mode(const char *mode) {
        _cleanup_close_ int fd = -EBADF;
        char buf[4096];
        const char *p;
        ssize_t n;
        pid_t pid;

        fd = spawn_reading_stdout((char *[]){ (char *) MOCK_SERVER_PATH, (char *) "--help", NULL },
                                  &pid);
        if (fd < 0)
                return false;

        /* The help text ends with "--sabotage=MODE  one of: MODE MODE ...". */
        size_t size = 0;
        for (;;) {
                n = read(fd, buf + size, sizeof(buf) - 1 - size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                size += (size_t) n;
                if (size == sizeof(buf) - 1)
                        break;
        }
        buf[size] = 0;
        if (wait_exit_status(pid) != 0)
                return false;

        p = strstr(buf, "one of:");
        if (!p)
                return false;
        p += strlen("one of:");
        for (;;) {
                p += strspn(p, " \t");
                size_t l = strcspn(p, " \t\n");
                if (l == 0)
                        return false;
                if (l == strlen(mode) && strneq(p, mode, l))
                        return true;
                p += l;
        }
}

/* A UDP port on address that is free now. */
static int free_udp_port(const char *address, uint16_t *ret) {
        _cleanup_close_ int fd = -EBADF;
        SocketAddress a;
        socklen_t l = sizeof(a.sa);
        int r;

        r = socket_address_from_string(address, 0, &a);
        if (r < 0)
                return r;
        fd = socket(a.sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &a.sa, a.len) < 0)
                return -errno;
        if (getsockname(fd, (struct sockaddr *) &a.sa, &l) < 0)
                return -errno;
        *ret = socket_address_port(&a);
        return 0;
}

int mock_server_start(const char *certs, const MockOptions *o, MockProcess *ret) {
        _cleanup_free_ char *cert = NULL, *key = NULL, *address = NULL, *ntp_port = NULL,
                           *sabotage = NULL, *ntp_server = NULL, *keys_file = NULL;
        char *argv[32];
        size_t n = 0;
        const char *ip = o->address ?: "127.0.0.1", *mode = o->sabotage ?: "none";
        _cleanup_close_ int fd = -EBADF;
        MockProcess s = {};
        char line[256];
        ssize_t l;
        int r;

        /* The KE port comes from the kernel (--ke-port=0, reported on the READY line). The NTP
         * port must be known before start, since the mock announces it in a Port Negotiation
         * record: take one that is free now. */
        r = free_udp_port(ip, &s.ntp_port);
        if (r < 0)
                return r;
        if (asprintf(&cert, "--cert=%s/server-chain.pem", certs) < 0 ||
            asprintf(&key, "--key=%s/server.key", certs) < 0 ||
            asprintf(&address, "--address=%s", ip) < 0 ||
            asprintf(&ntp_port, "--ntp-port=%u", s.ntp_port) < 0 ||
            asprintf(&sabotage, "--sabotage=%s", mode) < 0 ||
            (o->ntp_server && asprintf(&ntp_server, "--ntp-server=%s", o->ntp_server) < 0) ||
            (o->keys_file && asprintf(&keys_file, "--keys-file=%s", o->keys_file) < 0))
                return -ENOMEM;

        argv[n++] = (char *) MOCK_SERVER_PATH;
        argv[n++] = cert;
        argv[n++] = key;
        argv[n++] = address;
        argv[n++] = (char *) "--ke-port=0";
        /* A pool names its members' ports, not its own. */
        argv[n++] = o->pool_args ? (char *) "--ntp-listen-port=0" : ntp_port;
        argv[n++] = sabotage;
        if (ntp_server)
                argv[n++] = ntp_server;
        if (keys_file)
                argv[n++] = keys_file;
        for (size_t i = 0; o->pool_args && o->pool_args[i]; i++) {
                if (n >= ELEMENTSOF(argv) - 1)
                        return -E2BIG;
                argv[n++] = o->pool_args[i];
        }
        argv[n] = NULL;

        fd = spawn_reading_stdout(argv, &s.pid);
        if (fd < 0)
                return log_error_errno(fd, "Failed to start %s: %m", MOCK_SERVER_PATH);

        l = read_line(fd, line, sizeof(line), 10 * 1000);
        if (l < 0 || sscanf(line, "READY ke-port=%hu ntp-port=%hu", &s.ke_port, &s.ntp_port) != 2) {
                mock_server_stop(&s);
                return log_error_errno(l < 0 ? (int) l : EIO, "%s --sabotage=%s did not get ready.",
                                       MOCK_SERVER_PATH, mode);
        }

        assert_se(socket_address_from_string(ip, s.ke_port, &s.ke_address) >= 0);
        *ret = s;
        return 0;
}

int ntp_test_server_start(const char *mode, MockProcess *ret) {
        _cleanup_free_ char *listen = NULL, *mode_arg = NULL;
        _cleanup_close_ int fd = -EBADF;
        MockProcess s = {};
        char line[64];
        ssize_t n;
        int r;

        r = free_udp_port("127.0.0.1", &s.ntp_port);
        if (r < 0)
                return r;
        if (asprintf(&listen, "--listen=127.0.0.1:%u", s.ntp_port) < 0 || asprintf(&mode_arg, "--mode=%s", mode) < 0)
                return -ENOMEM;

        fd = spawn_reading_stdout((char *[]){ (char *) NTP_TEST_SERVER_PATH, listen, mode_arg, NULL }, &s.pid);
        if (fd < 0)
                return log_error_errno(fd, "Failed to start %s: %m", NTP_TEST_SERVER_PATH);

        n = read_line(fd, line, sizeof(line), 10 * 1000);
        if (n < 0 || !startswith(line, "READY")) {
                mock_server_stop(&s);
                return log_error_errno(n < 0 ? (int) n : EIO, "%s %s did not get ready.", NTP_TEST_SERVER_PATH,
                                       mode_arg);
        }

        *ret = s;
        return 0;
}

void mock_server_stop(MockProcess *s) {
        if (!s || s->pid <= 0)
                return;
        (void) kill(s->pid, SIGTERM);
        (void) wait_exit_status(s->pid);
        s->pid = 0;
}

int harness_run_ke(const SocketAddress *addresses, size_t n_addresses, const char *hostname, const char *ca_file,
                   uint64_t timeout_usec, NTS_KEResult **ret) {
        NTS_AEADAlgorithm offer[8];
        int n;

        n = NTS_aead_offer(offer, ELEMENTSOF(offer));
        if (n < 0)
                return n;

        NTS_KEClientParams p = {
                .addresses = addresses,
                .n_addresses = n_addresses,
                .tls = { .hostname = hostname, .ca_file = ca_file },
                .aead = offer,
                .n_aead = (size_t) n,
                .timeout_usec = timeout_usec,
        };
        return NTS_ke_client_run(&p, ret);
}

int harness_ntp_address(const NTS_KEResult *r, SocketAddress *ret) {
        uint16_t port = r->ntp_port ?: 123;
        struct addrinfo *ai = NULL;
        int k;

        if (!r->ntp_server) {
                *ret = r->address;
                socket_address_set_port(ret, port);
                return 0;
        }
        if (socket_address_from_string(r->ntp_server, port, ret) >= 0)
                return 0;

        k = getaddrinfo(r->ntp_server, NULL, &(struct addrinfo) { .ai_socktype = SOCK_DGRAM }, &ai);
        if (k != 0)
                return log_error_errno(EADDRNOTAVAIL, "Cannot resolve %s: %s", r->ntp_server,
                                       gai_strerror(k));
        *ret = (SocketAddress) { .len = ai->ai_addrlen };
        memcpy(&ret->sa, ai->ai_addr, ai->ai_addrlen);
        socket_address_set_port(ret, port);
        freeaddrinfo(ai);
        return 0;
}

int harness_aead_contexts(const NTS_KEResult *r, NTS_AEADContext **ret_c2s,
                          NTS_AEADContext **ret_s2c) {
        int k;

        k = NTS_aead_new(r->aead, &r->c2s_key, ret_c2s);
        if (k < 0)
                return k;
        k = NTS_aead_new(r->aead, &r->s2c_key, ret_s2c);
        if (k < 0)
                *ret_c2s = NTS_aead_free(*ret_c2s);
        return k;
}
