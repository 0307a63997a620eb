/* Input for the policy-seam lint's self-check: a policy that starts a source itself. */
static int policy_broken_start(Source *s) {
        return source_start(s);
}
