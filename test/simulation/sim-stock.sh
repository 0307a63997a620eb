# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Debian 12's stock systemd-timesyncd (test/tools/fixtures/fetch-stock.sh) in simulated time, beside ours
# (sim.sh): the same preload, servers, seeds and clock, so that bench/accuracy.sh compares the
# two disciplines on one footing (docs/ACCURACY.md). A script does:
#   . "$TSNTS_SRC_DIR/test/simulation/sim-stock.sh"; sim_init; stock_init
#   SIM_SERVERS="port=10001,oneway=0.0005,expjitter=0.00005" stock_run DAYS [CONF_LINE...]
# Stock has no --config and no --state-dir and speaks plain NTP only, on port 123 of the address
# it is given: it runs in a private mount namespace where /etc/systemd, /run/systemd and
# /var/lib/systemd are empty tmpfs but for the run's timesyncd.conf, runtime and state
# directories, and its configuration names server i of SIM_SERVERS as 127.0.0.(i+1) (the
# preload's plain NTP address of that server). It starts as the systemd-timesync user, as its
# unit starts it (User=, the capability then given by AmbientCapabilities= is withheld here):
# a daemon that does not start as root drops nothing. Like every daemon a test starts it never
# has CAP_SYS_TIME (setpriv); it always runs on the preload's kernel clock model (SIM_CLOCK=kernel
# of sim.sh: stock has no observe mode), which answers its clock calls and records them.
[ -n "${_TSNTS_SIM_STOCK_SH:-}" ] && return 0
_TSNTS_SIM_STOCK_SH=1
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/sim.sh"

STOCK_ROOT=${TSNTS_STOCK_ROOT:-$TSNTS_PEERS_DIR/stock/root}
STOCK_TIMESYNCD=$STOCK_ROOT/lib/systemd/systemd-timesyncd

# Skips (a local run) when the stock tree is missing, like the peer tests.
stock_init() {
        [ -x "$STOCK_TIMESYNCD" ] ||
                missing_prerequisite "stock systemd-timesyncd not found; run: test/tools/fixtures/fetch-stock.sh $TSNTS_PEERS_DIR"
        getent passwd systemd-timesync >/dev/null || missing_prerequisite "no systemd-timesync user"
        local d
        for d in /etc/systemd /run/systemd /var/lib/systemd; do
                [ -d "$d" ] || missing_prerequisite "$d missing: nothing to mount the stock daemon's private one over"
        done
        command -v unshare >/dev/null || missing_prerequisite "unshare (util-linux) not installed"
}

# stock_servers_conf: the NTP= line for every server of SIM_SERVERS, in their order.
stock_servers_conf() {
        local n
        n=$(awk -F';' '{ print NF }' <<<"$SIM_SERVERS")
        printf 'NTP='
        seq 1 "$n" | sed 's/^/127.0.0./' | paste -sd' '
}

# stock_run DAYS [CONF_LINE...]: one run of stock for DAYS simulated days, its timesyncd.conf
# NTP= and FallbackNTP= (every server of SIM_SERVERS) and the CONF_LINEs. The scenario's
# environment is sim_run's (SIM_CLOCK aside). Sets SIM_LOG, SIM_REC and SIM_REAL_SECONDS; fails as sim_run does.
stock_run() {
        local days=$1 dir start
        shift
        SIM_N=$((SIM_N + 1))
        dir=$TEST_TMPDIR/stock$SIM_N
        mkdir -p "$dir/state" "$dir/runtime"
        # Its record is written from its process.
        chown systemd-timesync: "$dir" "$dir/state" "$dir/runtime"
        chmod 0755 "$dir"
        # An empty FallbackNTP= would leave Debian's pool names, which only the machine's
        # resolver could look up: the fallbacks are the scenario's servers too.
        { echo "[Time]"; stock_servers_conf; stock_servers_conf | sed 's/^NTP=/FallbackNTP=/'; printf '%s\n' "$@"; } >"$dir/timesyncd.conf"
        chmod 0644 "$dir/timesyncd.conf"
        SIM_LOG=$dir/timesyncd.log
        SIM_REC=$dir/record
        : >"$SIM_LOG"
        start=${EPOCHREALTIME/./}
        # The mounts are the namespace's own; the daemon is the namespace's only process.
        # shellcheck disable=SC2016 # expanded by the inner bash
        start_daemon "$SIM_LOG" unshare --mount --propagation private -- bash -c '
                set -e
                dir=$1; shift
                for d in /etc/systemd /run/systemd /var/lib/systemd; do mount -t tmpfs -o mode=0755 tmpfs "$d"; done
                cp "$dir/timesyncd.conf" /etc/systemd/timesyncd.conf
                mkdir /run/systemd/timesync /var/lib/systemd/timesync
                mount --bind "$dir/runtime" /run/systemd/timesync
                mount --bind "$dir/state" /var/lib/systemd/timesync
                exec "$@"' stock-run "$dir" \
                "${NOSYSTIME[@]}" setpriv --reuid=systemd-timesync --regid=systemd-timesync --init-groups -- \
                env LD_PRELOAD="$SIM_PRELOAD" LD_LIBRARY_PATH="$STOCK_ROOT/usr/lib/x86_64-linux-gnu/systemd" \
                SIM_DURATION="$(awk -v d="$days" 'BEGIN { printf "%.0f", d * 86400 }')" \
                SIM_SERVERS="$SIM_SERVERS" SIM_SEED="${SIM_SEED:-1}" SIM_START="$SIM_START" \
                SIM_DRIFT="${SIM_DRIFT:-0}" SIM_CLOCK=kernel SIM_CLOCK_ERROR="${SIM_CLOCK_ERROR:-0}" \
                SIM_WANDER="${SIM_WANDER:-0}" SIM_KCLOCK_TRACE="${SIM_KCLOCK_TRACE:-1}" \
                SIM_CLOCK_JUMP="${SIM_CLOCK_JUMP:-}" SIM_SUSPEND="${SIM_SUSPEND:-}" \
                SIM_RECORD="$dir/preload-record" SIM_CERT="$CERTDIR/server-chain.pem" SIM_KEY="$CERTDIR/server.key" \
                DBUS_SYSTEM_BUS_ADDRESS="unix:path=/run/systemd/timesync/no-bus" NOTIFY_SOCKET= \
                SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_TARGET=console SYSTEMD_LOG_COLOR=0 \
                "$STOCK_TIMESYNCD"
        sim_wait stock "$days" "$dir" "$start"
        cp "$dir/preload-record" "$SIM_REC"
        sim_check_record stock
        log "stock: $days simulated days in $SIM_REAL_SECONDS s ($(sim_count request) requests)"
}
