#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest side of test/mkosi/run.sh. Each check prints "PASS name", "FAIL name" or
# "SKIP name: why"; the last line is "=== TESTS RESULT rc=N" (N = number of failures), then
# the guest ends. In nspawn (no CAP_SYS_TIME, so no clock) only the package, unit and D-Bus
# checks run; in qemu the guest's own clock is used and, only there, stepped.
set -u

T=/usr/local/lib/nts-test
P=/opt/nts-test/peers
CERTS=/etc/nts-test
RUN=/run/nts-test
DROPIN=/run/systemd/timesyncd.conf.d/50-nts-test.conf
BUS=(org.freedesktop.timesync1 /org/freedesktop/timesync1 org.freedesktop.timesync1.Manager)
failures=0

[ -d /results ] && exec > >(tee -a /results/log) 2>&1

check() {
        local name=$1
        shift
        if "$@"; then
                echo "PASS $name"
        else
                echo "FAIL $name"
                failures=$((failures + 1))
        fi
}

info() {
        echo "INFO $*"
}

# wait_for SECONDS COMMAND...: true as soon as COMMAND succeeds.
wait_for() {
        local deadline=$((SECONDS + $1))
        shift
        until "$@" >/dev/null 2>&1; do
                [ "$SECONDS" -lt "$deadline" ] || return 1
                sleep 0.5
        done
}

prop() {
        busctl get-property "${BUS[@]}" "$1" 2>/dev/null
}

daemon_pid() {
        systemctl show -p MainPID --value systemd-timesyncd
}

# ---- package: the swap over stock systemd-timesyncd ----

stock_removed() {
        [ "$(dpkg-query -W -f='${db:Status-Status}' systemd-timesyncd 2>/dev/null)" != installed ]
}

daemon_owned_by_package() {
        dpkg-query -S /lib/systemd/systemd-timesyncd | grep -q '^timesyncd-nts:'
}

user_conffile_kept() {
        grep -q '^# nts-test: local change that must survive the swap' /etc/systemd/timesyncd.conf
}

conffile_owned_by_package() {
        dpkg-query -W -f='${Conffiles}\n' timesyncd-nts | grep -q ' /etc/systemd/timesyncd.conf '
}

unit_enabled() {
        [ "$(systemctl is-enabled systemd-timesyncd.service)" = enabled ]
}

user_exists() {
        getent passwd systemd-timesync >/dev/null
}

unit_is_ours() {
        systemctl show -p Description --value systemd-timesyncd | grep -q NTS
}

package_checks() {
        info "stock systemd-timesyncd was $(cat $T/stock-version), swap log:"
        grep -v -e '^$' -e 'Reading database' $T/swap.log | sed 's/^/INFO   /' | tail -n 12
        check package_replaces_stock_systemd_timesyncd stock_removed
        check daemon_path_belongs_to_timesyncd_nts daemon_owned_by_package
        check user_change_to_timesyncd_conf_survives_the_swap user_conffile_kept
        check timesyncd_conf_is_a_conffile_of_the_package conffile_owned_by_package
        check unit_is_enabled_by_postinst unit_enabled
        check sysusers_created_systemd_timesync_user user_exists
        check unit_file_is_ours unit_is_ours
}

# Back to stock with its pristine conffile, then the swap again: dpkg must install our
# timesyncd.conf without asking (stdin is not a terminal, no --force-conf* option).
stock_again() {
        apt-get install -y -o Dpkg::Options::=--force-confnew /opt/nts-test/stock/systemd-timesyncd_*.deb \
                </dev/null >$RUN/stock-again.log 2>&1 &&
                ! grep -q '^#NTS=' /etc/systemd/timesyncd.conf
}

swap_without_questions() {
        if ! apt-get install -y /opt/nts-test/debs/timesyncd-nts_*.deb </dev/null >$RUN/swap-again.log 2>&1; then
                sed 's/^/INFO   /' $RUN/swap-again.log | tail -n 8
                return 1
        fi
        grep -q '^#NTS=' /etc/systemd/timesyncd.conf && daemon_owned_by_package && unit_enabled
}

# ---- D-Bus: methods and access control ----

set_runtime_ntp() {
        busctl call "${BUS[@]}" SetRuntimeNTPServers as "$#" "$@"
}

runtime_ntp_is() {
        [ "$(prop RuntimeNTPServers)" = "$1" ]
}

unprivileged_set_runtime_is_denied() {
        local out
        if out=$(runuser -u nobody -- busctl call "${BUS[@]}" SetRuntimeNTPServers as 1 192.0.2.1 2>&1); then
                info "unprivileged call succeeded: $out"
                return 1
        fi
        info "unprivileged call: $out"
        echo "$out" | grep -qiE 'denied|only root' && ! runtime_ntp_is 'as 1 "192.0.2.1"'
}

invalid_server_name_is_refused() {
        ! busctl call "${BUS[@]}" SetRuntimeNTPServers as 1 'bad name!' 2>/dev/null
}

timedatectl_show_timesync_works() {
        timedatectl show-timesync --all | grep -q '^NTSAuthenticated='
}

dbus_checks() {
        check root_sets_runtime_ntp_servers set_runtime_ntp 192.0.2.10 192.0.2.11
        check runtime_ntp_servers_property_follows wait_for 5 runtime_ntp_is 'as 2 "192.0.2.10" "192.0.2.11"'
        check unprivileged_set_runtime_ntp_servers_is_denied unprivileged_set_runtime_is_denied
        check invalid_server_name_is_refused invalid_server_name_is_refused
        check timedatectl_show_timesync_lists_nts_properties timedatectl_show_timesync_works
        check root_clears_runtime_ntp_servers set_runtime_ntp
}

# ---- nspawn: the daemon in --observe mode under a transient unit (the real unit's
# ConditionVirtualization=!container keeps it from starting here, as stock's does) ----

nspawn_suite() {
        check unit_is_skipped_in_a_container wait_for 10 bash -c \
                '[ "$(systemctl show -p ConditionResult --value systemd-timesyncd)" = no ]'
        systemctl stop systemd-timesyncd 2>/dev/null
        # No BusName=: systemd-timesyncd.service has that name already.
        systemd-run -q --unit=nts-observe -p Type=notify -p User=systemd-timesync \
                -p StateDirectory=systemd/timesync \
                -p RuntimeDirectory=systemd/timesync /lib/systemd/systemd-timesyncd --observe
        check observe_daemon_takes_the_bus_name wait_for 10 busctl status org.freedesktop.timesync1
        dbus_checks
        check observe_daemon_runs_as_systemd_timesync bash -c \
                '[ "$(ps -o user= -p "$(systemctl show -p MainPID --value nts-observe)")" = systemd-timesync ]'
        systemctl stop nts-observe
        mkdir -p $RUN
        check stock_package_reinstalls_with_its_conffile stock_again
        check unchanged_conffile_is_replaced_without_a_question swap_without_questions
}

# ---- qemu: the real unit, real servers in the guest, the guest's clock ----

start_chrony() {
        local name=$1 port=$2 ntsport=$3 extra=$4 dir=$RUN/$1
        mkdir -p "$dir"
        chmod 0700 "$dir"
        cat >"$dir/chrony.conf" <<EOC
$extra
allow 127.0.0.0/8
allow ::1
bindaddress 127.0.0.1
bindaddress ::1
port $port
ntsport $ntsport
ntsservercert $CERTS/server-chain.pem
ntsserverkey $CERTS/server.key
ntsdumpdir $dir
ntsprocesses 0
cmdport 0
bindcmdaddress $dir/chronyd.sock
pidfile $dir/chronyd.pid
EOC
        # -x and no CAP_SYS_TIME: the servers never steer the guest's clock; only our daemon may.
        systemd-run -q --unit="nts-$name" -p CapabilityBoundingSet=~CAP_SYS_TIME \
                "$P/usr/sbin/chronyd" -x -d -u root -f "$dir/chrony.conf"
        wait_for 10 bash -c "ss -ltn | grep -q ':$ntsport '"
}

start_ntpsec() {
        local dir=$RUN/ntpsec
        mkdir -p "$dir"
        cat >"$dir/ntp.conf" <<EOC
nts enable
nts cert $CERTS/server-chain.pem
nts key $CERTS/server.key
nts cookie $dir/nts-keys
nts mintls TLS1.3
tos orphan 1 orphanwait 0
disable ntp
disable kernel
restrict default kod limited nomodify noquery
restrict 127.0.0.1
restrict ::1
statsdir $dir/
EOC
        systemd-run -q --unit=nts-ntpsec -p CapabilityBoundingSet=~CAP_SYS_TIME \
                "$P/usr/sbin/ntpd" -n -c "$dir/ntp.conf" -p "$dir/ntpd.pid" -l "$dir/daemon.log"
        wait_for 10 bash -c "ss -ltn | grep -q ':4460 '"
}

# use_config LINES...: the test's drop-in (replacing the last one), then a restart.
use_config() {
        mkdir -p "$(dirname $DROPIN)"
        printf '[Time]\n' >$DROPIN
        printf '%s\n' "$@" >>$DROPIN
        systemctl restart systemd-timesyncd
}

authenticated() {
        [ "$(prop NTSAuthenticated)" = "b true" ]
}

server_is() {
        [ "$(prop ServerName)" = "s \"$1\"" ]
}

daemon_active() {
        [ "$(systemctl is-active systemd-timesyncd)" = active ]
}

daemon_inactive() {
        [ "$(systemctl is-active systemd-timesyncd)" = inactive ]
}

runs_as_systemd_timesync() {
        [ "$(ps -o user= -p "$(daemon_pid)")" = systemd-timesync ]
}

# CAP_SYS_TIME is bit 25: 0x2000000, in the effective and the bounding set, nothing else.
only_cap_sys_time() {
        local s=/proc/$(daemon_pid)/status
        grep -q '^CapEff:[[:space:]]*0000000002000000$' "$s" &&
                grep -q '^CapBnd:[[:space:]]*0000000002000000$' "$s" &&
                grep -q '^CapPrm:[[:space:]]*0000000002000000$' "$s"
}

timesync_status_shows_server() {
        local out
        out=$(timedatectl timesync-status)
        echo "$out" | sed 's/^/INFO   /'
        echo "$out" | grep -qE 'Server: (127\.0\.0\.1|::1) \(localhost:14460\)'
}

show_timesync_says_authenticated() {
        local out
        out=$(timedatectl show-timesync --all)
        echo "$out" | grep -E '^(ServerName|NTS)' | sed 's/^/INFO   /'
        echo "$out" | grep -qx 'NTSAuthenticated=yes' && echo "$out" | grep -qx 'ServerName=localhost:14460'
}

time_wait_sync_completes() {
        timeout 60 systemctl start systemd-time-wait-sync.service &&
                [ "$(systemctl show -p Result --value systemd-time-wait-sync)" = success ]
}

security_exposure() {
        local ours stock
        ours=$(systemd-analyze security systemd-timesyncd.service --no-pager | tail -n 1)
        info "ours (running unit): $ours"
        info "ours (offline):  $(systemd-analyze security --offline=yes --no-pager \
                /lib/systemd/system/systemd-timesyncd.service | tail -n 1)"
        stock=$(systemd-analyze security --offline=yes --no-pager $T/stock/systemd-timesyncd.service | tail -n 1)
        info "stock (offline): $stock"
        echo "$ours" | grep -q 'Overall exposure level'
}

# seconds since the epoch, as a real number
now() {
        date +%s.%N
}

uptime_s() {
        cut -d' ' -f1 /proc/uptime
}

# |guest clock - (t0 + elapsed since u0)| < 5 s
clock_is_right() {
        awk -v t0="$1" -v u0="$2" -v t="$(now)" -v u="$(uptime_s)" \
                'BEGIN { d = t - (t0 + u - u0); exit !(d < 5 && d > -5) }'
}

clock_is_wrong() {
        ! clock_is_right "$@"
}

# The clock 30 min fast, and a plain NTP server that serves the true time (the guest clock
# minus 30 min); our daemon must step the clock back. chronyd cannot be that server: it serves
# the guest's own clock, and with -x it takes a step as done without serving a shifted time.
step_suite() {
        local t0 u0
        t0=$(now)
        u0=$(uptime_s)
        systemd-run -q --unit=nts-offset-server /opt/nts-test/bin/ntp-test-server \
                --listen=127.0.0.1:11200 --offset=-1800
        date -s "@$(awk -v t="$(now)" 'BEGIN { printf "%.3f", t + 1800 }')" >/dev/null
        check guest_clock_is_set_30_min_wrong clock_is_wrong "$t0" "$u0"
        use_config "NTP=127.0.0.1:11200"
        check daemon_steps_the_clock_back wait_for 60 clock_is_right "$t0" "$u0"
        journalctl -b -u systemd-timesyncd --no-pager -o cat | grep -iE 'synchroniz|step|offset' | tail -n 3 |
                sed 's/^/INFO   /'
        systemctl stop nts-offset-server
}

nts_config() {
        use_config "NTS=localhost:14460" "NTSTrustedCertificates=$CERTS/ca.pem"
}

qemu_suite() {
        check daemon_active_after_boot wait_for 30 daemon_active
        check daemon_runs_as_systemd_timesync runs_as_systemd_timesync
        check daemon_keeps_only_cap_sys_time only_cap_sys_time
        check security_exposure_is_printed security_exposure

        check chronyd_nts_server_starts start_chrony chrony 11123 14460 "local stratum 1"
        nts_config
        check nts_authenticated_against_chronyd wait_for 60 authenticated
        check timesync_status_shows_the_nts_server timesync_status_shows_server
        check show_timesync_says_nts_authenticated show_timesync_says_authenticated
        check time_wait_sync_completes time_wait_sync_completes

        step_suite

        nts_config
        check set_ntp_false_stops_the_daemon bash -c 'timedatectl set-ntp false && sleep 1 && \
                [ "$(systemctl is-active systemd-timesyncd)" = inactive ]'
        check set_ntp_true_starts_the_daemon bash -c 'timedatectl set-ntp true && \
                for i in $(seq 20); do [ "$(systemctl is-active systemd-timesyncd)" = active ] && exit 0; sleep 0.5; done; exit 1'
        check nts_authenticated_again_after_set_ntp_true wait_for 60 authenticated

        check ntpsec_nts_server_starts start_ntpsec
        check runtime_nts_servers_switch_to_ntpsec busctl call "${BUS[@]}" SetRuntimeNTSServers as 1 ntp.test
        check nts_authenticated_against_ntpsec wait_for 60 bash -c \
                "[ \"\$(busctl get-property ${BUS[*]} ServerName)\" = 's \"ntp.test\"' ] && \
                 [ \"\$(busctl get-property ${BUS[*]} NTSAuthenticated)\" = 'b true' ]"
        busctl call "${BUS[@]}" SetRuntimeNTSServers as 0

        # Plain NTP: runtime servers come first, as in stock timesyncd.
        use_config "NTP=127.0.0.1:11123"
        check plain_ntp_uses_the_configured_server wait_for 30 server_is 127.0.0.1:11123
        check set_runtime_ntp_servers_switches_server set_runtime_ntp 127.0.0.1
        check daemon_follows_the_runtime_server wait_for 30 server_is 127.0.0.1
        dbus_checks
}

info "timesyncd-nts guest tests, virtualization: $(systemd-detect-virt || true)"
package_checks
if systemd-detect-virt -q --container; then
        nspawn_suite
else
        qemu_suite
        journalctl -b -u systemd-timesyncd --no-pager -o short-monotonic | tail -n 25 | sed 's/^/INFO journal /'
fi

echo "=== TESTS RESULT rc=$failures"
if systemd-detect-virt -q --container; then
        systemctl exit "$((failures > 0 ? 1 : 0))"
else
        systemctl poweroff
fi
