/* Input for the policy-seam lint's self-check: a set that starts a pool itself. */
static void policy_broken_start_pool(Policy *pol, ServerName *n, size_t quota) {
        if (pol->ctx.lists->pool_make(n, &pol->ctx) >= 0)
                pool_start(n->pool, quota);
}
