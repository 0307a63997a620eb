/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <ftw.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include "log.h"
#include "mock-harness.h"
#include "nts_crypto.h"

extern char **environ;

DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(FILE *, fclose);

static int spawn(char *const argv[], int stdout_fd, pid_t *ret) {
        posix_spawn_file_actions_t actions;
        int r;

        r = posix_spawn_file_actions_init(&actions);
        if (r != 0)
                return -r;
        if (stdout_fd >= 0)
                r = posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
        if (r == 0)
                r = posix_spawn(ret, argv[0], &actions, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&actions);
        return -r;
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

        r = spawn((char *[]) { (char *) "/bin/bash", (char *) MAKE_CERTS_PATH, dir, NULL }, -1, &pid);
        if (r < 0)
                return r;
        r = wait_exit_status(pid);
        if (r != 0)
                return log_error_errno(EIO, "%s %s exited with status %i.", MAKE_CERTS_PATH, dir, r);

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

bool mock_server_has_mode(const char *mode) {
        _cleanup_close_ int rfd = -EBADF, wfd = -EBADF;
        char buf[4096], line[128];
        size_t size = 0;
        pid_t pid;
        int fds[2];

        if (pipe2(fds, O_CLOEXEC) < 0)
                return false;
        rfd = fds[0];
        wfd = fds[1];

        if (spawn((char *[]) { (char *) MOCK_SERVER_PATH, (char *) "--list-modes", NULL }, wfd, &pid) < 0)
                return false;
        wfd = safe_close(wfd);

        for (;;) {
                ssize_t n = read(rfd, buf + size, sizeof(buf) - 1 - size);
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

        /* One mode per line, the name first. */
        for (const char *p = buf; *p; ) {
                size_t l = strcspn(p, " \t\n");
                if (l < sizeof(line)) {
                        memcpy(line, p, l);
                        line[l] = 0;
                        if (streq(line, mode))
                                return true;
                }
                p += strcspn(p, "\n");
                p += *p == '\n';
        }
        return false;
}

static int free_port(int type, uint16_t *ret) {
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t l = sizeof(in);
        _cleanup_close_ int fd = -EBADF;

        fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &in, sizeof(in)) < 0)
                return -errno;
        if (getsockname(fd, (struct sockaddr *) &in, &l) < 0)
                return -errno;
        *ret = ntohs(in.sin_port);
        return 0;
}

/* Whether /proc/net/{tcp,udp} lists a socket bound to port in the given state. Reading the
 * table instead of probing with connect() keeps the mock's connection log clean. */
static bool port_bound(const char *table, uint16_t port, const char *state) {
        _cleanup_(fclosep) FILE *f = fopen(table, "re");
        char line[512], local[64], st[8];

        if (!f)
                return false;
        while (fgets(line, sizeof(line), f)) {
                unsigned p;
                if (sscanf(line, " %*d: %63s %*s %7s", local, st) != 2)
                        continue;
                const char *colon = strrchr(local, ':');
                if (colon && sscanf(colon + 1, "%x", &p) == 1 && p == port && streq(st, state))
                        return true;
        }
        return false;
}

int mock_server_start(const char *certs, const char *mode, MockProcess *ret) {
        _cleanup_free_ char *chain = NULL, *key = NULL;
        char ke_port[8], ntp_port[8];
        MockProcess s = {};
        int r;

        r = free_port(SOCK_STREAM, &s.ke_port);
        if (r < 0)
                return r;
        r = free_port(SOCK_DGRAM, &s.ntp_port);
        if (r < 0)
                return r;
        if (asprintf(&chain, "%s/server-chain.pem", certs) < 0 || asprintf(&key, "%s/server.key", certs) < 0)
                return -ENOMEM;
        snprintf(ke_port, sizeof(ke_port), "%u", s.ke_port);
        snprintf(ntp_port, sizeof(ntp_port), "%u", s.ntp_port);

        r = spawn((char *[]) { (char *) MOCK_SERVER_PATH,
                               (char *) "--address", (char *) "127.0.0.1",
                               (char *) "--ke-port", ke_port,
                               (char *) "--ntp-port", ntp_port,
                               (char *) "--cert", chain,
                               (char *) "--key", key,
                               (char *) "--mode", (char *) mode,
                               NULL },
                  -1, &s.pid);
        if (r < 0)
                return log_error_errno(r, "Failed to start %s: %m", MOCK_SERVER_PATH);

        for (unsigned i = 0; i < 1000; i++) {
                int status;

                if (port_bound("/proc/net/tcp", s.ke_port, "0A") && port_bound("/proc/net/udp", s.ntp_port, "07")) {
                        assert_se(socket_address_from_string("127.0.0.1", s.ke_port, &s.ke_address) >= 0);
                        *ret = s;
                        return 0;
                }
                if (waitpid(s.pid, &status, WNOHANG) == s.pid)
                        return log_error_errno(ESRCH, "%s --mode %s exited before listening.", MOCK_SERVER_PATH, mode);
                (void) nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }

        mock_server_stop(&s);
        return log_error_errno(ETIMEDOUT, "%s did not bind its ports.", MOCK_SERVER_PATH);
}

void mock_server_stop(MockProcess *s) {
        if (!s || s->pid <= 0)
                return;
        (void) kill(s->pid, SIGTERM);
        (void) wait_exit_status(s->pid);
        s->pid = 0;
}

typedef struct KERun {
        sd_event *event;
        NTS_KEResult *result;
} KERun;

static void on_ke_done(NTS_KEClient *c, NTS_KEResult *result, void *userdata) {
        KERun *run = userdata;

        run->result = result;
        (void) sd_event_exit(run->event, 0);
}

int harness_run_ke(const SocketAddress *addresses, size_t n_addresses, const char *hostname, const char *ca_file,
                   uint64_t timeout_usec, NTS_KEResult **ret) {
        _cleanup_(NTS_ke_client_freep) NTS_KEClient *c = NULL;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        NTS_AEADAlgorithm offer[8];
        KERun run = {};
        int n, r;

        n = NTS_aead_offer(offer, ELEMENTSOF(offer));
        if (n < 0)
                return n;

        r = sd_event_new(&e);
        if (r < 0)
                return r;
        run.event = e;

        NTS_KEClientParams p = {
                .addresses = addresses,
                .n_addresses = n_addresses,
                .tls = { .hostname = hostname, .ca_file = ca_file },
                .aead = offer,
                .n_aead = (size_t) n,
                .timeout_usec = timeout_usec,
        };
        r = NTS_ke_client_start(e, &p, on_ke_done, &run, &c);
        if (r < 0)
                return r;

        r = sd_event_loop(e);
        if (r < 0)
                return r;
        if (!run.result)
                return -ESRCH;

        *ret = run.result;
        return 0;
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
                return log_error_errno(EADDRNOTAVAIL, "Cannot resolve %s: %s", r->ntp_server, gai_strerror(k));
        *ret = (SocketAddress) { .len = ai->ai_addrlen };
        memcpy(&ret->sa, ai->ai_addr, ai->ai_addrlen);
        socket_address_set_port(ret, port);
        freeaddrinfo(ai);
        return 0;
}

int harness_aead_contexts(const NTS_KEResult *r, NTS_AEADContext **ret_c2s, NTS_AEADContext **ret_s2c) {
        int k;

        k = NTS_aead_new(r->aead, &r->c2s_key, ret_c2s);
        if (k < 0)
                return k;
        k = NTS_aead_new(r->aead, &r->s2c_key, ret_s2c);
        if (k < 0)
                *ret_c2s = NTS_aead_free(*ret_c2s);
        return k;
}
