#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NTSBootstrap= on a correctly set host (see docs/NTS.md, "Bootstrap with a wrong clock"): an
# expired certificate is never bootstrapped; a certificate that is only "not yet valid" gets
# the bootstrap key exchange while the clock is unsynchronized, but its time lies outside the
# certificate's validity and is refused; NTSBootstrap=no turns the bootstrap off.
set -euo pipefail
. "$(dirname "$0")/../lib/chrony.sh"
. "$(dirname "$0")/lib-timesyncd.sh"
test_init
timesyncd_prepare
make_test_certs >/dev/null
chmod 0755 "$CERTDIR"
chmod 0644 "$CERTDIR"/*.pem

# The bootstrap needs the kernel to call the clock unsynchronized (STA_UNSYNC, 0x40).
status=$("$TSNTS_ADJTIMEX_READ" | sed -n 's/^status=//p')
kernel_unsync=$(( (status & 0x40) != 0 ))

with_server_cert() {
        local chain=$1
        shift
        [ -n "${CHRONY_RUNDIR:-}" ] && stop_chrony "$CHRONY_RUNDIR"
        CHRONY_RUNDIR=$TEST_TMPDIR/chrony-$(basename "$chain" .pem)
        ntp=$(free_port)
        ke=$(free_port)
        # start_chrony_nts_server takes the certificate from CERTDIR/server-chain.pem.
        mkdir -p "$TEST_TMPDIR/certs-$chain"
        cp "$CERTDIR/$chain" "$TEST_TMPDIR/certs-$chain/server-chain.pem"
        cp "$CERTDIR/server.key" "$TEST_TMPDIR/certs-$chain/server.key"
        start_chrony_nts_server "$CHRONY_RUNDIR" "$TEST_TMPDIR/certs-$chain" "$ntp" "$ke"
        [ -n "${TIMESYNCD_PID:-}" ] && { kill "$TIMESYNCD_PID" 2>/dev/null || true; wait "$TIMESYNCD_PID" 2>/dev/null || true; }
        rm -f "$TEST_TMPDIR"/state/nts-*
        : >"$TIMESYNCD_LOG"
        write_conf "$TEST_TMPDIR/ts.conf" "NTS=localhost:$ke" "NTSTrustedCertificates=$CERTDIR/ca.pem" "$@"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
}

test_expired_certificate_is_never_bootstrapped() {
        with_server_cert expired-chain.pem
        wait_log "certificate has expired"
        log_has "bootstrapping" && fail "an expired certificate was bootstrapped"
        log_has "Initial clock synchronization" && fail "synchronized with an expired certificate"
        true
}

test_not_yet_valid_certificate_time_is_refused_on_a_correct_clock() {
        with_server_cert future-chain.pem
        if [ "$kernel_unsync" = 1 ]; then
                wait_log "not yet valid by our clock, which is not synchronized: bootstrapping"
                wait_log "Refusing bootstrap time from localhost:$ke: it lies outside its certificate's validity period"
        else
                wait_log "certificate is not yet valid"
                log_has "bootstrapping" && fail "bootstrap although the kernel clock is synchronized"
        fi
        log_has "Initial clock synchronization" && fail "synchronized with time outside the certificate's validity"
        ls "$TEST_TMPDIR"/state/nts-* 2>/dev/null && fail "bootstrap keys were saved"
        true
}

test_bootstrap_can_be_turned_off() {
        with_server_cert future-chain.pem "NTSBootstrap=no"
        wait_log "certificate is not yet valid"
        log_has "bootstrapping" && fail "NTSBootstrap=no still bootstraps"
        true
}

run_case test_expired_certificate_is_never_bootstrapped
run_case test_not_yet_valid_certificate_time_is_refused_on_a_correct_clock
run_case test_bootstrap_can_be_turned_off
