/* Input for the policy-seam lint's self-check: a walk that asks the server lists itself. */
static ServerName *policy_broken_next(Policy *pol, bool *wrapped) {
        return server_next(pol->ctx.servers, pol->walk_name, pol->nts, wrapped);
}
