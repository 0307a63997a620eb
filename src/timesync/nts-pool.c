/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "macro.h"
#include "nts-pool.h"

static const char *const verdict_table[_NTS_POOL_VERDICT_MAX] = {
        [NTS_POOL_NEW] = "new member",
        [NTS_POOL_DENIED_AGAIN] = "a member in use or denied, named again",
        [NTS_POOL_SAME_ADDRESS] = "a new name for an NTP address in use",
        [NTS_POOL_NO_MEMBER] = "no Server record: the key exchange server itself, already in use",
};

const char *NTS_pool_verdict_to_string(NTS_PoolVerdict v) {
        if (v < 0 || v >= _NTS_POOL_VERDICT_MAX)
                return NULL;
        return verdict_table[v];
}

NTS_PoolVerdict NTS_pool_check(const NTS_PoolMember *in_use, size_t n_in_use, char *const *denied, size_t n_denied,
                               const char *name, const SocketAddress *address) {
        assert(in_use || n_in_use == 0);
        assert(denied || n_denied == 0);

        /* Without a Server record every key exchange with this server gives the same NTP
         * server; nothing could be denied to get another. */
        if (!name)
                return n_in_use > 0 ? NTS_POOL_NO_MEMBER : NTS_POOL_NEW;

        /* The pool matches deny records byte for byte, but DNS does not tell "A.example" from
         * "a.example": either spelling is the member we have. */
        for (size_t i = 0; i < n_in_use; i++)
                if (in_use[i].name && strcaseeq(in_use[i].name, name))
                        return NTS_POOL_DENIED_AGAIN;
        for (size_t i = 0; i < n_denied; i++)
                if (strcaseeq(denied[i], name))
                        return NTS_POOL_DENIED_AGAIN;

        /* Two names, one server (a pool that lists a server twice, or a name and its address):
         * two sources there would count one server's time twice in the agreement. */
        if (address)
                for (size_t i = 0; i < n_in_use; i++)
                        if (socket_address_equal(&in_use[i].address, address))
                                return NTS_POOL_SAME_ADDRESS;

        return NTS_POOL_NEW;
}
