#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/run.sh [BUILD_DIR]: runs every benchmark of docs/BENCHMARKS.md and rewrites it, with the
# plot docs/bench-rss-cpu.png. `ninja -C build bench` does the same. Needs root (setpriv, like
# the integration tests). What a fresh machine lacks it fetches first, as tools/run-tests.sh
# does: valgrind, strace, gnuplot-nox and the rest of tools/install-deps.sh, and chronyd with
# test/tools/fetch-peers.sh into the peers directory: TSNTS_PEERS_DIR, else build-peers/ of
# the tree when tools/demo.sh or tools/run-tests.sh filled it, else the harness's default
# ${XDG_CACHE_HOME:-$HOME/.cache}/timesyncd-nts/peers. Every daemon runs without CAP_SYS_TIME (the test harness drops it),
# ours with --observe, chronyd with -x or -Q, ntpd-rs (when fetched) with no-clock-write.so;
# traffic stays on loopback. The harness's clock
# guard fails the run if the kernel clock discipline changed.
#
# BENCH_POLLS (default 1000) polls at 2^BENCH_POLL_LOG2 s (default -2: 0.25 s; ours with
# --observe --test-poll-interval=, chronyd with minpoll/maxpoll) bound the longest part, measured
# in BENCH_CPU_ROUNDS (default 5) rounds, then traced for a quarter of that, then ours and
# chronyd with one source alone for half of it in BENCH_QUIET_ROUNDS (5) rounds; the whole run
# takes about BENCH_POLLS * 0.45 s + 1 min (8 min at the defaults).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
export TSNTS_SRC_DIR=$SRC
TSNTS_BUILD_DIR=$(cd "${1:-$SRC/build}" && pwd)
export TSNTS_BUILD_DIR
export TSNTS_ADJTIMEX_READ=$TSNTS_BUILD_DIR/test/tools/adjtimex-read
BENCH_TOOLS=(valgrind strace gnuplot /usr/bin/python3 setpriv ss readelf)

[ "$(id -u)" = 0 ] || { echo "bench/run.sh needs root (setpriv drops CAP_SYS_TIME; apt-get installs what is missing)" >&2; exit 1; }
for t in "${BENCH_TOOLS[@]}"; do
        if ! command -v "$t" >/dev/null; then
                echo "bench/run.sh: $t missing, running tools/install-deps.sh" >&2
                "$SRC/tools/install-deps.sh"
                break
        fi
done
# The peers that tools/demo.sh or tools/run-tests.sh fetched into the tree serve here too;
# otherwise common.sh's default directory, filled below when empty.
if [ -z "${TSNTS_PEERS_DIR:-}" ] && [ -e "$SRC/build-peers/.stamp" ]; then
        export TSNTS_PEERS_DIR=$SRC/build-peers
fi
# shellcheck source-path=SCRIPTDIR
. "$SRC/test/lib/common.sh"
if [ ! -x "$TSNTS_PEERS_DIR/root/usr/sbin/chronyd" ]; then
        log "chronyd not in $TSNTS_PEERS_DIR: running test/tools/fetch-peers.sh"
        "$SRC/test/tools/fetch-peers.sh" "$TSNTS_PEERS_DIR" >&2
fi
# shellcheck source-path=SCRIPTDIR
. "$SRC/test/lib/chrony.sh"
# shellcheck source-path=SCRIPTDIR
. "$SRC/test/lib/dbus.sh"
# shellcheck source-path=SCRIPTDIR
. "$SRC/test/lib/timesyncd.sh"

POLLS=${BENCH_POLLS:-1000}
POLL_LOG2=${BENCH_POLL_LOG2:--2}
POLL_SEC=$(awk -v l="$POLL_LOG2" 'BEGIN { printf "%g", 2 ^ l }')
POLL_MS=$(awk -v l="$POLL_LOG2" 'BEGIN { printf "%d", 2 ^ l * 1000 }')
KE_RUNS=${BENCH_KE_RUNS:-21}
FIRST_RUNS=${BENCH_FIRST_RUNS:-7}
DOC=$SRC/docs/BENCHMARKS.md
PNG=$SRC/docs/bench-rss-cpu.png
BENCH_PACKET=$TSNTS_BUILD_DIR/bench/bench-packet
BENCH_KE=$TSNTS_BUILD_DIR/bench/bench-ke
BENCH_MEMORY=$TSNTS_BUILD_DIR/bench/bench-memory-stages
BUNDLE=/etc/ssl/certs/ca-certificates.crt
STOCK_TIMESYNCD=/lib/systemd/systemd-timesyncd
# The second anchor: ntpd-rs's ntp-daemon of the newest suite test/tools/fetch-peers.sh fetched
# that runs on this host (forky's 1.9, else trixie's 1.4). It exits when it may not set the
# clock, so it runs with no-clock-write.so, which turns its clock changes into reads; like
# every client here it has no CAP_SYS_TIME. Without one the rows say "not measured".
NO_CLOCK_WRITE=$TSNTS_BUILD_DIR/test/tools/no-clock-write.so
NTPD_RS=
for suite in forky trixie; do
        b=$TSNTS_PEERS_DIR/$suite/root/usr/bin/ntp-daemon
        if [ -x "$b" ] && [ -e "$NO_CLOCK_WRITE" ] && "$b" --version >/dev/null 2>&1; then
                NTPD_RS=$b
                break
        fi
done

for t in "${BENCH_TOOLS[@]}"; do
        command -v "$t" >/dev/null || fail "$t is still missing after tools/install-deps.sh"
done
for b in "$BENCH_PACKET" "$BENCH_KE" "$BENCH_MEMORY" "$TIMESYNCD"; do
        [ -x "$b" ] || fail "$b not built (ninja -C $TSNTS_BUILD_DIR)"
done

test_init
timesyncd_prepare
make_test_certs >/dev/null
chmod 0755 "$CERTDIR"
chmod 0644 "$CERTDIR"/*.pem
start_system_bus
W=$TEST_TMPDIR
CA=$CERTDIR/ca.pem
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$(date -u '+%Y-%m-%d %H:%M UTC')

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
fmt() { awk -v v="$1" -v d="${2:-1}" 'BEGIN { if (v == "n/a" || v == "") print "n/a"; else printf "%.*f\n", d, v }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || b == 0) print "n/a"; else printf "%.2f\n", a / b }'; }

# Prefixes each line with the time it was read (EPOCHREALTIME): the daemons' own logs carry no
# sub-second timestamps.
stamp_lines() {
        local line
        while IFS= read -r line; do
                printf '%s %s\n' "$EPOCHREALTIME" "$line"
        done
}

# run_timed OUT CMD...: runs CMD, appends "wall_ms<TAB>cpu_ms" to OUT; CPU is user + system of
# CMD and its children from wait4() (microseconds, not the 10 ms ticks of /usr/bin/time).
run_timed() {
        local out=$1
        shift
        /usr/bin/python3 - "$out" "$@" <<'PY'
import os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.execvp(argv[0], argv)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("%s failed" % argv[0])
with open(out, "a") as f:
    f.write("%.1f\t%.1f\n" % (wall * 1000, (ru.ru_utime + ru.ru_stime) * 1000))
PY
}

# ---- 1. per packet ----
log "per-packet benchmark"
"$BENCH_PACKET" --rounds 21 --iterations 5000 >"$W/packet.tsv"
"$BENCH_PACKET" --list >"$W/packet-cases.tsv"
(cd "$W" && valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" "$BENCH_PACKET" --iterations 1000 >/dev/null 2>"$W/callgrind.log")
# Each dump names its case; its "summary:" is the instructions of 1000 operations.
for f in "$W"/cg.out.*; do
        awk '/^desc: Trigger: Client Request:/ { name = $5 } /^summary:/ { s = $2 } END { printf "%s\t%.0f\n", name, s / 1000 }' "$f"
done >"$W/packet-instr.tsv"

pk() { awk -v c="$1" -v col="$2" -F'\t' '$1 == c { print $col }' "$W/packet.tsv"; }
pi() { awk -v c="$1" -F'\t' '$1 == c { print $2 }' "$W/packet-instr.tsv"; }
pr() { awk -v c="$1" -F'\t' '$1 == "ratio" && $2 == c { print $3 }' "$W/packet.tsv"; }

# ---- peers: one chronyd NTS server per measured client, so that its counters are that
# client's polls ----
declare -A NTP KE
# Four sources each for the clients with several NTS servers (issue 16): ours-nts4-1 ... -4 and
# chrony-nts4-1 ... -4.
for s in ke first ours-nts ours-nobus ours-plain chrony-nts strace-ours strace-chrony \
        ours-nts4-{1..4} chrony-nts4-{1..4} ${NTPD_RS:+ntpdrs-nts}; do
        NTP[$s]=$(free_port)
        KE[$s]=$(free_port)
        # chronyd takes no two sources on one address: its four servers listen on 127.0.0.1
        # to .4, which it reaches by names the test certificate covers (*.nts.test).
        case $s in
        chrony-nts4-[234]) CHRONY_BIND4=127.0.0.${s##*-} start_chrony_nts_server "$W/srv-$s" "$CERTDIR" "${NTP[$s]}" "${KE[$s]}" ;;
        *) start_chrony_nts_server "$W/srv-$s" "$CERTDIR" "${NTP[$s]}" "${KE[$s]}" ;;
        esac
done
# served CLIENT: the NTP packets CLIENT's server counted; a client of four servers, all four.
served() {
        local i n=0
        if [ -d "$W/srv-$1" ]; then
                chrony_serverstat "$W/srv-$1" "NTP packets received"
                return
        fi
        for i in 1 2 3 4; do
                n=$((n + $(chrony_serverstat "$W/srv-$1-$i" "NTP packets received")))
        done
        echo "$n"
}

# ---- 2. key exchange ----
log "key exchange: ours, $KE_RUNS sessions in one process"
"$BENCH_KE" 127.0.0.1 "${KE[ke]}" localhost "$CA" "$KE_RUNS" >"$W/ke-ours.tsv"
ke_first_wall=$(awk -F'\t' '$1 == 0 { print $2 }' "$W/ke-ours.tsv")
ke_first_cpu=$(awk -F'\t' '$1 == 0 { print $3 }' "$W/ke-ours.tsv")
ke_wall=$(awk -F'\t' '$1 > 0 { print $2 }' "$W/ke-ours.tsv" | median)
ke_cpu=$(awk -F'\t' '$1 > 0 { print $3 }' "$W/ke-ours.tsv" | median)

chrony_client_conf() {
        local dir=$1 server=$2 poll=$3
        shift 3
        mkdir -p "$dir"
        chmod 0700 "$dir"
        {
                echo "server localhost port ${NTP[$server]} nts ntsport ${KE[$server]} $poll"
                echo "ntstrustedcerts $CA"
                echo "nosystemcert"
                echo "pidfile $dir/chronyd.pid"
                echo "cmdport 0"
                echo "bindcmdaddress $dir/chronyd.sock"
                for line; do echo "$line"; done
        } >"$dir/client.conf"
}

# KE interval seen by strace: connect() of the socket to the KE port until its close().
ke_interval_ms() {
        awk -v port="htons(${KE[ke]})" '
                { t = ($1 ~ /^[0-9]+\.[0-9]+$/) ? $1 : $2 }
                fd == "" && /connect\(/ && index($0, port) { split($0, a, /connect\(/); split(a[2], b, ","); fd = b[1]; t0 = t; next }
                fd != "" && index($0, "close(" fd ")") { printf "%.1f\n", (t - t0) * 1000; exit }' "$1"
}

log "key exchange: one-shot processes, ours and chronyd -Q, $FIRST_RUNS each"
chrony_client_conf "$W/q" ke "iburst minpoll -6 maxpoll -6"
: >"$W/ke-proc-ours.tsv"
: >"$W/ke-proc-chrony.tsv"
: >"$W/ke-strace.tsv"
for i in $(seq "$FIRST_RUNS"); do
        run_timed "$W/ke-proc-ours.tsv" "${NOSYSTIME[@]}" "$BENCH_KE" 127.0.0.1 "${KE[ke]}" localhost "$CA" 1
        rm -f "$W/q/chronyd.sock"
        run_timed "$W/ke-proc-chrony.tsv" "${NOSYSTIME[@]}" "$CHRONYD" -Q -t 5 -u root -f "$W/q/client.conf" ||
                fail "chronyd -Q did not measure"
        strace -f -ttt -e trace=connect,close -o "$W/st-ours" "${NOSYSTIME[@]}" "$BENCH_KE" 127.0.0.1 "${KE[ke]}" localhost "$CA" 1 >/dev/null
        rm -f "$W/q/chronyd.sock"
        strace -f -ttt -e trace=connect,close -o "$W/st-chrony" "${NOSYSTIME[@]}" "$CHRONYD" -Q -t 5 -u root -f "$W/q/client.conf" >/dev/null 2>&1
        printf '%s\t%s\n' "$(ke_interval_ms "$W/st-ours")" "$(ke_interval_ms "$W/st-chrony")" >>"$W/ke-strace.tsv"
done
kp_ours_wall=$(cut -f1 "$W/ke-proc-ours.tsv" | median)
kp_ours_cpu=$(cut -f2 "$W/ke-proc-ours.tsv" | median)
kp_chrony_wall=$(cut -f1 "$W/ke-proc-chrony.tsv" | median)
kp_chrony_cpu=$(cut -f2 "$W/ke-proc-chrony.tsv" | median)
ks_ours=$(cut -f1 "$W/ke-strace.tsv" | grep . | median)
ks_chrony=$(cut -f2 "$W/ke-strace.tsv" | grep . | median)

# ---- 2b. key exchange trusting the system store ----
# A copy of the system store with the test CA added, in both forms: the hashed directory
# (what the daemon reads) and the bundle file (what OpenSSL's default paths would parse).
# Many shells export SSL_CERT_FILE (this machine does): each run sets exactly one of the two.
sys_ke_dir=n/a sys_ke_bundle=n/a sys_proc_ours=n/a sys_proc_chrony=n/a n_system_certs=0
if [ -r "$BUNDLE" ]; then
        log "key exchange trusting the system store: hashed directory and bundle, $KE_RUNS sessions each"
        n_system_certs=$(grep -c "BEGIN CERTIFICATE" "$BUNDLE")
        mkdir -p "$W/syscerts"
        cp -L /etc/ssl/certs/*.pem "$W/syscerts/"
        cp "$CA" "$W/syscerts/zz-bench-ca.pem"
        openssl rehash "$W/syscerts" >/dev/null 2>&1
        cat "$BUNDLE" "$CA" >"$W/bundle.pem"
        SYSDIR_ENV=(env -u SSL_CERT_FILE SSL_CERT_DIR="$W/syscerts")
        BUNDLE_ENV=(env -u SSL_CERT_DIR SSL_CERT_FILE="$W/bundle.pem")
        "${SYSDIR_ENV[@]}" "$BENCH_KE" 127.0.0.1 "${KE[ke]}" localhost - "$KE_RUNS" >"$W/ke-sysdir.tsv"
        "${BUNDLE_ENV[@]}" "$BENCH_KE" 127.0.0.1 "${KE[ke]}" localhost - "$KE_RUNS" >"$W/ke-bundle.tsv"
        sys_ke_dir=$(awk -F'\t' '$1 > 0 { print $3 / 1000 }' "$W/ke-sysdir.tsv" | median)
        sys_ke_bundle=$(awk -F'\t' '$1 > 0 { print $3 / 1000 }' "$W/ke-bundle.tsv" | median)
        # chronyd trusting the system store too (GnuTLS's, on Debian the same bundle) and the CA.
        chrony_client_conf "$W/qs" ke "iburst minpoll -6 maxpoll -6"
        sed -i '/^nosystemcert$/d' "$W/qs/client.conf"
        : >"$W/ke-proc-ours-sys.tsv"
        : >"$W/ke-proc-chrony-sys.tsv"
        for i in $(seq "$FIRST_RUNS"); do
                run_timed "$W/ke-proc-ours-sys.tsv" "${NOSYSTIME[@]}" "${SYSDIR_ENV[@]}" "$BENCH_KE" 127.0.0.1 "${KE[ke]}" localhost - 1
                rm -f "$W/qs/chronyd.sock"
                run_timed "$W/ke-proc-chrony-sys.tsv" "${NOSYSTIME[@]}" "$CHRONYD" -Q -t 5 -u root -f "$W/qs/client.conf" ||
                        fail "chronyd -Q with the system store did not measure"
        done
        sys_proc_ours=$(cut -f2 "$W/ke-proc-ours-sys.tsv" | median)
        sys_proc_chrony=$(cut -f2 "$W/ke-proc-chrony-sys.tsv" | median)
fi

# ---- 4b. memory, step by step along the daemon's path ----
log "memory by stage: test CA (also without OpenSSL's configuration, without its error strings), system store directory, system store bundle"
"$BENCH_MEMORY" 127.0.0.1 "${KE[ke]}" localhost "$CA" >"$W/mem-ca.tsv"
"$BENCH_MEMORY" --openssl-init=no-config 127.0.0.1 "${KE[ke]}" localhost "$CA" >"$W/mem-noconf.tsv"
"$BENCH_MEMORY" --openssl-init=no-strings 127.0.0.1 "${KE[ke]}" localhost "$CA" >"$W/mem-nostrings.tsv"
if [ -r "$BUNDLE" ]; then
        "${SYSDIR_ENV[@]}" "$BENCH_MEMORY" 127.0.0.1 "${KE[ke]}" localhost - >"$W/mem-sysdir.tsv"
        "${BUNDLE_ENV[@]}" "$BENCH_MEMORY" 127.0.0.1 "${KE[ke]}" localhost - >"$W/mem-bundle.tsv"
fi
# mem FILE STAGE COLUMN (2 rss, 3 anon, 4 file, 5 libcrypto's mappings, 6 libssl's, 7 libssl mapped)
mem() { awk -F'\t' -v s="$2" -v c="$3" '$1 == s { print $c }' "$1" 2>/dev/null | grep . || echo n/a; }
mem_delta() { awk -v a="$(mem "$1" "$2" "$4")" -v b="$(mem "$1" "$3" "$4")" 'BEGIN { if (a == "n/a" || b == "n/a") print "n/a"; else print b - a }'; }

# ---- 3. time to the first authenticated sample ----
log "first authenticated sample: cold and warm, $FIRST_RUNS runs each"
write_conf "$W/first.conf" "NTS=localhost:${KE[first]}" "NTSTrustedCertificates=$CA"
mkdir -p "$W/first-state" "$W/first-runtime"
chmod 0777 "$W/first-state" "$W/first-runtime"
# first_ours LOG: ms from launch until the daemon logs its first (NTS authenticated) sync.
first_ours() {
        local log=$1 t0 pid reader
        mkfifo "$log.fifo"
        : >"$log"
        stamp_lines <"$log.fifo" >"$log" &
        reader=$!
        t0=$EPOCHREALTIME
        start_daemon "$log.fifo" env SYSTEMD_LOG_LEVEL=info SYSTEMD_LOG_TARGET=console "$TIMESYNCD" --observe \
                --config="$W/first.conf" --state-dir="$W/first-state" --runtime-dir="$W/first-runtime"
        pid=$DAEMON_PID
        wait_for 15 grep -q "Initial clock synchronization.*NTS authenticated" "$log" ||
                fail "no NTS authenticated sync in $log"
        stop_daemon "$pid"
        wait "$reader"
        awk -v t0="$t0" '/Initial clock synchronization/ { printf "%.1f\n", ($1 - t0) * 1000; exit }' "$log"
}
# first_chrony LOG: ms from launch until chronyd -Q prints its measurement.
first_chrony() {
        local log=$1 t0
        t0=$EPOCHREALTIME
        rm -f "$W/qf/chronyd.sock"
        "${NOSYSTIME[@]}" "$CHRONYD" -Q -t 5 -u root -f "$W/qf/client.conf" 2>&1 | stamp_lines >"$log"
        awk -v t0="$t0" '/System clock wrong by/ { printf "%.1f\n", ($1 - t0) * 1000; f = 1; exit } END { if (!f) exit 1 }' "$log" ||
                fail "chronyd -Q did not measure: $(cat "$log")"
}
chrony_client_conf "$W/qf" first "iburst minpoll -6 maxpoll -6" "ntsdumpdir $W/qf"
: >"$W/first.tsv"
for i in $(seq "$FIRST_RUNS"); do
        rm -f "$W"/first-state/nts-* "$W"/qf/*.nts
        cold=$(first_ours "$W/first-cold-$i.log")
        log_has_resume=$(grep -c "Resuming NTS" "$W/first-cold-$i.log" || true)
        [ "$log_has_resume" = 0 ] || fail "the cold start found cookies"
        warm=$(first_ours "$W/first-warm-$i.log")
        grep -q "Resuming NTS" "$W/first-warm-$i.log" || fail "the warm start did not resume from saved cookies"
        ccold=$(first_chrony "$W/first-ccold-$i.log")
        cwarm=$(first_chrony "$W/first-cwarm-$i.log")
        printf '%s\t%s\t%s\t%s\n' "$cold" "$warm" "$ccold" "$cwarm" >>"$W/first.tsv"
done
first_cold=$(cut -f1 "$W/first.tsv" | median)
first_warm=$(cut -f2 "$W/first.tsv" | median)
first_ccold=$(cut -f3 "$W/first.tsv" | median)
first_cwarm=$(cut -f4 "$W/first.tsv" | median)
# Whether chronyd -Q found its dumped cookies: the server counts key exchanges.
chrony_ke_total=$(chrony_serverstat "$W/srv-first" "NTS-KE connections accepted")

# ---- 4./5./6. memory, CPU per poll, syscalls per poll: all clients side by side ----
log "steady state: $POLLS polls of $POLL_SEC s, all clients at once"
declare -A PID BUSPID
# Each of our daemons gets a system bus of its own, as on a real machine: on a shared bus only
# one of them could own org.freedesktop.timesync1.
# ours-nobus: no system bus at all (an address where nothing listens).
start_ours() {
        local name=$1 line=$2 state=$W/$1/state bus
        mkdir -p "$state" "$W/$name/runtime"
        chmod 0777 "$W/$name" "$state" "$W/$name/runtime"
        if [ "$name" = ours-nobus ]; then
                # sd-bus waits for the socket with an inotify watch on every directory of its
                # path: under the busy /tmp each file anyone creates there would wake the daemon
                # (and it would try to connect). Under /run, as the real /run/dbus is.
                NOBUS_DIR=$(mktemp -d /run/tsnts-bench-nobus.XXXXXX)
                at_cleanup rm -rf "$NOBUS_DIR"
                bus=unix:path=$NOBUS_DIR/no-bus
        else
                TEST_TMPDIR=$W/$name start_system_bus
                BUSPID[$name]=$DBUS_PID
                bus=$DBUS_SYSTEM_BUS_ADDRESS
        fi
        write_conf "$W/$name/ts.conf" "$line" "NTSTrustedCertificates=$CA"
        start_daemon "$W/$name/daemon.log" env DBUS_SYSTEM_BUS_ADDRESS="$bus" SYSTEMD_LOG_LEVEL=info SYSTEMD_LOG_TARGET=console "$TIMESYNCD" \
                --observe --config="$W/$name/ts.conf" --state-dir="$state" --runtime-dir="$W/$name/runtime" \
                --test-poll-interval="${POLL_MS}ms"
        PID[$name]=$DAEMON_PID
}
start_chrony_client() {
        local name=$1 i
        if [ "$name" = chrony-nts4 ]; then
                # The same four sources: chrony_client_conf's server line, and three more on
                # 127.0.0.2 to .4, named in a private /etc/hosts (a mount namespace of its own).
                chrony_client_conf "$W/$name" "$name-1" "minpoll $POLL_LOG2 maxpoll $POLL_LOG2" \
                        "$(for i in 2 3 4; do echo "server n$i.nts.test port ${NTP[$name-$i]} nts ntsport ${KE[$name-$i]} minpoll $POLL_LOG2 maxpoll $POLL_LOG2"; done)"
                { cat /etc/hosts; for i in 2 3 4; do echo "127.0.0.$i n$i.nts.test"; done; } >"$W/$name/hosts"
                # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
                start_daemon "$W/$name/daemon.log" unshare -m bash -c 'mount --bind "$0" /etc/hosts && exec "$@"' \
                        "$W/$name/hosts" "$CHRONYD" -x -d -u root -f "$W/$name/client.conf"
        else
                chrony_client_conf "$W/$name" "$name" "minpoll $POLL_LOG2 maxpoll $POLL_LOG2"
                start_daemon "$W/$name/daemon.log" "$CHRONYD" -x -d -u root -f "$W/$name/client.conf"
        fi
        PID[$name]=$DAEMON_PID
}
start_ours ours-nts "NTS=localhost:${KE[ours-nts]}"
start_ours ours-plain "NTP=127.0.0.1:${NTP[ours-plain]}"
# What-if: the same daemon without a system bus, so without its PropertiesChanged signal per
# poll (chronyd has no bus): what that signal costs.
start_ours ours-nobus "NTS=localhost:${KE[ours-nobus]}"
start_ours strace-ours "NTS=localhost:${KE[strace-ours]}"
start_ours ours-nts4 "NTS=localhost:${KE[ours-nts4-1]} localhost:${KE[ours-nts4-2]} localhost:${KE[ours-nts4-3]} localhost:${KE[ours-nts4-4]}"
start_chrony_client chrony-nts
start_chrony_client strace-chrony
start_chrony_client chrony-nts4
# ntpd-rs polls at least 1 s apart: it turns a negative exponent into 2^0 s
# (PollInterval::as_system_duration() in ntp-proto).
NTPD_RS_POLL_LOG2=$(( POLL_LOG2 < 0 ? 0 : POLL_LOG2 ))
# ntpd-rs with one NTS source polled at that interval; minimum-agreeing-sources = 1 so that
# it runs its whole clock algorithm on that source, as ours and chronyd do; warnings only in its
# log (it logs every sample at info).
start_ntpd_rs_client() {
        local name=$1 dir=$W/$1
        mkdir -p "$dir"
        cat >"$dir/ntp.toml" <<TOML
[observability]
log-level = "warn"
observation-path = "$dir/observe"

[synchronization]
minimum-agreeing-sources = 1

[source-defaults]
poll-interval-limits = { min = $NTPD_RS_POLL_LOG2, max = $NTPD_RS_POLL_LOG2 }
initial-poll-interval = $NTPD_RS_POLL_LOG2

[[source]]
mode = "nts"
address = "localhost:${KE[$name]}"
certificate-authority = "$CA"
TOML
        start_daemon "$dir/daemon.log" env NO_COLOR=1 NO_CLOCK_WRITE_QUIET=1 LD_PRELOAD="$NO_CLOCK_WRITE" \
                "$NTPD_RS" -c "$dir/ntp.toml"
        PID[$name]=$DAEMON_PID
}
[ -z "$NTPD_RS" ] || start_ntpd_rs_client ntpdrs-nts
for n in ours-nts ours-nobus ours-plain strace-ours ours-nts4; do
        wait_exec "${PID[$n]}" systemd-timesyncd
        assert_no_sys_time "${PID[$n]}" "$n"
done
for n in chrony-nts strace-chrony chrony-nts4; do
        wait_exec "${PID[$n]}" chronyd
        assert_no_sys_time "${PID[$n]}" "$n"
done
if [ -n "$NTPD_RS" ]; then
        wait_exec "${PID[ntpdrs-nts]}" ntp-daemon
        assert_no_sys_time "${PID[ntpdrs-nts]}" ntpdrs-nts
fi
synced() {
        grep -q "Initial clock synchronization" "$W/ours-nts/daemon.log" &&
                grep -q "Initial clock synchronization" "$W/ours-nobus/daemon.log" &&
                grep -q "Initial clock synchronization" "$W/ours-plain/daemon.log" &&
                grep -q "Initial clock synchronization" "$W/strace-ours/daemon.log" &&
                grep -q "Initial clock synchronization" "$W/ours-nts4/daemon.log" &&
                grep -q "4 of 4 NTS sources agree" "$W/ours-nts4/daemon.log" &&
                [ "$(served chrony-nts)" -ge 1 ] && [ "$(served strace-chrony)" -ge 1 ] &&
                [ "$(chrony_serverstat "$W/srv-chrony-nts4-4" "NTP packets received")" -ge 1 ] &&
                { [ -z "$NTPD_RS" ] || [ "$(served ntpdrs-nts)" -ge 1 ]; }
}
wait_for 30 synced || fail "not every client synchronized within 30 s: $(for n in ours-nts ours-nobus ours-plain strace-ours ours-nts4; do
        printf '%s %s sync lines; ' "$n" "$(grep -c "Initial clock synchronization\|4 of 4 NTS sources agree" "$W/$n/daemon.log")"; done
        for n in chrony-nts strace-chrony chrony-nts4-1 chrony-nts4-2 chrony-nts4-3 chrony-nts4-4; do
        printf '%s served %s; ' "$n" "$(chrony_serverstat "$W/srv-$n" "NTP packets received")"; done)"
sleep 2

# CPU time in ns of every thread of PID (schedstat: precise, unlike the 10 ms ticks of stat).
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/${3:-status}"; }

# CPU per poll in rounds: each client's figure is the median over the rounds, and each ratio
# the median of the ratios within a round, which saw the same load on both sides. Nothing is
# traced meanwhile: strace slows what it traces and loads the machine for the others, so the
# system calls are counted afterwards.
CPU_ROUNDS=${BENCH_CPU_ROUNDS:-5}
CPU_CLIENTS=(ours-nts ours-nobus ours-plain chrony-nts ours-nts4 chrony-nts4 ${NTPD_RS:+ntpdrs-nts})
round_sec=$(awk -v p="$POLLS" -v s="$POLL_SEC" -v r="$CPU_ROUNDS" 'BEGIN { print p * s / r }')
declare -A CPU0 POLL0 BUSCPU0 NPOLL
for n in "${CPU_CLIENTS[@]}"; do
        NPOLL[$n]=0
        : >"$W/cpu-$n.rounds"
        : >"$W/bus-$n.rounds"
done
# us_per_poll NS0 NS1 POLLS
us_per_poll() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { if (p > 0) printf "%.1f\n", (b - a) / p / 1000; else print "n/a" }'; }
t_start=$EPOCHREALTIME
for r in $(seq "$CPU_ROUNDS"); do
        for n in "${CPU_CLIENTS[@]}"; do
                CPU0[$n]=$(cpu_ns "${PID[$n]}")
                POLL0[$n]=$(served "$n")
                [ -n "${BUSPID[$n]:-}" ] && BUSCPU0[$n]=$(cpu_ns "${BUSPID[$n]}")
        done
        sleep "$round_sec"
        for n in "${CPU_CLIENTS[@]}"; do
                p=$(( $(served "$n") - POLL0[$n] ))
                NPOLL[$n]=$(( NPOLL[$n] + p ))
                us_per_poll "${CPU0[$n]}" "$(cpu_ns "${PID[$n]}")" "$p" >>"$W/cpu-$n.rounds"
                [ -n "${BUSPID[$n]:-}" ] && us_per_poll "${BUSCPU0[$n]}" "$(cpu_ns "${BUSPID[$n]}")" "$p" >>"$W/bus-$n.rounds"
        done
        log "CPU round $r of $CPU_ROUNDS: $(for n in "${CPU_CLIENTS[@]}"; do printf '%s %s us, ' "$n" "$(tail -n1 "$W/cpu-$n.rounds")"; done)"
done
t_end=$EPOCHREALTIME
# rounds_of CLIENT: its per-round figures, comma-separated.
rounds_of() { paste -sd, "$W/cpu-$1.rounds" | sed 's/,/, /g'; }
# round_ratios A B: the per-round ratios A/B, one per line.
round_ratios() { paste "$W/cpu-$1.rounds" "$W/cpu-$2.rounds" | awk '$1 != "n/a" && $2 != "n/a" && $2 > 0 { printf "%.3f\n", $1 / $2 }'; }
declare -A CPUPOLL BUSPOLL CPURATIO CPURATIOS RSS HWM PSS ANON LIBS SSL THREADS
for n in "${CPU_CLIENTS[@]}"; do
        CPUPOLL[$n]=$(fmt "$(grep -v n/a "$W/cpu-$n.rounds" | median)" 1)
        BUSPOLL[$n]=$(fmt "$(grep -v n/a "$W/bus-$n.rounds" | median)" 1)
done
for pair in ours-nts:chrony-nts ours-nobus:chrony-nts ours-nts4:chrony-nts4 chrony-nts4:chrony-nts \
        ours-nts:ntpdrs-nts ntpdrs-nts:chrony-nts; do
        if [ ! -e "$W/cpu-${pair%%:*}.rounds" ] || [ ! -e "$W/cpu-${pair##*:}.rounds" ]; then
                CPURATIO[$pair]=n/a
                CPURATIOS[$pair]="not measured"
                continue
        fi
        CPURATIO[$pair]=$(fmt "$(round_ratios "${pair%%:*}" "${pair##*:}" | median)" 2)
        CPURATIOS[$pair]=$(round_ratios "${pair%%:*}" "${pair##*:}" | awk '{ printf "%s%.2f", (NR > 1 ? ", " : ""), $1 } END { print "" }')
done
BUSPOLL[ours-nobus]="none (no bus)"
BUSPOLL[chrony-nts]="none (no bus)"
BUSPOLL[chrony-nts4]="none (no bus)"
for n in ours-nts ours-plain chrony-nts ours-nts4 chrony-nts4 ${NTPD_RS:+ntpdrs-nts}; do
        p=${PID[$n]}
        RSS[$n]=$(kb "$p" VmRSS)
        HWM[$n]=$(kb "$p" VmHWM)
        PSS[$n]=$(kb "$p" Pss smaps_rollup)
        ANON[$n]=$(kb "$p" RssAnon)
        awk '$6 ~ /\.so/ { print $6 }' "/proc/$p/maps" | sort -u | xargs -n1 basename >"$W/$n.libs"
        LIBS[$n]=$(wc -l <"$W/$n.libs")
        THREADS[$n]=$(find "/proc/$p/task" -mindepth 1 -maxdepth 1 | wc -l)
        SSL[$n]=$(grep -cE 'libssl|libcrypto' "$W/$n.libs" || true)
done
# Where ours' memory is: libcrypto's and libssl's pages, libcrypto's relocated data, the heap.
# smaps_sum PID FIELD REGEX: the sum of FIELD (Rss, Private_Dirty) over the mappings whose path
# matches REGEX, KiB.
smaps_sum() {
        awk -v f="$2:" -v re="$3" '/^[0-9a-f]+-[0-9a-f]+ / { m = ($6 ~ re) } m && $1 == f { s += $2 } END { print s + 0 }' "/proc/$1/smaps"
}
CRYPTO_DIRTY=$(smaps_sum "${PID[ours-nts]}" Private_Dirty '/libcrypto[.]so')
HEAP_OURS=$(smaps_sum "${PID[ours-nts]}" Private_Dirty '^[[]heap[]]$')
HEAP_CHRONY=$(smaps_sum "${PID[chrony-nts]}" Private_Dirty '^[[]heap[]]$')
HEAP_PLAIN=$(smaps_sum "${PID[ours-plain]}" Private_Dirty '^[[]heap[]]$')
CRYPTO_RSS=$(smaps_sum "${PID[ours-nts]}" Rss '/libcrypto[.]so')
SSL_RSS=$(smaps_sum "${PID[ours-nts]}" Rss '/libssl[.]so')
# The libraries the NTS daemon mapped, and whether their ELF flags forbid unloading.
SSL_SO=$(awk '$6 ~ /\/libssl[.]so/ { print $6; exit }' "/proc/${PID[ours-nts]}/maps")
CRYPTO_SO=$(awk '$6 ~ /\/libcrypto[.]so/ { print $6; exit }' "/proc/${PID[ours-nts]}/maps")
flags_1() { if [ -n "$1" ]; then readelf -d "$1" | sed -n 's/.*(FLAGS_1) *Flags: *//p'; else echo "n/a"; fi; }
SSL_FLAGS=$(flags_1 "$SSL_SO")
CRYPTO_FLAGS=$(flags_1 "$CRYPTO_SO")
window=$(awk -v a="$t_start" -v b="$t_end" 'BEGIN { printf "%.0f", b - a }')

# System calls, once the CPU rounds are over: every system call of the traced instances (-y:
# with the path of each descriptor, so that writes to files show as such), and strace's count
# at the end (-C). The clients with one source are second instances that the CPU figures do
# not include; those with four sources are the same ones. About as many polls each, a quarter
# of the CPU window.
log "system calls: $POLLS polls' worth"
for n in strace-ours strace-chrony ours-nts4 chrony-nts4; do
        POLL0[$n]=$(served "$n")
        strace -C -f -y -s 200 -p "${PID[$n]}" -o "$W/$n.trace" &
        PID[$n-tracer]=$!
done
window4=$(awk -v p="$POLLS" -v s="$POLL_SEC" 'BEGIN { print p * s / 4 }')
sleep "$window4"
for n in strace-ours strace-chrony ours-nts4 chrony-nts4; do
        kill -INT "${PID[$n-tracer]}"
        wait "${PID[$n-tracer]}" 2>/dev/null || true
        NPOLL[$n-traced]=$(( $(served "$n") - POLL0[$n] ))
done
NPOLL[strace-ours]=${NPOLL[strace-ours-traced]}
NPOLL[strace-chrony]=${NPOLL[strace-chrony-traced]}
# strace's count (the lines from its header on) apart from the trace.
for n in strace-ours strace-chrony ours-nts4 chrony-nts4; do
        sed -n '/^% time/,$p' "$W/$n.trace" >"$W/$n.strace"
done

# The same comparison on an otherwise quiet machine: every other client stopped, only ours with
# one source (and its bus) and chronyd with one source polling, in rounds as above. Under the
# load of eight clients on 2 CPUs the figures differ; both are reported.
QUIET_ROUNDS=${BENCH_QUIET_ROUNDS:-5}
log "quiet pair: ours-nts and chrony-nts alone, $QUIET_ROUNDS rounds"
for n in ours-nobus ours-plain strace-ours strace-chrony ours-nts4 chrony-nts4 ${NTPD_RS:+ntpdrs-nts}; do
        stop_daemon "${PID[$n]}"
done
sleep 2
quiet_sec=$(awk -v p="$POLLS" -v s="$POLL_SEC" -v r="$QUIET_ROUNDS" 'BEGIN { print p * s / 2 / r }')
for n in ours-nts chrony-nts; do
        : >"$W/quiet-$n.rounds"
done
for r in $(seq "$QUIET_ROUNDS"); do
        for n in ours-nts chrony-nts; do
                CPU0[$n]=$(cpu_ns "${PID[$n]}")
                POLL0[$n]=$(served "$n")
        done
        sleep "$quiet_sec"
        for n in ours-nts chrony-nts; do
                us_per_poll "${CPU0[$n]}" "$(cpu_ns "${PID[$n]}")" "$(( $(served "$n") - POLL0[$n] ))" >>"$W/quiet-$n.rounds"
        done
done
QUIET_OURS=$(fmt "$(grep -v n/a "$W/quiet-ours-nts.rounds" | median)" 1)
QUIET_CHRONY=$(fmt "$(grep -v n/a "$W/quiet-chrony-nts.rounds" | median)" 1)
QUIET_RATIOS=$(paste "$W/quiet-ours-nts.rounds" "$W/quiet-chrony-nts.rounds" |
        awk '$1 != "n/a" && $2 != "n/a" && $2 > 0 { printf "%.3f\n", $1 / $2 }')
QUIET_RATIO=$(fmt "$(median <<<"$QUIET_RATIOS")" 2)
QUIET_RATIO_LIST=$(awk '{ printf "%s%.2f", (NR > 1 ? ", " : ""), $1 } END { print "" }' <<<"$QUIET_RATIOS")

# Writes to the disk per poll: the system calls of the trace that write a file or change one on
# the file system (-y names each descriptor's file; sockets and pipes are not files), and those
# that name the daemon's state directory. The log goes to a pipe here, to the journal's socket
# in a real unit: neither counts.
# disk_writes TRACE [PATH [BUT]]: the count; with PATH only those naming PATH, and not BUT.
disk_writes() {
        awk -v path="${2:-}" -v but="${3:-}" '
                /^% time/ { exit }
                {
                        call = $2; sub(/\(.*/, "", call)
                        w = 0
                        if (call ~ /^(p?writev?|pwrite64|pwritev2|ftruncate|fallocate|fsync|fdatasync|sync|syncfs|sync_file_range)$/)
                                w = $0 ~ /\(-?[0-9]+<\// && $0 !~ /\(-?[0-9]+<\/dev\//
                        else if (call ~ /^(rename|renameat2?|unlink|unlinkat|rmdir|mkdir|mkdirat|link|linkat|symlink|symlinkat|utimensat|futimesat|utimes|utime|fchmod|fchmodat|fchown|fchownat|chmod|chown|truncate|creat)$/)
                                w = 1
                        else if (call ~ /^(open|openat|openat2)$/)
                                w = $0 ~ /O_(WRONLY|RDWR|CREAT|TRUNC)/
                        # The log file (the stdout of the daemon): counted apart, log_lines
                        if (index($0, "/daemon.log>"))
                                w = 0
                        if (w && (path == "" || index($0, path)) && (but == "" || !index($0, but)))
                                n++
                }
                END { print n + 0 }' "$1"
}
# log_lines TRACE: the writes to the daemon's log file (its stdout here, the journal's socket in
# a unit, where journald may store each line on the disk).
log_lines() { awk '/^% time/ { exit } $2 ~ /^write\(/ && index($0, "/daemon.log>") { n++ } END { print n + 0 }' "$1"; }
# log_messages TRACE: what those lines said, each distinct message once, separated by "; ".
log_messages() {
        awk '/^% time/ { exit } $2 ~ /^write\(/ && index($0, "/daemon.log>") {
                m = $0; sub(/^[^"]*"/, "", m); sub(/(\\n)?"(\.\.\.)?, [0-9]+\) += .*$/, "", m)
                if (!(m in seen)) { seen[m] = 1; printf "%s\"%s\"", (n++ ? "; " : ""), m } }
                END { if (!n) printf "none" }' "$1"
}
# The clock file apart: its SaveIntervalSec= timer (60 s) touches it whatever the polls.
declare -A WRITES STATEWRITES CLOCKWRITES LOGLINES LOGMSGS
for n in ours-nts ours-nts4; do
        t=$W/$n.trace d=$W/$n/state
        [ "$n" = ours-nts ] && t=$W/strace-ours.trace d=$W/strace-ours/state
        WRITES[$n]=$(disk_writes "$t" / "$d/clock")
        STATEWRITES[$n]=$(disk_writes "$t" "$d" "$d/clock")
        CLOCKWRITES[$n]=$(disk_writes "$t" "$d/clock")
        LOGLINES[$n]=$(log_lines "$t")
        LOGMSGS[$n]=$(log_messages "$t")
done
WRITES[chrony-nts]=$(disk_writes "$W/strace-chrony.trace")
WRITES[chrony-nts4]=$(disk_writes "$W/chrony-nts4.trace")
LOGLINES[chrony-nts]=$(log_lines "$W/strace-chrony.trace")
LOGLINES[chrony-nts4]=$(log_lines "$W/chrony-nts4.trace")
# strace -c columns: % time, seconds, usecs/call, calls, [errors,] syscall.
sys_per_poll() {
        awk -v p="$2" '$NF == "total" { if (p > 0) printf "%.1f\n", $4 / p; else print "n/a" }' "$1"
}
sys_ours=$(sys_per_poll "$W/strace-ours.strace" "${NPOLL[strace-ours]}")
sys_chrony=$(sys_per_poll "$W/strace-chrony.strace" "${NPOLL[strace-chrony]}")
sys_ours4=$(sys_per_poll "$W/ours-nts4.strace" "${NPOLL[ours-nts4-traced]}")
sys_chrony4=$(sys_per_poll "$W/chrony-nts4.strace" "${NPOLL[chrony-nts4-traced]}")
top_syscalls() {
        awk '$NF != "total" && $1 ~ /^[0-9.]+$/ { print $4, $NF }' "$1" | sort -rn | head -8 |
                awk -v p="$2" '{ printf "%s%s %.1f", (NR > 1 ? ", " : ""), $2, $1 / p } END { print "" }'
}
# strace -c sorts by system time: the first rows with their share.
top_time() {
        awk '$NF != "total" && $1 ~ /^[0-9.]+$/ { printf "%s%s %.0f%%", (n++ ? ", " : ""), $NF, $1; if (n == 4) exit } END { print "" }' "$1"
}
time_ours=$(top_time "$W/strace-ours.strace")
time_chrony=$(top_time "$W/strace-chrony.strace")
top_ours=$(top_syscalls "$W/strace-ours.strace" "${NPOLL[strace-ours]}")
top_chrony=$(top_syscalls "$W/strace-chrony.strace" "${NPOLL[strace-chrony]}")
time_ours4=$(top_time "$W/ours-nts4.strace")
time_chrony4=$(top_time "$W/chrony-nts4.strace")
top_ours4=$(top_syscalls "$W/ours-nts4.strace" "${NPOLL[ours-nts4-traced]}")
top_chrony4=$(top_syscalls "$W/chrony-nts4.strace" "${NPOLL[chrony-nts4-traced]}")

# ---- weight ----
size_of() { stat -c %s "$1"; }
stripped_size() { strip -o "$W/stripped" "$1" && stat -c %s "$W/stripped"; }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' '; }
ours_size=$(size_of "$TIMESYNCD")
ours_stripped=$(stripped_size "$TIMESYNCD")
chrony_size=$(size_of "$CHRONYD")
chrony_stripped=$(stripped_size "$CHRONYD")
stock_size=n/a
stock_stripped=n/a
stock_needed=n/a
if [ -x "$STOCK_TIMESYNCD" ]; then
        stock_size=$(size_of "$STOCK_TIMESYNCD")
        stock_stripped=$(stripped_size "$STOCK_TIMESYNCD")
        stock_needed=$(needed "$STOCK_TIMESYNCD")
fi

# The guest's figures (stock timesyncd next to ours and chronyd) come from the mkosi suite when
# it has written them: $NTS_MKOSI_DIR/guest-bench.tsv, lines "client<TAB>metric<TAB>value<TAB>unit".
# They are kept in docs/bench-guest.tsv, first line saying where they come from, so that a run
# of the bench without a new run of the mkosi suite keeps the last ones.
GUEST_NEW=${NTS_MKOSI_DIR:-$SRC/build-mkosi}/guest-bench.tsv
GUEST_TSV=$SRC/docs/bench-guest.tsv
if [ -s "$GUEST_NEW" ]; then
        {
                echo "# test/mkosi/run.sh, $GUEST_NEW of $(date -u -r "$GUEST_NEW" '+%Y-%m-%d %H:%M UTC'), copied by bench/run.sh at commit $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)"
                grep -v '^#' "$GUEST_NEW"
        } >"$GUEST_TSV"
fi
GUEST_ORIGIN=$(sed -n '1s/^# //p' "$GUEST_TSV" 2>/dev/null || true)
if [ -s "$GUEST_TSV" ]; then
        GUEST_STATUS="measured there by the mkosi suite (test/mkosi/run.sh), table in section 4."
elif [ -s "$SRC/docs/BENCHMARKS-GUEST.md" ]; then
        GUEST_STATUS="measured there by the mkosi suite (test/mkosi/run.sh), see [BENCHMARKS-GUEST.md](BENCHMARKS-GUEST.md)."
else
        GUEST_STATUS="not measured yet: run test/mkosi/run.sh before the bench."
fi

# The guest's CPU, system calls and D-Bus signals per poll, ours with NTS against stock with
# plain NTP, one table per Debian suite: guest-cpu.tsv of each suite's mkosi run (CI's
# build-mkosi, build-mkosi-trixie, build-mkosi-forky; NTS_MKOSI_CPU_DIRS names others), first
# line "# SUITE, ...". Kept in docs/bench-guest-cpu-SUITE.tsv as the memory table is.
MKOSI_BASE=${NTS_MKOSI_DIR:-$SRC/build-mkosi}
for d in ${NTS_MKOSI_CPU_DIRS:-$MKOSI_BASE $MKOSI_BASE-trixie $MKOSI_BASE-forky}; do
        [ "$(grep -vc '^#' "$d/guest-cpu.tsv" 2>/dev/null)" -gt 0 ] 2>/dev/null || continue
        cpu_suite=$(sed -n '1s/^# \([a-z]*\),.*/\1/p' "$d/guest-cpu.tsv")
        case $cpu_suite in
        bookworm | trixie | forky) cp "$d/guest-cpu.tsv" "$SRC/docs/bench-guest-cpu-$cpu_suite.tsv" ;;
        esac
done

# guest_kib CLIENT METRIC: a value of the guest table (first column starting with CLIENT, second
# with METRIC)
guest_kib() {
        awk -F'\t' -v c="$1" -v m="$2" 'index($1, c) == 1 && index($2, m) == 1 { print $3; exit }' "$GUEST_TSV" 2>/dev/null
}

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- plot ----
log "plot"
cat >"$W/plot.dat" <<EOF
"ours, no NTS" ${RSS[ours-plain]} ${HWM[ours-plain]} ${PSS[ours-plain]} ${CPUPOLL[ours-plain]}
"ours, NTS" ${RSS[ours-nts]} ${HWM[ours-nts]} ${PSS[ours-nts]} ${CPUPOLL[ours-nts]}
"chronyd, NTS" ${RSS[chrony-nts]} ${HWM[chrony-nts]} ${PSS[chrony-nts]} ${CPUPOLL[chrony-nts]}
EOF
gnuplot <<EOF
set terminal pngcairo size 1100,420 font "DejaVu Sans,10" noenhanced
set output "$PNG"
set multiplot layout 1,2 title "Clients side by side, $POLLS polls of $POLL_SEC s on loopback ($STARTED)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set yrange [0:*]
set key top left
set title "Memory (KiB)"
plot "$W/plot.dat" using 2:xtic(1) title "RSS (steady)", "" using 3 title "RSS (peak)", "" using 4 title "PSS"
set title "CPU per poll (us, all threads, schedstat)"
set key off
plot "$W/plot.dat" using 5:xtic(1) title "CPU per poll"
unset multiplot
EOF

# ---- memory figures for the document ----
kib_add() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || a == "" || b == "") print "n/a"; else print a + b }'; }
kib_sub() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || a == "" || b == "") print "n/a"; else print a - b }'; }
# Ours without NTS plus what libcrypto and the AES-SIV context cost in bench-memory-stages: the
# least the daemon could be with NTS, even with libssl never mapped.
mem_floor=$(kib_add "${RSS[ours-plain]}" "$(mem_delta "$W/mem-ca.tsv" start "AES-SIV context, one packet sealed" 2)")
# The same after the what-if (code pages dropped, one poll's crypto run again).
mem_whatif=$(kib_add "${RSS[ours-plain]}" "$(mem_delta "$W/mem-ca.tsv" start "what-if: then one poll's crypto" 2)")
gap_rss=$(kib_sub "${RSS[ours-nts]}" "${RSS[chrony-nts]}")
gap_anon=$(kib_sub "${ANON[ours-nts]}" "${ANON[chrony-nts]}")
gap_file=$(kib_sub "$gap_rss" "$gap_anon")
# On Debian 12, systemd's own library links libcrypto: PID 1 and most systemd daemons map it.
systemd_shared=
for f in /usr/lib/*/systemd/libsystemd-shared-*.so /lib/systemd/libsystemd-shared-*.so; do
        [ -e "$f" ] && { systemd_shared=$f; break; }
done
if [ -n "$systemd_shared" ] && needed "$systemd_shared" | grep -qw 'libcrypto[.]so[.]3'; then
        crypto_sharers="systemd's $(basename "$systemd_shared"), installed here, links libcrypto.so.3: where systemd runs, PID 1 and most systemd daemons map it too"
else
        crypto_sharers="on Debian 12 systemd's own library links libcrypto.so.3, so PID 1 and most systemd daemons map it too (not installed here)"
fi

# ---- the document ----
log "writing $DOC"
per_poll() { awk -v w="$1" -v p="$2" 'BEGIN { if (p > 0) printf "%.3f\n", w / p; else print "n/a" }'; }
cpu_verdict=$(awk -v r="${CPURATIO[ours-nts:chrony-nts]}" 'BEGIN { if (r == "n/a") print "not measured"; else if (r <= 1) print "met"; else print "NOT met" }')
# With four sources: where ours stands against chronyd, from the same kind of ratio.
cpu4_place=$(awk -v r="${CPURATIO[ours-nts4:chrony-nts4]}" 'BEGIN { if (r == "n/a") print "not measured against"; else if (r < 1) print "below"; else if (r == 1) print "level with"; else print "ABOVE" }')
bus_cost=$(awk -v a="${CPUPOLL[ours-nts]}" -v b="${CPUPOLL[ours-nobus]}" 'BEGIN { if (a == "n/a" || b == "n/a") print "n/a"; else printf "%.1f\n", a - b }')
SAVE_INTERVAL_SEC=60
day_ours=$(awk -v c="${CPUPOLL[ours-nts]}" 'BEGIN { printf "%.0f", c * 1000 / 1000 }')
day_chrony=$(awk -v c="${CPUPOLL[chrony-nts]}" 'BEGIN { printf "%.0f", c * 1000 / 1000 }')
pkt_pair=$(awk -v a="$(pk nts-request 2)" -v b="$(pk nts-verify 2)" 'BEGIN { printf "%.1f", a + b }')
pkt_day=$(awk -v p="$pkt_pair" 'BEGIN { printf "%.1f", p * 1000 / 1e6 }')
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
openssl_version=$(openssl version 2>/dev/null | cut -d' ' -f1-2)
chrony_version=$("$CHRONYD" -v | cut -d' ' -f1-4)
git_rev=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)

row() { printf '| %s | %s | %s | %s | %s |\n' "$@"; }
# per_sec US_PER_POLL POLLS: CPU per second of the CPU rounds' window.
per_sec() { awk -v c="$1" -v p="$2" -v w="$window" 'BEGIN { if (c == "n/a" || w <= 0) print "n/a"; else printf "%.1f\n", c * p / w }'; }
# ntpd_rs_section: section 5's paragraph on ntpd-rs, measured in the same rounds.
ntpd_rs_section() {
        local n=ntpdrs-nts version
        if [ -z "$NTPD_RS" ]; then
                echo "Not measured in this run: no ntp-daemon of trixie or forky in $TSNTS_PEERS_DIR"
                echo "(test/tools/fetch-peers.sh fetches them) or no no-clock-write.so in the build."
                return
        fi
        version=$("$NTPD_RS" --version 2>&1 | head -n1)
        cat <<SECTION
$version (Debian's, run on this host from its suite's tree), one NTS source on its own chronyd
4.3 server, \`poll-interval-limits\` and \`initial-poll-interval\` at $NTPD_RS_POLL_LOG2 ($(awk -v l="$NTPD_RS_POLL_LOG2" 'BEGIN { printf "%g", 2 ^ l }') s: it polls at
least 1 s apart, a smaller exponent is taken as 0, so where the others poll more often it made
fewer polls in the same window and its CPU per poll carries more of its idle wakeups),
\`minimum-agreeing-sources = 1\` so that it runs its whole clock algorithm on that one source,
log level \`warn\`, in the same rounds as the clients above. ntp-daemon exits at start ("Could
not control clock: Insufficient permissions to interact with the clock", exit status 70) when it
may not set the clock, whatever its configuration, and it has no option that leaves the clock
alone. It ran with test/tools/no-clock-write.so preloaded, which turns every clock_adjtime()
that would change the clock into one that reads it, and, like every client here, without
CAP_SYS_TIME: the kernel would refuse the change anyway, the preload only keeps the refusal
from stopping it. Its steering is therefore computed and not applied, as ours in observe mode.

| | ours, NTS | ntpd-rs, NTS | chronyd, NTS | ours / ntpd-rs | ntpd-rs / chronyd |
|---|---|---|---|---|---|
| polls in the window | ${NPOLL[ours-nts]} | ${NPOLL[$n]:-n/a} | ${NPOLL[chrony-nts]} | | |
| CPU per poll (us, median of rounds; ratios: median of the rounds' ratios) | ${CPUPOLL[ours-nts]} | ${CPUPOLL[$n]:-n/a} | ${CPUPOLL[chrony-nts]} | ${CPURATIO[ours-nts:$n]} | ${CPURATIO[$n:chrony-nts]} |
| CPU per second of the window (us) | $(per_sec "${CPUPOLL[ours-nts]}" "${NPOLL[ours-nts]}") | $(per_sec "${CPUPOLL[$n]:-n/a}" "${NPOLL[$n]:-0}") | $(per_sec "${CPUPOLL[chrony-nts]}" "${NPOLL[chrony-nts]}") | | |
| CPU per poll, each round (us) | $(rounds_of ours-nts) | $(rounds_of "$n") | $(rounds_of chrony-nts) | ${CPURATIOS[ours-nts:$n]} | ${CPURATIOS[$n:chrony-nts]} |
| RSS steady (KiB) | ${RSS[ours-nts]} | ${RSS[$n]:-n/a} | ${RSS[chrony-nts]} | $(ratio "${RSS[ours-nts]}" "${RSS[$n]:-n/a}") | $(ratio "${RSS[$n]:-n/a}" "${RSS[chrony-nts]}") |
| RSS peak (KiB) | ${HWM[ours-nts]} | ${HWM[$n]:-n/a} | ${HWM[chrony-nts]} | $(ratio "${HWM[ours-nts]}" "${HWM[$n]:-n/a}") | $(ratio "${HWM[$n]:-n/a}" "${HWM[chrony-nts]}") |
| PSS (KiB) | ${PSS[ours-nts]} | ${PSS[$n]:-n/a} | ${PSS[chrony-nts]} | $(ratio "${PSS[ours-nts]}" "${PSS[$n]:-n/a}") | $(ratio "${PSS[$n]:-n/a}" "${PSS[chrony-nts]}") |
| anonymous memory (KiB) | ${ANON[ours-nts]} | ${ANON[$n]:-n/a} | ${ANON[chrony-nts]} | $(ratio "${ANON[ours-nts]}" "${ANON[$n]:-n/a}") | $(ratio "${ANON[$n]:-n/a}" "${ANON[chrony-nts]}") |
| shared libraries mapped | ${LIBS[ours-nts]} | ${LIBS[$n]:-n/a} | ${LIBS[chrony-nts]} | | |

ntp-daemon links only libc, libm and libgcc_s (Rust's standard library and its TLS stack,
rustls, are in the binary; no libssl or libcrypto) and runs ${THREADS[$n]} threads at the end of the
window; its polls are counted by its server as the others'.
SECTION
}
prow() {
        local c=$1
        # shellcheck disable=SC2016 # the backticks are Markdown's
        printf '| `%s` | %s | %s | %s | %s | %s |\n' "$c" "$(fmt "$(pk "$c" 2)")" "$(fmt "$(pk "$c" 3)")" \
                "$(pi "$c")" "$(fmt "$(pk "$c" 4)" 1)" "$(awk -v c="$c" -F'\t' '$1 == c { print $2 }' "$W/packet-cases.tsv")"
}

{
cat <<EOF
# Benchmarks

Generated by \`bench/run.sh\` (\`ninja -C build bench\`) on $STARTED from commit $git_rev; do
not edit by hand, rerun it. Machine: $(nproc) CPUs ($cpu_model), kernel $(uname -r),
$openssl_version, $chrony_version. The machine is shared: load average $LOAD_BEFORE before the
run and $LOAD_AFTER after. That is why the tables give medians, ratios measured within one
round (both sides see the same load), CPU time rather than wall time where it matters, and
instruction counts from callgrind, which do not depend on load at all. \`perf stat -e
instructions\` does not work on this machine (the counter is not supported in this VM).

Every daemon ran without CAP_SYS_TIME (\`setpriv --bounding-set=-sys_time\`, checked in
/proc/PID/status), ours with \`--observe\`, chronyd with \`-x\` or \`-Q\`, ntpd-rs with its clock
changes turned into reads (section 5); all traffic on loopback
against chronyd 4.3 NTS servers (\`local stratum 1\`, one server per measured client so that
its counters are that client's polls). The clock guard of test/lib checked that the kernel
clock discipline was unchanged.

## Summary

| | ours | chronyd 4.3 | ours / chronyd |
|---|---|---|---|
| NTS request + verify per packet (CPU, ns) | $pkt_pair | n/a (not separable) | |
| key exchange trusting the system store, one-shot process CPU (ms) | $(fmt "$sys_proc_ours") | $(fmt "$sys_proc_chrony") | $(ratio "$sys_proc_ours" "$sys_proc_chrony") |
| key exchange, connect to close, strace (ms) | $(fmt "$ks_ours") | $(fmt "$ks_chrony") | $(ratio "$ks_ours" "$ks_chrony") |
| one-shot process: KE (+ NTP for chronyd), CPU (ms) | $(fmt "$kp_ours_cpu") | $(fmt "$kp_chrony_cpu") | $(ratio "$kp_ours_cpu" "$kp_chrony_cpu") |
| first authenticated sample, cold (ms) | $(fmt "$first_cold") | $(fmt "$first_ccold") | $(ratio "$first_cold" "$first_ccold") |
| first authenticated sample, warm (ms) | $(fmt "$first_warm") | $(fmt "$first_cwarm") | $(ratio "$first_warm" "$first_cwarm") |
| RSS steady, NTS (KiB) | ${RSS[ours-nts]} | ${RSS[chrony-nts]} | $(ratio "${RSS[ours-nts]}" "${RSS[chrony-nts]}") |
| RSS peak, NTS (KiB) | ${HWM[ours-nts]} | ${HWM[chrony-nts]} | $(ratio "${HWM[ours-nts]}" "${HWM[chrony-nts]}") |
| PSS, NTS (KiB) | ${PSS[ours-nts]} | ${PSS[chrony-nts]} | $(ratio "${PSS[ours-nts]}" "${PSS[chrony-nts]}") |
| anonymous memory (the process's own), NTS (KiB) | ${ANON[ours-nts]} | ${ANON[chrony-nts]} | $(ratio "${ANON[ours-nts]}" "${ANON[chrony-nts]}") |
| CPU per poll, NTS (us; ratio: median of $CPU_ROUNDS rounds' ratios) | ${CPUPOLL[ours-nts]} | ${CPUPOLL[chrony-nts]} | ${CPURATIO[ours-nts:chrony-nts]} |
| CPU per poll, NTS, the two alone on a quiet machine (section 5) (us) | $QUIET_OURS | $QUIET_CHRONY | $QUIET_RATIO |
| CPU per poll, NTS, ours without a system bus (what-if, section 5) (us) | ${CPUPOLL[ours-nobus]} | ${CPUPOLL[chrony-nts]} | ${CPURATIO[ours-nobus:chrony-nts]} |
| RSS steady, 4 NTS sources (KiB) | ${RSS[ours-nts4]} | ${RSS[chrony-nts4]} | $(ratio "${RSS[ours-nts4]}" "${RSS[chrony-nts4]}") |
| PSS, 4 NTS sources (KiB) | ${PSS[ours-nts4]} | ${PSS[chrony-nts4]} | $(ratio "${PSS[ours-nts4]}" "${PSS[chrony-nts4]}") |
| CPU per poll (one packet to one of the 4), 4 NTS sources (us) | ${CPUPOLL[ours-nts4]} | ${CPUPOLL[chrony-nts4]} | ${CPURATIO[ours-nts4:chrony-nts4]} |
| syscalls per poll, NTS | $sys_ours | $sys_chrony | $(ratio "$sys_ours" "$sys_chrony") |
| syscalls per poll, 4 NTS sources | $sys_ours4 | $sys_chrony4 | $(ratio "$sys_ours4" "$sys_chrony4") |
| writes to the disk per poll, NTS (section 7) | $(per_poll "${WRITES[ours-nts]}" "${NPOLL[strace-ours]}") | $(per_poll "${WRITES[chrony-nts]}" "${NPOLL[strace-chrony]}") | |
| writes to the disk per poll, 4 NTS sources | $(per_poll "${WRITES[ours-nts4]}" "${NPOLL[ours-nts4-traced]}") | $(per_poll "${WRITES[chrony-nts4]}" "${NPOLL[chrony-nts4-traced]}") | |
| binary, stripped (bytes) | $ours_stripped | $chrony_stripped | $(ratio "$ours_stripped" "$chrony_stripped") |

Stock Debian systemd-timesyncd refuses to start without CAP_SYS_TIME, which this host never
grants, so it can only be measured inside the qemu guest of the mkosi suite: $GUEST_STATUS
Its binary is listed under Weight.

## Where we lose, and why

- **Memory with NTS**: RSS $(ratio "${RSS[ours-nts]}" "${RSS[chrony-nts]}")x, PSS $(ratio "${PSS[ours-nts]}" "${PSS[chrony-nts]}")x and anonymous memory (the process's own: heap,
  relocated library data) $(ratio "${ANON[ours-nts]}" "${ANON[chrony-nts]}")x chronyd's. Without NTS servers OpenSSL is never mapped and ours
  is $(ratio "${RSS[ours-plain]}" "${RSS[chrony-nts]}")x chronyd's RSS. The target "RSS at or below chronyd's with NTS" is not met, and
  cannot be with OpenSSL 3 as Debian ships it (section 4, "What can be given back", each idea
  measured): libcrypto with the AES-SIV context that every poll needs costs
  $(mem_delta "$W/mem-ca.tsv" start "AES-SIV context, one packet sealed" 2) KiB of RSS by itself, so ours without NTS plus that alone is $mem_floor KiB,
  $(ratio "$mem_floor" "${RSS[chrony-nts]}")x chronyd's, even with the key exchange in a helper process and libssl never mapped;
  libssl cannot be unloaded between key exchanges (ELF flag NODELETE); malloc_trim(0) after
  them returns $(mem_delta "$W/mem-ca.tsv" "malloc_trim(0)" "after ten more" 3) KiB. Of the RSS difference of $gap_rss KiB, $gap_file KiB are file pages
  (library code and read-only data, shared with every process mapping the same library,
  reclaimable page cache) and $gap_anon KiB anonymous memory.
- **CPU per poll with one NTS source**: ${CPURATIO[ours-nts:chrony-nts]}x chronyd's, the median of the
  ratios of the $CPU_ROUNDS rounds (${CPURATIOS[ours-nts:chrony-nts]}), so the target "at or below chronyd's" is
  $cpu_verdict in this run; with the two alone on an otherwise quiet machine $QUIET_RATIO
  (rounds $QUIET_RATIO_LIST); without a system bus ${CPURATIO[ours-nobus:chrony-nts]}x (section 5). What ours does
  and chronyd does not is the D-Bus signal that every reply sends (PropertiesChanged of
  NTPMessage, as stock systemd-timesyncd sends it; \`timedatectl timesync-status --monitor\` shows
  each reply from it): $bus_cost us per poll in ours, and routing it costs the bus daemon
  another $(if [ "${BUSPOLL[ours-nts]}" != n/a ]; then echo "${BUSPOLL[ours-nts]} us"; else echo "CPU"; fi) (last column of section 5). Building the message is not
  what costs: on 2026-12-05, outside this bench, callgrind counted about 30 000 instructions
  per poll for the whole emission (sd-bus's property lookup and message building, 60 % of
  the daemon's user-space instructions per poll), yet the same daemon building the message by
  hand without the lookup measured the same CPU per poll, and one on a bus that sent no
  signal measured as without a bus: the cost is the sendmsg() and the bus daemon's wakeup it
  causes, which any signal per reply pays. Room for it was made elsewhere (issue
  18): AES-SIV on two keyed AES contexts instead of libcrypto's AES-SIV cipher (section 1, no
  allocation per packet), only the used part of the reply's scratch buffer zeroed, no
  adjtimex() per poll, no gettid() per loop pass. The system calls per poll are fewer than
  chronyd's with one source and with four (section 6), and nothing is written to the disk per
  poll (section 7): the cookie jar is written at a clean stop only and removed durably when a
  start loads it (docs/NTS.md, "Cookie persistence"). With four sources ours is $cpu4_place chronyd
  per poll (${CPURATIO[ours-nts4:chrony-nts4]}x, rounds ${CPURATIOS[ours-nts4:chrony-nts4]}), signal included: the signal goes with the selected source's samples
  only. For scale: chronyd's two clients, with one source and with four, do the same work per
  poll and measured ${CPUPOLL[chrony-nts]} and ${CPUPOLL[chrony-nts4]} us in this run (${CPURATIO[chrony-nts4:chrony-nts]}x within rounds);
  between runs on this shared machine each figure moves by 10 to 20 %, which is why the
  ratios are taken within rounds.
- **Where the memory goes** (section 4, step by step): libcrypto and one AES-SIV context
  are $(mem_delta "$W/mem-ca.tsv" start "AES-SIV context, one packet sealed" 2) KiB of RSS, libssl and the key exchanges $(mem_delta "$W/mem-ca.tsv" "AES-SIV context, one packet sealed" "after ten more" 2) KiB more: a key exchange
  in a separate process could save at most the latter, not enough to get below chronyd.
  Most of ours' anonymous memory is libcrypto's relocated data ($CRYPTO_DIRTY KiB) and the heap
  ($HEAP_OURS KiB, without NTS $HEAP_PLAIN KiB; chronyd's $HEAP_CHRONY KiB).
- **Key exchange as a one-shot process**: CPU $(ratio "$kp_ours_cpu" "$kp_chrony_cpu")x \`chronyd -Q\`'s, mostly loading and
  initialising OpenSSL 3 in a fresh process (near 1: a loss in some runs, not in others); the
  exchange itself (connect to close) is faster than chronyd's.
$(if [ -s "$GUEST_TSV" ]; then
        printf -- '- **Against stock systemd-timesyncd** (qemu guest, section 4): without NTS servers ours is %sx stock'"'"'s RSS\n  and %sx its PSS (target: within 1.1x), with NTS %sx the RSS and %sx the PSS of chronyd as an NTS client\n  in the same guest. Memory is not where we lose to stock.' \
                "$(ratio "$(guest_kib "ours, no NTS" RSS)" "$(guest_kib stock RSS)")" "$(ratio "$(guest_kib "ours, no NTS" PSS)" "$(guest_kib stock PSS)")" \
                "$(ratio "$(guest_kib "ours, NTS" RSS)" "$(guest_kib chronyd RSS)")" "$(ratio "$(guest_kib "ours, NTS" PSS)" "$(guest_kib chronyd PSS)")"
else
        printf -- '- **Stock systemd-timesyncd** is not in these tables yet (see above).'
fi)

![RSS and CPU per poll](bench-rss-cpu.png)

The plot: left, memory of each client at the end of the steady-state window (section 4); right,
CPU per poll over the same window (section 5).

## 1. Per-packet cost

\`bench/bench-packet.c\`, linked with the project's static libraries: AES-SIV-CMAC-256, a
request spending one 100-byte cookie (chrony's size) with 7 placeholders, a response with 8 new
cookies built by test/tools/nts-server-ef; $(sed -n 's/^# request \([0-9]*\) bytes, response \([0-9]*\) bytes.*/request \1 bytes, response \2 bytes/p' "$W/packet.tsv"). Each case runs 5000 times per round, 21 rounds interleave the cases, ns/op is
the median (and minimum) over rounds of wall time per operation on one core. Instructions/op
come from one callgrind run of 1000 operations per case (client requests zero and dump the
counters around each case); they exclude the kernel, so a getrandom() counts a few
instructions only. Allocations/op count calls of malloc/calloc/realloc (the bench defines
them, so libcrypto's count too).

| case | ns/op (median) | ns/op (min) | instructions/op | allocations/op | what |
|---|---|---|---|---|---|
EOF
while IFS=$'\t' read -r c _; do prow "$c"; done <"$W/packet-cases.tsv"
cat <<EOF

Ratios, each the median over the 21 rounds of the ratio within one round:

| ratio | wall time | instructions |
|---|---|---|
| NTS request / libcrypto's way (\`nts-request\` / \`floor-seal\`) | $(pr nts-request/floor-seal) | $(ratio "$(pi nts-request)" "$(pi floor-seal)") |
| NTS verify / libcrypto's way (\`nts-verify\` / \`floor-open-copy\`) | $(pr nts-verify/floor-open-copy) | $(ratio "$(pi nts-verify)" "$(pi floor-open-copy)") |
| NTS verify / libcrypto's AES-SIV with a new key schedule | $(pr nts-verify/floor-open-rekey) | $(ratio "$(pi nts-verify)" "$(pi floor-open-rekey)") |
| template copy / new key schedule (libcrypto variants) | $(pr floor-open-copy/floor-open-rekey) | $(ratio "$(pi floor-open-copy)" "$(pi floor-open-rekey)") |
| module AEAD seal / libcrypto's way | $(pr aead-seal/floor-seal) | $(ratio "$(pi aead-seal)" "$(pi floor-seal)") |
| module AEAD open / libcrypto's way | $(pr aead-open/floor-open-copy) | $(ratio "$(pi aead-open)" "$(pi floor-open-copy)") |
| NTS request / plain NTP request | $(pr nts-request/ntp-request) | $(ratio "$(pi nts-request)" "$(pi ntp-request)") |

The \`floor-*\` cases are the same AES-SIV work on the same bytes done libcrypto's way, through
the sym_ pointers, with objects keyed once outside the loop. They were the floor while the
daemon used libcrypto's AES-SIV; since issue 18 it runs its own AES-SIV on two keyed AES
contexts (src/shared/aes-siv.c, docs/NTS.md "AES-SIV on libcrypto's AES"), and these cases are
the baseline it is measured against. For the request: S2V alone (four CMACs on one keyed
EVP_MAC context): an NTS request seals an empty plaintext, whose AES-SIV output is the S2V
value, and OpenSSL 3.0's AES-SIV cipher refuses an empty plaintext. For the response: EVP
AES-128-SIV decryption with the tag check, in two variants: a copy of a keyed template per
operation (what nts-crypto-openssl.c did before aes-siv.c) and a new key schedule per
operation on a reused context. A third variant, re-initialising the keyed context without a
key, is not usable: on OpenSSL 3.0.22 the second open after it already fails to verify.

Where the time goes:
- Request: the Unique Identifier and the authenticator's nonce come from a pool of kernel
  random bytes (\`random_bytes_pooled()\`, one getrandom() per KiB, i.e. per ~20 requests), so
  no system call is left on the per-request path; the fields themselves (\`request-fields\`)
  are small. A getrandom() call costs about as much as half of the seal (\`getrandom-16\`,
  \`getrandom-32\`).
- Response: the parsing (\`response-walk\`) is a few percent; the AES-SIV open dominates.
  libcrypto's way copies a keyed template per open (\`ctx-copy\`: it allocates, libcrypto
  duplicates the provider context and the CMAC inside it), and its AES-SIV allocates more
  inside; ours allocates nothing.
- Nothing on the per-packet path allocates; the AES work itself is a CBC pass (CMAC) over the
  associated data and, for a reply, a CTR pass and a CBC pass over the plaintext.

## 2. Key exchange

Against a chronyd 4.3 NTS-KE server on 127.0.0.1 (ECDSA P-256 test certificate, TLS 1.3):

| | ours | chronyd -Q |
|---|---|---|
| in-process, session start to keys + cookies, median of $((KE_RUNS - 1)) (ms wall / ms CPU) | $(fmt "$(awk -v v="$ke_wall" 'BEGIN { print v / 1000 }')" 2) / $(fmt "$(awk -v v="$ke_cpu" 'BEGIN { print v / 1000 }')" 2) | n/a (no hook) |
| in-process, first session (loads libssl/libcrypto) (ms wall / ms CPU) | $(fmt "$(awk -v v="$ke_first_wall" 'BEGIN { print v / 1000 }')" 2) / $(fmt "$(awk -v v="$ke_first_cpu" 'BEGIN { print v / 1000 }')" 2) | |
| strace: connect() to close() of the KE socket, median of $FIRST_RUNS (ms) | $(fmt "$ks_ours") | $(fmt "$ks_chrony") |
| whole one-shot process, median of $FIRST_RUNS (ms wall / ms CPU) | $(fmt "$kp_ours_wall" 0) / $(fmt "$kp_ours_cpu" 0) | $(fmt "$kp_chrony_wall" 0) / $(fmt "$kp_chrony_cpu" 0) |

Ours is \`bench/bench-ke.c\`: nts-ke-client on sd-event, the same call the daemon makes
(NTS_aead_offer, CA file, hostname verification), $KE_RUNS sessions in one process; its CPU is
CLOCK_PROCESS_CPUTIME_ID over the session. chronyd has no way to time its key exchange from
outside but the system calls, so both run once per process under \`strace -f -ttt -e
trace=connect,close\` and the interval from connect() to the KE port until close() of that
socket is taken (strace slows both alike). The whole-process figures (wall time, and user +
system CPU from wait4()) are
not the same work: ours is process start, library loading and one key exchange; \`chronyd -Q\`
(\`iburst minpoll -6\`, the reference client of PEERS.md) also polls NTP until it has its
measurement, which is most of its wall time.

Where the wall time goes: CPU is a few ms, the rest of our ~$(fmt "$(awk -v v="$ke_wall" 'BEGIN { print v / 1000 }')" 0) ms is waiting for the
server. The key exchange socket has TCP_NODELAY set (nts-ke-client.c): without it, the client's
TLS Finished and its NTS-KE request left in two segments and Nagle's algorithm held the second
until the server's delayed ACK of the first, 40 ms on Linux; the first version of this
benchmark measured 48 ms per key exchange for that reason, against 4 ms with TCP_NODELAY
forced by an LD_PRELOAD shim.

### Trusting the system store

Without \`NTSTrustedCertificates=\` the daemon trusts the system store ($n_system_certs certificates
in $BUNDLE here). OpenSSL's default paths would parse that whole bundle for every new TLS
context, that is for every key exchange; the daemon reads the hashed directory next to it
instead (/etc/ssl/certs, one file per issuer looked up; nts-tls.c), unless SSL_CERT_FILE names
a bundle. A copy of the store with the test CA added, the same $KE_RUNS sessions as above:

| | CPU per key exchange, median (ms) |
|---|---|
| ours, hashed directory (the daemon's default) | $(fmt "$sys_ke_dir" 2) |
| ours, the bundle (\`SSL_CERT_FILE=\`, what OpenSSL's default paths do) | $(fmt "$sys_ke_bundle" 2) |
| ours, the test CA file alone (table above) | $(fmt "$(awk -v v="$ke_cpu" 'BEGIN { print v / 1000 }')" 2) |

| whole one-shot process trusting the system store, median of $FIRST_RUNS (ms CPU) | ours | chronyd -Q |
|---|---|---|
| | $(fmt "$sys_proc_ours" 0) | $(fmt "$sys_proc_chrony" 0) |

## 3. Time to the first authenticated sample

From launch to the first NTS-authenticated result, median of $FIRST_RUNS runs each, against the
same local chronyd server; timestamps are taken when the line is read from the process's
output (a pipe, the logs carry no sub-second times):

| | ours (daemon, --observe) | chronyd -Q |
|---|---|---|
| cold: no cookies (key exchange + NTP) (ms) | $(fmt "$first_cold") | $(fmt "$first_ccold") |
| warm: cookies from the state directory (ms) | $(fmt "$first_warm") | $(fmt "$first_cwarm") |

Ours: \`systemd-timesyncd --observe\` with \`NTS=localhost:PORT\`, until "Initial clock
synchronization ... NTS authenticated" (it takes the first good sample); cold runs start with
an empty state directory, warm runs after a cold one, which left its cookies there (the log
says "Resuming NTS", checked). chronyd: \`chronyd -Q\` until "System clock wrong by", which
needs several samples (iburst at 1/64 s); warm runs use \`ntsdumpdir\`, where chronyd keeps its
client cookies between runs. The server accepted $chrony_ke_total key exchanges in total over
these $((FIRST_RUNS * 5)) runs ($((FIRST_RUNS * 3)) of them cold): a count of $((FIRST_RUNS * 3))
means every warm run of both clients went without one.

## 4. Memory

At the end of the steady-state window (section 5), from /proc/PID/status (VmRSS, VmHWM = peak,
RssAnon = anonymous) and /proc/PID/smaps_rollup (Pss), in KiB. Three of ours with NTS run at
once (section 5) and share the pages of libssl and libcrypto, which lowers their PSS; the
chronyd NTS servers share GnuTLS's with the chronyd client the same way.

| client | RSS steady | RSS peak | PSS | anonymous | shared objects mapped | libssl/libcrypto mapped |
|---|---|---|---|---|---|---|
| ours, no NTS servers (\`NTP=\`) | ${RSS[ours-plain]} | ${HWM[ours-plain]} | ${PSS[ours-plain]} | ${ANON[ours-plain]} | ${LIBS[ours-plain]} | $([ "${SSL[ours-plain]}" = 0 ] && echo no || echo "yes (${SSL[ours-plain]})") |
| ours, NTS | ${RSS[ours-nts]} | ${HWM[ours-nts]} | ${PSS[ours-nts]} | ${ANON[ours-nts]} | ${LIBS[ours-nts]} | $([ "${SSL[ours-nts]}" = 0 ] && echo no || echo "yes (${SSL[ours-nts]})") |
| chronyd -x, \`server ... nts\` | ${RSS[chrony-nts]} | ${HWM[chrony-nts]} | ${PSS[chrony-nts]} | ${ANON[chrony-nts]} | ${LIBS[chrony-nts]} | $([ "${SSL[chrony-nts]}" = 0 ] && echo "no (GnuTLS)" || echo yes) |
| stock systemd-timesyncd | $GUEST_STATUS | | | | | |

Shared objects: ours without NTS: $(paste -sd' ' "$W/ours-plain.libs"). Ours with NTS adds:
$(comm -13 "$W/ours-plain.libs" "$W/ours-nts.libs" | paste -sd' '). chronyd:
$(paste -sd' ' "$W/chrony-nts.libs").
$(if [ -s "$GUEST_TSV" ]; then
        printf '\nIn the qemu guest of the mkosi suite (%s), one client after the other against the same\nlocal server:\n\n| client | metric | value | unit |\n|---|---|---|---|\n' "$GUEST_ORIGIN"
        awk -F'\t' '!/^#/ && NF >= 3 { printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$GUEST_TSV"
fi)
$(for cpu_suite in bookworm trixie forky; do
        f=$SRC/docs/bench-guest-cpu-$cpu_suite.tsv
        [ -s "$f" ] || continue
        printf '\nCPU, system calls and D-Bus signals per poll in the qemu guest of %s (%s): ours with NTS\nand stock with plain NTP, one after the other, against the same chronyd, both polling every\n16 s (run-tests.sh, cpu_per_poll). The guest runs under software emulation (TCG), so the\nCPU times are far above a real machine'"'"'s, and the host'"'"'s load, which changes between the two\nwindows, moves them; the system calls and signals do not depend on it. Where clock_gettime is\nlisted, the guest'"'"'s vDSO did not answer it (a traced call is one that entered the kernel).\n\n| client | metric | value | unit |\n|---|---|---|---|\n' \
                "$cpu_suite" "$(sed -n '1s/^# [a-z]*, //p' "$f")"
        awk -F'\t' '!/^#/ && NF >= 3 { printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$f"
done)

### Where the memory of NTS goes

\`bench/bench-memory-stages.c\` walks the daemon's path in one fresh process and reads
/proc/self/status and /proc/self/smaps after each step (KiB; "file" pages are library code and
data touched so far, shared with every process mapping the same files; "anon" pages are the
process's own: heap, relocated library data; the libcrypto and libssl columns are the pages of
their mappings, of either kind). After the key exchanges it tries what could give memory back
(next section). The last three columns are the RSS of the same walk trusting the system store
instead of the test CA, and with the test CA but OpenSSL initialised without its configuration
file (\`OPENSSL_INIT_NO_LOAD_CONFIG\`) or without its error strings
(\`OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS\`, \`OPENSSL_INIT_NO_LOAD_SSL_STRINGS\`):

| step | RSS | anon | file | libcrypto | libssl | libssl mapped | RSS, system store: directory | RSS, system store: bundle | RSS, no configuration | RSS, no error strings |
|---|---|---|---|---|---|---|---|---|---|---|
$(for st in "start" "libcrypto loaded" "AES-SIV context, one packet sealed" "libssl loaded" "after one key exchange" "after ten more" \
        "malloc_trim(0)" "libssl dlclose()d" "what-if: OpenSSL code pages dropped" "what-if: then one poll's crypto"; do
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$st" "$(mem "$W/mem-ca.tsv" "$st" 2)" "$(mem "$W/mem-ca.tsv" "$st" 3)" \
                "$(mem "$W/mem-ca.tsv" "$st" 4)" "$(mem "$W/mem-ca.tsv" "$st" 5)" "$(mem "$W/mem-ca.tsv" "$st" 6)" "$(mem "$W/mem-ca.tsv" "$st" 7)" \
                "$(mem "$W/mem-sysdir.tsv" "$st" 2)" "$(mem "$W/mem-bundle.tsv" "$st" 2)" "$(mem "$W/mem-noconf.tsv" "$st" 2)" "$(mem "$W/mem-nostrings.tsv" "$st" 2)"
done)

libcrypto with the AES-SIV context, which every NTS poll needs, is $(mem_delta "$W/mem-ca.tsv" start "AES-SIV context, one packet sealed" 2) KiB of RSS; libssl
and the key exchange add $(mem_delta "$W/mem-ca.tsv" "AES-SIV context, one packet sealed" "after ten more" 2) KiB. Moving the key exchange into a short-lived
helper process would therefore save at most the second figure and leave ours above chronyd's
RSS (ours without NTS, ${RSS[ours-plain]} KiB, plus the first figure is $mem_floor KiB, $(ratio "$mem_floor" "${RSS[chrony-nts]}")x chronyd's): most
of the difference is OpenSSL 3's libcrypto and its default provider, touched as soon as one
cipher is fetched. With the system store, reading the bundle would leave
$(awk -v a="$(mem "$W/mem-sysdir.tsv" "after ten more" 3)" -v b="$(mem "$W/mem-bundle.tsv" "after ten more" 3)" 'BEGIN { if (a == "" || b == "" || a == "n/a" || b == "n/a") print "n/a"; else print b - a }') KiB more anonymous memory than the directory after eleven exchanges.

### What can be given back

Each idea measured, in the table above unless said otherwise:

- **Unloading libssl between key exchanges** is not possible. After \`dlclose()\` of every
  reference libssl is still mapped ("libssl mapped": $(mem "$W/mem-ca.tsv" "libssl dlclose()d" 7)). The libraries the daemon loaded carry the
  ELF flags ${SSL_SO:-libssl} "$SSL_FLAGS" and ${CRYPTO_SO:-libcrypto} "$CRYPTO_FLAGS": OpenSSL's Linux
  build links both with \`-z nodelete\`, because libssl hands libcrypto a cleanup function
  (\`OPENSSL_atexit()\`, imported by libssl) that libcrypto's exit handler calls; with libssl
  unmapped every later exit would jump into nothing. \`OPENSSL_INIT_NO_ATEXIT\` drops that
  handler but not the flag, which no run-time option changes (src/shared/dlopen-util.c opens
  with \`RTLD_NODELETE\` as well). The most unloading could have given back is libssl's own
  pages, $(mem "$W/mem-ca.tsv" "after ten more" 6) KiB; the $(mem_delta "$W/mem-ca.tsv" "AES-SIV context, one packet sealed" "after ten more" 5) KiB of libcrypto that the exchanges touched stay either way.
- **malloc_trim(0)** after the exchanges returns $(mem_delta "$W/mem-ca.tsv" "malloc_trim(0)" "after ten more" 3) KiB of heap: the memory the exchanges free lies
  between OpenSSL's long-lived allocations (method stores, name maps), so little of it forms
  whole free pages. The daemon does not call it.
- **Fetching only the ciphers used**: fetching AES-SIV adds $(mem_delta "$W/mem-ca.tsv" "libcrypto loaded" "AES-SIV context, one packet sealed" 3) KiB of heap and $(mem_delta "$W/mem-ca.tsv" "libcrypto loaded" "AES-SIV context, one packet sealed" 5) KiB
  of libcrypto pages. OpenSSL 3.0's \`EVP_CIPHER_fetch()\` of one cipher builds the methods of
  every cipher the default provider offers (its method store is filled per operation, not per
  algorithm) and loads the provider; there is no call that fetches one algorithm alone, and
  the daemon fetches nothing but AES-SIV and CMAC. A library context of its own for the key
  exchange (\`OSSL_LIB_CTX_new()\`, \`SSL_CTX_new_ex()\`, freed after each exchange) was tried
  once (2026-12-04, not rerun by this script): after eleven exchanges and malloc_trim(0) the
  heap was 112 KiB larger than with the default context, since each exchange builds a second
  set of method stores and not all of it goes back.
- **OpenSSL's configuration and error strings**: from the start to ten more exchanges the RSS
  grows by $(mem_delta "$W/mem-ca.tsv" start "after ten more" 2) KiB with both (the start itself varied by $(cat "$W"/mem-*.tsv | awk -F'\t' '$1 == "start" { if (n++ == 0 || $2 < lo) lo = $2; if ($2 > hi) hi = $2 } END { print hi - lo }') KiB between the walks); without the
  configuration file by $(mem_delta "$W/mem-noconf.tsv" start "after ten more" 2) KiB (Debian's openssl.cnf is short); without the error
  strings by $(mem_delta "$W/mem-nostrings.tsv" start "after ten more" 2) KiB, the anonymous part by $(mem_delta "$W/mem-nostrings.tsv" start "after ten more" 3) KiB instead of $(mem_delta "$W/mem-ca.tsv" start "after ten more" 3) (the string
  tables are read from libcrypto and hashed into the heap). The daemon keeps both: the configuration is the administrator's, and without the
  strings every TLS failure in the log and in NTSStatus would be a bare error code.
- **malloc arenas**: the daemon is single-threaded but for the resolver thread.
  \`MALLOC_ARENA_MAX=1\` in the environment of the NTS daemon changed its anonymous memory
  from 1320 to 1304 KiB (measured once, 2026-12-04, not rerun by this script).
- **What-if, code pages dropped** (not done by the daemon): \`MADV_DONTNEED\` on the
  executable mappings of libssl and libcrypto after the exchanges takes the RSS to
  $(mem "$W/mem-ca.tsv" "what-if: OpenSSL code pages dropped" 2) KiB; the next poll's crypto faults $(mem_delta "$W/mem-ca.tsv" "what-if: OpenSSL code pages dropped" "what-if: then one poll's crypto" 2) KiB of them back in (the kernel maps a
  fault's neighbouring pages too). In the daemon that would be about ${RSS[ours-plain]} + $(mem_delta "$W/mem-ca.tsv" start "what-if: then one poll's crypto" 2) =
  $mem_whatif KiB, $(ratio "$mem_whatif" "${RSS[chrony-nts]}")x chronyd's RSS, and only the figure would move: those pages stay in the page
  cache (which free(1) counts as buff/cache, mapped or not) and are shared with every other
  process using libcrypto ($crypto_sharers). The read-only data after relocation must not be
  dropped: it is the process's own relocated copy, and dropping it brought back the file's
  unrelocated bytes (the first try of this bench crashed on it).

So of ours' $gap_rss KiB of RSS above chronyd's, $gap_file KiB are file pages (in the daemon
libcrypto's mappings hold $CRYPTO_RSS KiB and libssl's $SSL_RSS KiB, of either kind), which dropping
them would take out of the figure but not out of the machine's memory, and $gap_anon KiB are the
process's own: mostly libcrypto's relocated data ($CRYPTO_DIRTY KiB in the daemon) and a heap of
$HEAP_OURS KiB (without NTS $HEAP_PLAIN KiB) against chronyd's $HEAP_CHRONY KiB; the difference is
OpenSSL's method stores, name maps and error strings.

## 5. CPU over a simulated day

$POLLS polls, measured: each client polled every $POLL_SEC s (ours \`--observe
--test-poll-interval=${POLL_MS}ms\`, which replaces the 16 s floor of PollIntervalMinSec= in
observe mode only; chronyd \`minpoll $POLL_LOG2 maxpoll $POLL_LOG2\`), all at the same time, for
$POLLS polls after their first synchronization (the key exchange is outside the window), in
$CPU_ROUNDS rounds of equal length. Each figure is the median over the rounds, each ratio the median
of the ratios within a round (both sides saw the same load). A
day at the default poll interval of the stock daemon (32 s to 34 min) is a few hundred to a
few thousand polls; the per-poll work does not depend on the interval. CPU is the sum over
all threads of /proc/PID/task/*/schedstat (ns resolution), polls are the NTP packets the
client's own server counted; window $window s.

| client | polls in window | CPU per poll (us) | per round (us) | CPU for 1000 polls (ms) | its dbus-daemon, CPU per poll (us) |
|---|---|---|---|---|---|
| ours, no NTS | ${NPOLL[ours-plain]} | ${CPUPOLL[ours-plain]} | $(rounds_of ours-plain) | $(awk -v c="${CPUPOLL[ours-plain]}" 'BEGIN { printf "%.0f", c }') | ${BUSPOLL[ours-plain]} |
| ours, NTS | ${NPOLL[ours-nts]} | ${CPUPOLL[ours-nts]} | $(rounds_of ours-nts) | $day_ours | ${BUSPOLL[ours-nts]} |
| ours, NTS, without a system bus (what-if) | ${NPOLL[ours-nobus]} | ${CPUPOLL[ours-nobus]} | $(rounds_of ours-nobus) | $(awk -v c="${CPUPOLL[ours-nobus]}" 'BEGIN { printf "%.0f", c }') | ${BUSPOLL[ours-nobus]} |
| chronyd, NTS | ${NPOLL[chrony-nts]} | ${CPUPOLL[chrony-nts]} | $(rounds_of chrony-nts) | $day_chrony | ${BUSPOLL[chrony-nts]} |
| ours, 4 NTS sources | ${NPOLL[ours-nts4]} | ${CPUPOLL[ours-nts4]} | $(rounds_of ours-nts4) | $(awk -v c="${CPUPOLL[ours-nts4]}" 'BEGIN { printf "%.0f", c }') | ${BUSPOLL[ours-nts4]} |
| chronyd, 4 NTS sources | ${NPOLL[chrony-nts4]} | ${CPUPOLL[chrony-nts4]} | $(rounds_of chrony-nts4) | $(awk -v c="${CPUPOLL[chrony-nts4]}" 'BEGIN { printf "%.0f", c }') | ${BUSPOLL[chrony-nts4]} |

Ratios within rounds (median, then each round's): ours/chronyd with one source
${CPURATIO[ours-nts:chrony-nts]} (${CPURATIOS[ours-nts:chrony-nts]}); without a bus ${CPURATIO[ours-nobus:chrony-nts]} (${CPURATIOS[ours-nobus:chrony-nts]}); with four sources
${CPURATIO[ours-nts4:chrony-nts4]} (${CPURATIOS[ours-nts4:chrony-nts4]}).

The same two clients with one source alone, after every other client was stopped (and after
the system call traces below), in $QUIET_ROUNDS rounds of $quiet_sec s: ours $QUIET_OURS us, chronyd
$QUIET_CHRONY us per poll (medians), ratio $QUIET_RATIO (rounds $QUIET_RATIO_LIST). With the machine
otherwise idle, ours' D-Bus signal and the wakeup of its bus daemon weigh more against what
was saved elsewhere than under the load of eight clients.

With four NTS sources (\`NTS=\` four servers, chronyd four \`server ... nts\` lines) a poll is one
exchange with one of them, counted by the four servers together: each source polls on its own
schedule, so a poll round (every source once) is four polls. Besides the exchange, each of
ours' polls runs the selection over the four (\`source_set_select()\`: the candidates' grown
root distances and \`ntp_select()\`), and the clock follows only the selected source's new
samples; the \`Sources\` property is invalidated at most once per poll round. RSS and PSS are
those of the process with four key exchanges' keys and cookie jars: $(ratio "${RSS[ours-nts4]}" "${RSS[ours-nts]}")x the RSS of ours with one
source, chronyd $(ratio "${RSS[chrony-nts4]}" "${RSS[chrony-nts]}")x its own.

The CPU per poll includes everything the process did in the window (timers, D-Bus property
signals for ours, logging), divided by the polls. Each of ours has a system bus of its own, so
the last column is what routing its signals cost that dbus-daemon: one PropertiesChanged per
poll, sent with the reply (the daemon sent two, each with every steady property, until
5f8ac2b). The per-packet path alone (section 1,
request + verify = $pkt_pair ns) makes $pkt_day ms for 1000 polls: the crypto is a small part
of the per-poll cost. The row without a system bus is the same daemon with
\`DBUS_SYSTEM_BUS_ADDRESS\` naming a socket where nothing listens, in a directory of its own
under /run: no connection, no signal, no bus descriptor in its event loop. It waits for the
socket as the real /run/dbus is waited for, with an inotify watch on each directory of the
path; under /tmp, where the other clients and tests create files all the time, every such
file woke it and it tried to connect (460 us per poll in a run of 2026-12-05 against 217 us
on a quiet machine). The difference to "ours, NTS", $bus_cost us per poll, is
what the PropertiesChanged signal of each reply costs the daemon itself (building and sending
it, the bus connection's work in each pass of the event loop); chronyd has no bus. The cookie
jar is no longer in these figures: it is written at a clean stop only (section 7). Until
85688a4 it was written (a temporary file, fsync(), rename() and an fsync() of the directory)
before every third request: 412 us per poll against 279 us with the state directory on tmpfs
in the run of cf1a3e9; the first version wrote it twice per poll and paid 8x chronyd's CPU per
poll for it. A key exchange every
time the cookies run out is not in these figures (with 8 cookies refilled on every reply it
happens only after lost replies); one costs $(fmt "$(awk -v v="$ke_cpu" 'BEGIN { print v / 1000 }')" 2) ms CPU (section 2).

### The second anchor: ntpd-rs

$(ntpd_rs_section)

## 6. Weight

| | binary (bytes) | stripped (bytes) | DT_NEEDED |
|---|---|---|---|
| ours | $ours_size | $ours_stripped | $(needed "$TIMESYNCD") |
| chronyd 4.3 (Debian) | $chrony_size | $chrony_stripped | $(needed "$CHRONYD") |
| stock systemd-timesyncd 252 (Debian) | $stock_size | $stock_stripped | $stock_needed |

Ours is built \`debugoptimized\` (-O2 -g); chronyd and the stock timesyncd are Debian's
stripped packages, so compare the stripped column. The stock binary links libsystemd-shared
(several MiB, shared with the rest of systemd), ours only libsystemd; ours loads libssl and
libcrypto with dlopen() only when NTS= servers are configured (section 4).

System calls per poll, \`strace -C -f -y\` attached after the CPU rounds, for a quarter of their
time, to a second instance of each client with one source (the CPU figures above come from
untraced instances) and to the clients with four sources:

| client | polls | syscalls per poll | most frequent, per poll | most system time (strace's share) |
|---|---|---|---|---|
| ours, NTS | ${NPOLL[strace-ours]} | $sys_ours | $top_ours | $time_ours |
| chronyd, NTS | ${NPOLL[strace-chrony]} | $sys_chrony | $top_chrony | $time_chrony |
| ours, 4 NTS sources | ${NPOLL[ours-nts4-traced]} | $sys_ours4 | $top_ours4 | $time_ours4 |
| chronyd, 4 NTS sources | ${NPOLL[chrony-nts4-traced]} | $sys_chrony4 | $top_chrony4 | $time_chrony4 |

Ours per poll: the request's sendto() and the reply's recvmsg(); sd-event's two passes (an
epoll_wait() each, a timerfd_settime() for the reply timeout and one for the next poll, a
read() of the timer that fired); the D-Bus signal's sendmsg(). No adjtimex(): in observe mode the
Frequency property reads the kernel's frequency when a client asks for it, and a daemon that
steers takes it from the adjtimex() that steers. With four sources the signal goes with the
selected source's samples only, the \`Sources\` invalidation once per round, and one timer
wakeup can serve more than one source. chronyd opens, connects, sets up and closes a socket
per request (socket(), connect(), three setsockopt(), close()) and waits in pselect().

## 7. Writes to the disk

The traces of the previous section, $POLL_SEC s polls: every system call that writes a file or
changes one on the file system (write() to a file, open() for writing or creating, rename(),
unlink(), utimensat(), fsync() and the like; -y names each descriptor's file, so sockets and
pipes do not count). The clock file is counted apart: its \`SaveIntervalSec=\` timer touches
it whatever the polls. So is the daemon's log: its standard output is a file here (in a unit,
the journal's socket, and journald may store each line), so its lines are counted in a column
of their own and not as writes of the daemon.

| client | polls traced | window (s) | writes per poll (clock file and log apart) | of them in the state directory | clock file touched in the window | log lines in the window |
|---|---|---|---|---|---|---|
| ours, NTS | ${NPOLL[strace-ours]} | $window4 | $(per_poll "${WRITES[ours-nts]}" "${NPOLL[strace-ours]}") | ${STATEWRITES[ours-nts]} | ${CLOCKWRITES[ours-nts]} | ${LOGLINES[ours-nts]} |
| ours, 4 NTS sources | ${NPOLL[ours-nts4-traced]} | $window4 | $(per_poll "${WRITES[ours-nts4]}" "${NPOLL[ours-nts4-traced]}") | ${STATEWRITES[ours-nts4]} | ${CLOCKWRITES[ours-nts4]} | ${LOGLINES[ours-nts4]} |
| chronyd, NTS | ${NPOLL[strace-chrony]} | $window4 | $(per_poll "${WRITES[chrony-nts]}" "${NPOLL[strace-chrony]}") | | | ${LOGLINES[chrony-nts]} |
| chronyd, 4 NTS sources | ${NPOLL[chrony-nts4-traced]} | $window4 | $(per_poll "${WRITES[chrony-nts4]}" "${NPOLL[chrony-nts4-traced]}") | | | ${LOGLINES[chrony-nts4]} |

What ours logged in the window, with one source: ${LOGMSGS[ours-nts]}; with four: ${LOGMSGS[ours-nts4]}.

Per day in steady state, from the writes per poll measured above and the daemon's timers (a
key exchange writes nothing either; the cookie jar is written at a clean stop only, one file
per source, and removed durably when the next start loads it):

| sources | poll interval | polls per day | writes per day from polls | clock file (\`SaveIntervalSec=\`, 60 s) per day | state files |
|---|---|---|---|---|---|
$(for src in 1 4; do for iv in 2048 32; do
        n=ours-nts; [ "$src" = 4 ] && n=ours-nts4
        t=strace-ours; [ "$src" = 4 ] && t=ours-nts4-traced
        awk -v s="$src" -v i="$iv" -v w="${WRITES[$n]}" -v p="${NPOLL[$t]}" -v save="$SAVE_INTERVAL_SEC" 'BEGIN {
                polls = s * 86400 / i
                printf "| %d | %d s (%s) | %.0f | %.0f | %.0f (one utimensat() each, no data) | %d written at a clean stop, removed at the next start |\n",
                        s, i, (i == 2048 ? "the default maximum, PollIntervalMaxSec=" : "the minimum, PollIntervalMinSec="), polls,
                        (p > 0 ? w / p * polls : 0), 86400 / save, s }'
done; done)

Stock systemd-timesyncd touches the same clock file at the same interval, and at every sync
as well (up to 2700 times a day at 32 s); ours touches it at the first synchronization and
then by the timer only. chronyd writes nothing while polling here (with \`driftfile\`, not
configured here, it rewrites that file from time to time; its client cookies at exit with
\`ntsdumpdir\`).
EOF
} >"$DOC"
log "done: $DOC, $PNG"
