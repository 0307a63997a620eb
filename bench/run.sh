#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/run.sh [BUILD_DIR]: runs every benchmark of docs/BENCHMARKS.md, writes what they measured
# as the document's figures (docs/bench-figures.tsv, one named figure a line) and renders the
# document from them and its template, bench/BENCHMARKS.md.in (bench/render.sh, which renders
# it again from the figures alone), with the plot docs/bench-rss-cpu.png. The measurements run
# in the order that keeps each one's load known (the long-running clients last), not in the
# document's. `ninja -C build bench` does the same. Needs root (setpriv, like
# the integration tests). What a fresh machine lacks it fetches first, as tools/run-tests.sh
# does: valgrind, strace, gnuplot-nox and the rest of tools/install-deps.sh, and chronyd with
# test/tools/fixtures/fetch-peers.sh into the peers directory: TSNTS_PEERS_DIR, else build-peers/ of
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
export TSNTS_ADJTIMEX_READ=$TSNTS_BUILD_DIR/test/tools/probes/adjtimex-read
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
        log "chronyd not in $TSNTS_PEERS_DIR: running test/tools/fixtures/fetch-peers.sh"
        "$SRC/test/tools/fixtures/fetch-peers.sh" "$TSNTS_PEERS_DIR" >&2
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
# BENCH_OUT=DIR: the document, its figures and the plot go to DIR instead of docs/ (a trial run).
OUT=${BENCH_OUT:-$SRC/docs}
mkdir -p "$OUT"
DOC=$OUT/BENCHMARKS.md
FIGURES=$OUT/bench-figures.tsv
PNG=$OUT/bench-rss-cpu.png
BENCH_PACKET=$TSNTS_BUILD_DIR/bench/bench-packet
BENCH_KE=$TSNTS_BUILD_DIR/bench/bench-ke
BENCH_MEMORY=$TSNTS_BUILD_DIR/bench/bench-memory-stages
BUNDLE=/etc/ssl/certs/ca-certificates.crt
STOCK_TIMESYNCD=/lib/systemd/systemd-timesyncd
# The second anchor: ntpd-rs's ntp-daemon of the newest suite test/tools/fixtures/fetch-peers.sh fetched
# that runs on this host (forky's 1.9, else trixie's 1.4). It exits when it may not set the
# clock, so it runs with no-clock-write.so, which turns its clock changes into reads; like
# every client here it has no CAP_SYS_TIME. Without one the rows say "not measured".
NO_CLOCK_WRITE=$TSNTS_BUILD_DIR/test/tools/preload/no-clock-write.so
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

# ---- 4. memory, step by step along the daemon's path (its second table) ----
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

# ---- 4. to 7.: all clients side by side: memory, CPU, system calls and writes per poll ----
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

# ---- 8. weight ----
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

# ---- memory figures of sections 4 and "Where we lose" ----
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

# ---- the figures of the document, and the document ----
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

# per_sec US_PER_POLL POLLS: CPU per second of the CPU rounds' window.
per_sec() { awk -v c="$1" -v p="$2" -v w="$window" 'BEGIN { if (c == "n/a" || w <= 0) print "n/a"; else printf "%.1f\n", c * p / w }'; }
prow() {
        local c=$1
        # shellcheck disable=SC2016 # the backticks are Markdown's
        printf '| `%s` | %s | %s | %s | %s | %s |\n' "$c" "$(fmt "$(pk "$c" 2)")" "$(fmt "$(pk "$c" 3)")" \
                "$(pi "$c")" "$(fmt "$(pk "$c" 4)" 1)" "$(awk -v c="$c" -F'\t' '$1 == c { print $2 }' "$W/packet-cases.tsv")"
}

# figure NAME VALUE: one figure of the document (bench/render.sh reads them; a backslash and a
# newline in VALUE are written \\ and \n).
: >"$W/figures.tsv"
figure() {
        local v=${2//\\/\\\\}
        printf '%s\t%s\n' "$1" "${v//$'\n'/\\n}" >>"$W/figures.tsv"
}

figure packet-rows "$(while IFS=$'\t' read -r c _; do prow "$c"; done <"$W/packet-cases.tsv")"
figure STARTED "$STARTED"
figure git_rev "$git_rev"
figure cpu_model "$cpu_model"
figure openssl_version "$openssl_version"
figure chrony_version "$chrony_version"
figure LOAD_BEFORE "$LOAD_BEFORE"
figure LOAD_AFTER "$LOAD_AFTER"
figure pkt_pair "$pkt_pair"
figure CPU_ROUNDS "$CPU_ROUNDS"
figure QUIET_OURS "$QUIET_OURS"
figure QUIET_CHRONY "$QUIET_CHRONY"
figure QUIET_RATIO "$QUIET_RATIO"
figure sys_ours "$sys_ours"
figure sys_chrony "$sys_chrony"
figure sys_ours4 "$sys_ours4"
figure sys_chrony4 "$sys_chrony4"
figure ours_stripped "$ours_stripped"
figure chrony_stripped "$chrony_stripped"
figure GUEST_STATUS "$GUEST_STATUS"
figure mem_floor "$mem_floor"
figure gap_rss "$gap_rss"
figure gap_file "$gap_file"
figure gap_anon "$gap_anon"
figure cpu_verdict "$cpu_verdict"
figure QUIET_RATIO_LIST "$QUIET_RATIO_LIST"
figure bus_cost "$bus_cost"
figure cpu4_place "$cpu4_place"
figure CRYPTO_DIRTY "$CRYPTO_DIRTY"
figure HEAP_OURS "$HEAP_OURS"
figure HEAP_PLAIN "$HEAP_PLAIN"
figure HEAP_CHRONY "$HEAP_CHRONY"
figure FIRST_RUNS "$FIRST_RUNS"
figure KE_RUNS "$KE_RUNS"
figure n_system_certs "$n_system_certs"
figure BUNDLE "$BUNDLE"
figure chrony_ke_total "$chrony_ke_total"
figure SSL_FLAGS "$SSL_FLAGS"
figure CRYPTO_FLAGS "$CRYPTO_FLAGS"
figure mem_whatif "$mem_whatif"
figure crypto_sharers "$crypto_sharers"
figure CRYPTO_RSS "$CRYPTO_RSS"
figure SSL_RSS "$SSL_RSS"
figure POLLS "$POLLS"
figure POLL_SEC "$POLL_SEC"
figure POLL_MS "$POLL_MS"
figure POLL_LOG2 "$POLL_LOG2"
figure window "$window"
figure day_ours "$day_ours"
figure day_chrony "$day_chrony"
figure QUIET_ROUNDS "$QUIET_ROUNDS"
figure quiet_sec "$quiet_sec"
figure pkt_day "$pkt_day"
figure ours_size "$ours_size"
figure chrony_size "$chrony_size"
figure stock_size "$stock_size"
figure stock_stripped "$stock_stripped"
figure stock_needed "$stock_needed"
figure top_ours "$top_ours"
figure time_ours "$time_ours"
figure top_chrony "$top_chrony"
figure time_chrony "$time_chrony"
figure top_ours4 "$top_ours4"
figure time_ours4 "$time_ours4"
figure top_chrony4 "$top_chrony4"
figure time_chrony4 "$time_chrony4"
figure window4 "$window4"
figure 'RSS[ours-nts]' "${RSS[ours-nts]}"
figure 'RSS[chrony-nts]' "${RSS[chrony-nts]}"
figure 'RSS[ours-nts4]' "${RSS[ours-nts4]}"
figure 'RSS[chrony-nts4]' "${RSS[chrony-nts4]}"
figure 'RSS[ours-plain]' "${RSS[ours-plain]}"
figure 'HWM[ours-nts]' "${HWM[ours-nts]}"
figure 'HWM[chrony-nts]' "${HWM[chrony-nts]}"
figure 'HWM[ours-plain]' "${HWM[ours-plain]}"
figure 'PSS[ours-nts]' "${PSS[ours-nts]}"
figure 'PSS[chrony-nts]' "${PSS[chrony-nts]}"
figure 'PSS[ours-nts4]' "${PSS[ours-nts4]}"
figure 'PSS[chrony-nts4]' "${PSS[chrony-nts4]}"
figure 'PSS[ours-plain]' "${PSS[ours-plain]}"
figure 'ANON[ours-nts]' "${ANON[ours-nts]}"
figure 'ANON[chrony-nts]' "${ANON[chrony-nts]}"
figure 'ANON[ours-plain]' "${ANON[ours-plain]}"
figure 'CPUPOLL[ours-nts]' "${CPUPOLL[ours-nts]}"
figure 'CPUPOLL[chrony-nts]' "${CPUPOLL[chrony-nts]}"
figure 'CPUPOLL[ours-nobus]' "${CPUPOLL[ours-nobus]}"
figure 'CPUPOLL[ours-nts4]' "${CPUPOLL[ours-nts4]}"
figure 'CPUPOLL[chrony-nts4]' "${CPUPOLL[chrony-nts4]}"
figure 'CPUPOLL[ours-plain]' "${CPUPOLL[ours-plain]}"
figure 'CPURATIO[ours-nts:chrony-nts]' "${CPURATIO[ours-nts:chrony-nts]}"
figure 'CPURATIO[ours-nobus:chrony-nts]' "${CPURATIO[ours-nobus:chrony-nts]}"
figure 'CPURATIO[ours-nts4:chrony-nts4]' "${CPURATIO[ours-nts4:chrony-nts4]}"
figure 'CPURATIO[chrony-nts4:chrony-nts]' "${CPURATIO[chrony-nts4:chrony-nts]}"
figure 'CPURATIOS[ours-nts:chrony-nts]' "${CPURATIOS[ours-nts:chrony-nts]}"
figure 'CPURATIOS[ours-nts4:chrony-nts4]' "${CPURATIOS[ours-nts4:chrony-nts4]}"
figure 'CPURATIOS[ours-nobus:chrony-nts]' "${CPURATIOS[ours-nobus:chrony-nts]}"
figure 'LIBS[ours-plain]' "${LIBS[ours-plain]}"
figure 'LIBS[ours-nts]' "${LIBS[ours-nts]}"
figure 'LIBS[chrony-nts]' "${LIBS[chrony-nts]}"
figure 'NPOLL[ours-plain]' "${NPOLL[ours-plain]}"
figure 'NPOLL[ours-nts]' "${NPOLL[ours-nts]}"
figure 'NPOLL[ours-nobus]' "${NPOLL[ours-nobus]}"
figure 'NPOLL[chrony-nts]' "${NPOLL[chrony-nts]}"
figure 'NPOLL[ours-nts4]' "${NPOLL[ours-nts4]}"
figure 'NPOLL[chrony-nts4]' "${NPOLL[chrony-nts4]}"
figure 'NPOLL[strace-ours]' "${NPOLL[strace-ours]}"
figure 'NPOLL[strace-chrony]' "${NPOLL[strace-chrony]}"
figure 'NPOLL[ours-nts4-traced]' "${NPOLL[ours-nts4-traced]}"
figure 'NPOLL[chrony-nts4-traced]' "${NPOLL[chrony-nts4-traced]}"
figure 'BUSPOLL[ours-plain]' "${BUSPOLL[ours-plain]}"
figure 'BUSPOLL[ours-nts]' "${BUSPOLL[ours-nts]}"
figure 'BUSPOLL[ours-nobus]' "${BUSPOLL[ours-nobus]}"
figure 'BUSPOLL[chrony-nts]' "${BUSPOLL[chrony-nts]}"
figure 'BUSPOLL[ours-nts4]' "${BUSPOLL[ours-nts4]}"
figure 'BUSPOLL[chrony-nts4]' "${BUSPOLL[chrony-nts4]}"
figure 'STATEWRITES[ours-nts]' "${STATEWRITES[ours-nts]}"
figure 'STATEWRITES[ours-nts4]' "${STATEWRITES[ours-nts4]}"
figure 'CLOCKWRITES[ours-nts]' "${CLOCKWRITES[ours-nts]}"
figure 'CLOCKWRITES[ours-nts4]' "${CLOCKWRITES[ours-nts4]}"
figure 'LOGLINES[ours-nts]' "${LOGLINES[ours-nts]}"
figure 'LOGLINES[ours-nts4]' "${LOGLINES[ours-nts4]}"
figure 'LOGLINES[chrony-nts]' "${LOGLINES[chrony-nts]}"
figure 'LOGLINES[chrony-nts4]' "${LOGLINES[chrony-nts4]}"
figure 'LOGMSGS[ours-nts]' "${LOGMSGS[ours-nts]}"
figure 'LOGMSGS[ours-nts4]' "${LOGMSGS[ours-nts4]}"
figure 'nproc' "$(nproc)"
figure 'kernel' "$(uname -r)"
figure 'fmt1(sys_proc_ours)' "$(fmt "$sys_proc_ours")"
figure 'fmt1(sys_proc_chrony)' "$(fmt "$sys_proc_chrony")"
figure 'ratio(sys_proc_ours, sys_proc_chrony)' "$(ratio "$sys_proc_ours" "$sys_proc_chrony")"
figure 'fmt1(ks_ours)' "$(fmt "$ks_ours")"
figure 'fmt1(ks_chrony)' "$(fmt "$ks_chrony")"
figure 'ratio(ks_ours, ks_chrony)' "$(ratio "$ks_ours" "$ks_chrony")"
figure 'fmt1(kp_ours_cpu)' "$(fmt "$kp_ours_cpu")"
figure 'fmt1(kp_chrony_cpu)' "$(fmt "$kp_chrony_cpu")"
figure 'ratio(kp_ours_cpu, kp_chrony_cpu)' "$(ratio "$kp_ours_cpu" "$kp_chrony_cpu")"
figure 'fmt1(first_cold)' "$(fmt "$first_cold")"
figure 'fmt1(first_ccold)' "$(fmt "$first_ccold")"
figure 'ratio(first_cold, first_ccold)' "$(ratio "$first_cold" "$first_ccold")"
figure 'fmt1(first_warm)' "$(fmt "$first_warm")"
figure 'fmt1(first_cwarm)' "$(fmt "$first_cwarm")"
figure 'ratio(first_warm, first_cwarm)' "$(ratio "$first_warm" "$first_cwarm")"
figure 'ratio(RSS[ours-nts], RSS[chrony-nts])' "$(ratio "${RSS[ours-nts]}" "${RSS[chrony-nts]}")"
figure 'ratio(HWM[ours-nts], HWM[chrony-nts])' "$(ratio "${HWM[ours-nts]}" "${HWM[chrony-nts]}")"
figure 'ratio(PSS[ours-nts], PSS[chrony-nts])' "$(ratio "${PSS[ours-nts]}" "${PSS[chrony-nts]}")"
figure 'ratio(ANON[ours-nts], ANON[chrony-nts])' "$(ratio "${ANON[ours-nts]}" "${ANON[chrony-nts]}")"
figure 'ratio(RSS[ours-nts4], RSS[chrony-nts4])' "$(ratio "${RSS[ours-nts4]}" "${RSS[chrony-nts4]}")"
figure 'ratio(PSS[ours-nts4], PSS[chrony-nts4])' "$(ratio "${PSS[ours-nts4]}" "${PSS[chrony-nts4]}")"
figure 'ratio(sys_ours, sys_chrony)' "$(ratio "$sys_ours" "$sys_chrony")"
figure 'ratio(sys_ours4, sys_chrony4)' "$(ratio "$sys_ours4" "$sys_chrony4")"
figure 'per_poll(WRITES[ours-nts], NPOLL[strace-ours])' "$(per_poll "${WRITES[ours-nts]}" "${NPOLL[strace-ours]}")"
figure 'per_poll(WRITES[chrony-nts], NPOLL[strace-chrony])' "$(per_poll "${WRITES[chrony-nts]}" "${NPOLL[strace-chrony]}")"
figure 'per_poll(WRITES[ours-nts4], NPOLL[ours-nts4-traced])' "$(per_poll "${WRITES[ours-nts4]}" "${NPOLL[ours-nts4-traced]}")"
figure 'per_poll(WRITES[chrony-nts4], NPOLL[chrony-nts4-traced])' "$(per_poll "${WRITES[chrony-nts4]}" "${NPOLL[chrony-nts4-traced]}")"
figure 'ratio(ours_stripped, chrony_stripped)' "$(ratio "$ours_stripped" "$chrony_stripped")"
figure 'ratio(RSS[ours-plain], RSS[chrony-nts])' "$(ratio "${RSS[ours-plain]}" "${RSS[chrony-nts]}")"
figure 'mem_delta(ca, start, AES-SIV context, one packet sealed, rss)' "$(mem_delta "$W/mem-ca.tsv" start "AES-SIV context, one packet sealed" 2)"
figure 'ratio(mem_floor, RSS[chrony-nts])' "$(ratio "$mem_floor" "${RSS[chrony-nts]}")"
figure 'mem_delta(ca, malloc_trim(0), after ten more, anon)' "$(mem_delta "$W/mem-ca.tsv" "malloc_trim(0)" "after ten more" 3)"
figure 'bus cost words' "$(if [ "${BUSPOLL[ours-nts]}" != n/a ]; then echo "${BUSPOLL[ours-nts]} us"; else echo "CPU"; fi)"
figure 'mem_delta(ca, AES-SIV context, one packet sealed, after ten more, rss)' "$(mem_delta "$W/mem-ca.tsv" "AES-SIV context, one packet sealed" "after ten more" 2)"
figure 'against-stock-bullet' "$(if [ -s "$GUEST_TSV" ]; then
        printf -- '- **Against stock systemd-timesyncd** (qemu guest, section 4): without NTS servers ours is %sx stock'"'"'s RSS\n  and %sx its PSS (target: within 1.1x), with NTS %sx the RSS and %sx the PSS of chronyd as an NTS client\n  in the same guest. Memory is not where we lose to stock.' \
                "$(ratio "$(guest_kib "ours, no NTS" RSS)" "$(guest_kib stock RSS)")" "$(ratio "$(guest_kib "ours, no NTS" PSS)" "$(guest_kib stock PSS)")" \
                "$(ratio "$(guest_kib "ours, NTS" RSS)" "$(guest_kib chronyd RSS)")" "$(ratio "$(guest_kib "ours, NTS" PSS)" "$(guest_kib chronyd PSS)")"
else
        printf -- '- **Stock systemd-timesyncd** is not in these tables yet (see above).'
fi)"
figure 'packet sizes' "$(sed -n 's/^# request \([0-9]*\) bytes, response \([0-9]*\) bytes.*/request \1 bytes, response \2 bytes/p' "$W/packet.tsv")"
figure 'wall ratio[nts-request/floor-seal]' "$(pr nts-request/floor-seal)"
figure 'ratio(instructions[nts-request], instructions[floor-seal])' "$(ratio "$(pi nts-request)" "$(pi floor-seal)")"
figure 'wall ratio[nts-verify/floor-open-copy]' "$(pr nts-verify/floor-open-copy)"
figure 'ratio(instructions[nts-verify], instructions[floor-open-copy])' "$(ratio "$(pi nts-verify)" "$(pi floor-open-copy)")"
figure 'wall ratio[nts-verify/floor-open-rekey]' "$(pr nts-verify/floor-open-rekey)"
figure 'ratio(instructions[nts-verify], instructions[floor-open-rekey])' "$(ratio "$(pi nts-verify)" "$(pi floor-open-rekey)")"
figure 'wall ratio[floor-open-copy/floor-open-rekey]' "$(pr floor-open-copy/floor-open-rekey)"
figure 'ratio(instructions[floor-open-copy], instructions[floor-open-rekey])' "$(ratio "$(pi floor-open-copy)" "$(pi floor-open-rekey)")"
figure 'wall ratio[aead-seal/floor-seal]' "$(pr aead-seal/floor-seal)"
figure 'ratio(instructions[aead-seal], instructions[floor-seal])' "$(ratio "$(pi aead-seal)" "$(pi floor-seal)")"
figure 'wall ratio[aead-open/floor-open-copy]' "$(pr aead-open/floor-open-copy)"
figure 'ratio(instructions[aead-open], instructions[floor-open-copy])' "$(ratio "$(pi aead-open)" "$(pi floor-open-copy)")"
figure 'wall ratio[nts-request/ntp-request]' "$(pr nts-request/ntp-request)"
figure 'ratio(instructions[nts-request], instructions[ntp-request])' "$(ratio "$(pi nts-request)" "$(pi ntp-request)")"
figure 'KE_RUNS-1' "$((KE_RUNS - 1))"
figure 'fmt2(ke_wall/1000)' "$(fmt "$(awk -v v="$ke_wall" 'BEGIN { print v / 1000 }')" 2)"
figure 'fmt2(ke_cpu/1000)' "$(fmt "$(awk -v v="$ke_cpu" 'BEGIN { print v / 1000 }')" 2)"
figure 'fmt2(ke_first_wall/1000)' "$(fmt "$(awk -v v="$ke_first_wall" 'BEGIN { print v / 1000 }')" 2)"
figure 'fmt2(ke_first_cpu/1000)' "$(fmt "$(awk -v v="$ke_first_cpu" 'BEGIN { print v / 1000 }')" 2)"
figure 'fmt0(kp_ours_wall)' "$(fmt "$kp_ours_wall" 0)"
figure 'fmt0(kp_ours_cpu)' "$(fmt "$kp_ours_cpu" 0)"
figure 'fmt0(kp_chrony_wall)' "$(fmt "$kp_chrony_wall" 0)"
figure 'fmt0(kp_chrony_cpu)' "$(fmt "$kp_chrony_cpu" 0)"
figure 'fmt0(ke_wall/1000)' "$(fmt "$(awk -v v="$ke_wall" 'BEGIN { print v / 1000 }')" 0)"
figure 'fmt2(sys_ke_dir)' "$(fmt "$sys_ke_dir" 2)"
figure 'fmt2(sys_ke_bundle)' "$(fmt "$sys_ke_bundle" 2)"
figure 'fmt0(sys_proc_ours)' "$(fmt "$sys_proc_ours" 0)"
figure 'fmt0(sys_proc_chrony)' "$(fmt "$sys_proc_chrony" 0)"
figure 'FIRST_RUNS*5' "$((FIRST_RUNS * 5))"
figure 'FIRST_RUNS*3' "$((FIRST_RUNS * 3))"
figure 'ssl mapped words[ours-plain]' "$([ "${SSL[ours-plain]}" = 0 ] && echo no || echo "yes (${SSL[ours-plain]})")"
figure 'ssl mapped words[ours-nts]' "$([ "${SSL[ours-nts]}" = 0 ] && echo no || echo "yes (${SSL[ours-nts]})")"
figure 'ssl mapped words[chrony-nts]' "$([ "${SSL[chrony-nts]}" = 0 ] && echo "no (GnuTLS)" || echo yes)"
figure 'libs[ours-plain]' "$(paste -sd' ' "$W/ours-plain.libs")"
figure 'libs added by NTS[ours-nts]' "$(comm -13 "$W/ours-plain.libs" "$W/ours-nts.libs" | paste -sd' ')"
figure 'libs[chrony-nts]' "$(paste -sd' ' "$W/chrony-nts.libs")"
figure 'guest-memory-table' "$(if [ -s "$GUEST_TSV" ]; then
        printf '\nIn the qemu guest of the mkosi suite (%s), one client after the other against the same\nlocal server:\n\n| client | metric | value | unit |\n|---|---|---|---|\n' "$GUEST_ORIGIN"
        awk -F'\t' '!/^#/ && NF >= 3 { printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$GUEST_TSV"
fi)"
figure 'guest-cpu-tables' "$(for cpu_suite in bookworm trixie forky; do
        f=$SRC/docs/bench-guest-cpu-$cpu_suite.tsv
        [ -s "$f" ] || continue
        printf '\nCPU, system calls and D-Bus signals per poll in the qemu guest of %s (%s): ours with NTS\nand stock with plain NTP, one after the other, against the same chronyd, both polling every\n16 s (guest-checks.sh, cpu_per_poll). The guest runs under software emulation (TCG), so the\nCPU times are far above a real machine'"'"'s, and the host'"'"'s load, which changes between the two\nwindows, moves them; the system calls and signals do not depend on it. Where clock_gettime is\nlisted, the guest'"'"'s vDSO did not answer it (a traced call is one that entered the kernel).\n\n| client | metric | value | unit |\n|---|---|---|---|\n' \
                "$cpu_suite" "$(sed -n '1s/^# [a-z]*, //p' "$f")"
        awk -F'\t' '!/^#/ && NF >= 3 { printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$f"
done)"
figure 'memory-stages-table' "$(for st in "start" "libcrypto loaded" "AES-SIV context, one packet sealed" "libssl loaded" "after one key exchange" "after ten more" \
        "malloc_trim(0)" "libssl dlclose()d" "what-if: OpenSSL code pages dropped" "what-if: then one poll's crypto"; do
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$st" "$(mem "$W/mem-ca.tsv" "$st" 2)" "$(mem "$W/mem-ca.tsv" "$st" 3)" \
                "$(mem "$W/mem-ca.tsv" "$st" 4)" "$(mem "$W/mem-ca.tsv" "$st" 5)" "$(mem "$W/mem-ca.tsv" "$st" 6)" "$(mem "$W/mem-ca.tsv" "$st" 7)" \
                "$(mem "$W/mem-sysdir.tsv" "$st" 2)" "$(mem "$W/mem-bundle.tsv" "$st" 2)" "$(mem "$W/mem-noconf.tsv" "$st" 2)" "$(mem "$W/mem-nostrings.tsv" "$st" 2)"
done)"
figure 'mem_delta(sysdir, bundle, after ten more, anon)' "$(awk -v a="$(mem "$W/mem-sysdir.tsv" "after ten more" 3)" -v b="$(mem "$W/mem-bundle.tsv" "after ten more" 3)" 'BEGIN { if (a == "" || b == "" || a == "n/a" || b == "n/a") print "n/a"; else print b - a }')"
figure 'mem(ca, libssl dlclose()d, libssl mapped)' "$(mem "$W/mem-ca.tsv" "libssl dlclose()d" 7)"
figure 'SSL_SO' "${SSL_SO:-libssl}"
figure 'CRYPTO_SO' "${CRYPTO_SO:-libcrypto}"
figure 'mem(ca, after ten more, libssl)' "$(mem "$W/mem-ca.tsv" "after ten more" 6)"
figure 'mem_delta(ca, AES-SIV context, one packet sealed, after ten more, libcrypto)' "$(mem_delta "$W/mem-ca.tsv" "AES-SIV context, one packet sealed" "after ten more" 5)"
figure 'mem_delta(ca, libcrypto loaded, AES-SIV context, one packet sealed, anon)' "$(mem_delta "$W/mem-ca.tsv" "libcrypto loaded" "AES-SIV context, one packet sealed" 3)"
figure 'mem_delta(ca, libcrypto loaded, AES-SIV context, one packet sealed, libcrypto)' "$(mem_delta "$W/mem-ca.tsv" "libcrypto loaded" "AES-SIV context, one packet sealed" 5)"
figure 'mem_delta(ca, start, after ten more, rss)' "$(mem_delta "$W/mem-ca.tsv" start "after ten more" 2)"
figure 'mem start spread' "$(cat "$W"/mem-*.tsv | awk -F'\t' '$1 == "start" { if (n++ == 0 || $2 < lo) lo = $2; if ($2 > hi) hi = $2 } END { print hi - lo }')"
figure 'mem_delta(noconf, start, after ten more, rss)' "$(mem_delta "$W/mem-noconf.tsv" start "after ten more" 2)"
figure 'mem_delta(nostrings, start, after ten more, rss)' "$(mem_delta "$W/mem-nostrings.tsv" start "after ten more" 2)"
figure 'mem_delta(nostrings, start, after ten more, anon)' "$(mem_delta "$W/mem-nostrings.tsv" start "after ten more" 3)"
figure 'mem_delta(ca, start, after ten more, anon)' "$(mem_delta "$W/mem-ca.tsv" start "after ten more" 3)"
figure 'mem(ca, what-if: OpenSSL code pages dropped, rss)' "$(mem "$W/mem-ca.tsv" "what-if: OpenSSL code pages dropped" 2)"
figure 'mem_delta(ca, what-if: OpenSSL code pages dropped, what-if: then one poll'\''s crypto, rss)' "$(mem_delta "$W/mem-ca.tsv" "what-if: OpenSSL code pages dropped" "what-if: then one poll's crypto" 2)"
figure 'mem_delta(ca, start, what-if: then one poll'\''s crypto, rss)' "$(mem_delta "$W/mem-ca.tsv" start "what-if: then one poll's crypto" 2)"
figure 'ratio(mem_whatif, RSS[chrony-nts])' "$(ratio "$mem_whatif" "${RSS[chrony-nts]}")"
figure 'rounds_of(ours-plain)' "$(rounds_of ours-plain)"
figure 'round(CPUPOLL[ours-plain])' "$(awk -v c="${CPUPOLL[ours-plain]}" 'BEGIN { printf "%.0f", c }')"
figure 'rounds_of(ours-nts)' "$(rounds_of ours-nts)"
figure 'rounds_of(ours-nobus)' "$(rounds_of ours-nobus)"
figure 'round(CPUPOLL[ours-nobus])' "$(awk -v c="${CPUPOLL[ours-nobus]}" 'BEGIN { printf "%.0f", c }')"
figure 'rounds_of(chrony-nts)' "$(rounds_of chrony-nts)"
figure 'rounds_of(ours-nts4)' "$(rounds_of ours-nts4)"
figure 'round(CPUPOLL[ours-nts4])' "$(awk -v c="${CPUPOLL[ours-nts4]}" 'BEGIN { printf "%.0f", c }')"
figure 'rounds_of(chrony-nts4)' "$(rounds_of chrony-nts4)"
figure 'round(CPUPOLL[chrony-nts4])' "$(awk -v c="${CPUPOLL[chrony-nts4]}" 'BEGIN { printf "%.0f", c }')"
figure 'ratio(RSS[ours-nts4], RSS[ours-nts])' "$(ratio "${RSS[ours-nts4]}" "${RSS[ours-nts]}")"
figure 'ratio(RSS[chrony-nts4], RSS[chrony-nts])' "$(ratio "${RSS[chrony-nts4]}" "${RSS[chrony-nts]}")"
figure 'needed(TIMESYNCD)' "$(needed "$TIMESYNCD")"
figure 'needed(CHRONYD)' "$(needed "$CHRONYD")"
figure 'writes-per-day-table' "$(for src in 1 4; do for iv in 2048 32; do
        n=ours-nts; [ "$src" = 4 ] && n=ours-nts4
        t=strace-ours; [ "$src" = 4 ] && t=ours-nts4-traced
        awk -v s="$src" -v i="$iv" -v w="${WRITES[$n]}" -v p="${NPOLL[$t]}" -v save="$SAVE_INTERVAL_SEC" 'BEGIN {
                polls = s * 86400 / i
                printf "| %d | %d s (%s) | %.0f | %.0f | %.0f (one utimensat() each, no data) | %d written at a clean stop, removed at the next start |\n",
                        s, i, (i == 2048 ? "the default maximum, PollIntervalMaxSec=" : "the minimum, PollIntervalMinSec="), polls,
                        (p > 0 ? w / p * polls : 0), 86400 / save, s }'
done; done)"

# Section 5's paragraph on ntpd-rs, measured in the same rounds, from a template of its own.
if [ -n "$NTPD_RS" ]; then
        n=ntpdrs-nts
        figure NTPD_RS_POLL_LOG2 "$NTPD_RS_POLL_LOG2"
        figure 'ntpd_rs_version' "$("$NTPD_RS" --version 2>&1 | head -n1)"
        figure 'NTPD_RS_POLL_SEC' "$(awk -v l="$NTPD_RS_POLL_LOG2" 'BEGIN { printf "%g", 2 ^ l }')"
        figure 'NPOLL[ntpdrs-nts]' "${NPOLL[$n]:-n/a}"
        figure 'CPUPOLL[ntpdrs-nts]' "${CPUPOLL[$n]:-n/a}"
        figure 'CPURATIO[ours-nts:ntpdrs-nts]' "${CPURATIO[ours-nts:$n]}"
        figure 'CPURATIO[ntpdrs-nts:chrony-nts]' "${CPURATIO[$n:chrony-nts]}"
        figure 'per_sec(CPUPOLL[ours-nts], NPOLL[ours-nts])' "$(per_sec "${CPUPOLL[ours-nts]}" "${NPOLL[ours-nts]}")"
        figure 'per_sec(CPUPOLL[ntpdrs-nts], NPOLL[ntpdrs-nts])' "$(per_sec "${CPUPOLL[$n]:-n/a}" "${NPOLL[$n]:-0}")"
        figure 'per_sec(CPUPOLL[chrony-nts], NPOLL[chrony-nts])' "$(per_sec "${CPUPOLL[chrony-nts]}" "${NPOLL[chrony-nts]}")"
        figure 'rounds_of(ntpdrs-nts)' "$(rounds_of "$n")"
        figure 'CPURATIOS[ours-nts:ntpdrs-nts]' "${CPURATIOS[ours-nts:$n]}"
        figure 'CPURATIOS[ntpdrs-nts:chrony-nts]' "${CPURATIOS[$n:chrony-nts]}"
        figure 'RSS[ntpdrs-nts]' "${RSS[$n]:-n/a}"
        figure 'ratio(RSS[ours-nts], RSS[ntpdrs-nts])' "$(ratio "${RSS[ours-nts]}" "${RSS[$n]:-n/a}")"
        figure 'ratio(RSS[ntpdrs-nts], RSS[chrony-nts])' "$(ratio "${RSS[$n]:-n/a}" "${RSS[chrony-nts]}")"
        figure 'HWM[ntpdrs-nts]' "${HWM[$n]:-n/a}"
        figure 'ratio(HWM[ours-nts], HWM[ntpdrs-nts])' "$(ratio "${HWM[ours-nts]}" "${HWM[$n]:-n/a}")"
        figure 'ratio(HWM[ntpdrs-nts], HWM[chrony-nts])' "$(ratio "${HWM[$n]:-n/a}" "${HWM[chrony-nts]}")"
        figure 'PSS[ntpdrs-nts]' "${PSS[$n]:-n/a}"
        figure 'ratio(PSS[ours-nts], PSS[ntpdrs-nts])' "$(ratio "${PSS[ours-nts]}" "${PSS[$n]:-n/a}")"
        figure 'ratio(PSS[ntpdrs-nts], PSS[chrony-nts])' "$(ratio "${PSS[$n]:-n/a}" "${PSS[chrony-nts]}")"
        figure 'ANON[ntpdrs-nts]' "${ANON[$n]:-n/a}"
        figure 'ratio(ANON[ours-nts], ANON[ntpdrs-nts])' "$(ratio "${ANON[ours-nts]}" "${ANON[$n]:-n/a}")"
        figure 'ratio(ANON[ntpdrs-nts], ANON[chrony-nts])' "$(ratio "${ANON[$n]:-n/a}" "${ANON[chrony-nts]}")"
        figure 'LIBS[ntpdrs-nts]' "${LIBS[$n]:-n/a}"
        figure 'THREADS[ntpdrs-nts]' "${THREADS[$n]}"
        figure ntpd-rs-section "$(bash "$SRC/bench/render.sh" "$W/figures.tsv" "$SRC/bench/ntpd-rs.md.in")"
else
        figure ntpd-rs-section "Not measured in this run: no ntp-daemon of trixie or forky in $TSNTS_PEERS_DIR
(test/tools/fixtures/fetch-peers.sh fetches them) or no no-clock-write.so in the build."
fi

log "writing $DOC from bench/BENCHMARKS.md.in and $FIGURES"
bash "$SRC/bench/render.sh" "$W/figures.tsv" "$SRC/bench/BENCHMARKS.md.in" >"$W/BENCHMARKS.md"
cp "$W/figures.tsv" "$FIGURES"
cp "$W/BENCHMARKS.md" "$DOC"
log "done: $DOC, $FIGURES, $PNG"
