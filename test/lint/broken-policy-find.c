/* Input for the policy-seam lint's self-check: a set that looks up a source's name itself. */
static bool policy_broken_of_pool(Policy *pol, const Source *s) {
        ServerName *n = server_lists_find_source(pol->ctx.servers, s);

        return n && n->pool;
}
