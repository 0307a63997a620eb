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
# Kept over the qemu guest's reboot: the phase the next boot runs, chronyd's server keys.
PERSIST=/var/lib/nts-test
PHASE_FILE=$PERSIST/phase
DROPIN=/run/systemd/timesyncd.conf.d/50-nts-test.conf
UNIT_DROPIN=/run/systemd/system/systemd-timesyncd.service.d/50-nts-test.conf
BUS=(org.freedesktop.timesync1 /org/freedesktop/timesync1 org.freedesktop.timesync1.Manager)
# Where the daemon and its unit are, as in stock: /lib/systemd on Debian 12, /usr/lib/systemd
# from Debian 13 on (the package puts them where the suite's stock does).
LIBSD=/usr/lib/systemd
# shellcheck source=/dev/null # the guest's os-release
[ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" != bookworm ] || LIBSD=/lib/systemd
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

# Whole seconds since boot. Not bash's $SECONDS, which follows the wall clock: a step of the
# clock while waiting (the bootstrap moves it by days) made a wait give up at once.
uptime_seconds() {
        cut -d. -f1 /proc/uptime
}

# wait_for SECONDS COMMAND...: true as soon as COMMAND succeeds.
wait_for() {
        local deadline=$(($(uptime_seconds) + $1))
        shift
        until "$@" >/dev/null 2>&1; do
                [ "$(uptime_seconds)" -lt "$deadline" ] || return 1
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
        dpkg-query -S $LIBSD/systemd-timesyncd | grep -q '^timesyncd-nts:'
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

# This suite's systemd reads our unit without a word: no unknown or deprecated directive (forky's
# systemd ignores ExecStart=!! with a warning at every reload). Only the unit's own lines
# ("FILE:LINE: ...") count; the output is taken whole first, whatever verify's exit status.
unit_parses_without_warnings() {
        local path out warnings line
        path=$(systemctl show -p FragmentPath --value systemd-timesyncd)
        [ -n "$path" ] || return 1
        out=$(systemd-analyze verify "$path" 2>&1) || true
        warnings=$(grep -E 'systemd-timesyncd\.service:[0-9]+: ' <<<"$out") || return 0
        while read -r line; do
                echo "INFO   $line"
        done <<<"$warnings"
        return 1
}

# shellcheck disable=SC2012 # package file names: no spaces, no newlines
STOCK_DEB=$(ls /opt/nts-test/stock/systemd-timesyncd_*.deb 2>/dev/null | head -n 1)
# shellcheck disable=SC2012 # the same
OUR_DEB=$(ls /opt/nts-test/debs/timesyncd-nts_*.deb 2>/dev/null | head -n 1)
DSH_RECORD=/var/lib/systemd/deb-systemd-helper-enabled/systemd-timesyncd.service.dsh-also

# deb_paths DEB: the paths a .deb ships other than directories, one per line ("x -> y" for links)
deb_paths() {
        dpkg-deb -c "$1" | awk '$1 !~ /^d/ { $1 = $2 = $3 = $4 = $5 = ""; sub(/^ *\./, ""); print }' | sort
}

# Every path of stock's package is one of ours too (man page aliases, the dhclient hook...),
# except stock's documentation, lintian overrides and cruft rules (forky), which are named
# after its package: the cruft rules are ours under our package's name (cruft reads those of
# installed packages only).
ships_every_path_of_stock() {
        local missing
        missing=$(comm -23 <(deb_paths "$STOCK_DEB" | grep -v -e '^/usr/share/doc/systemd-timesyncd/' \
                        -e '^/usr/share/lintian/overrides/systemd-timesyncd$' \
                        -e '^/usr/share/cruft/rules/systemd-timesyncd$') <(deb_paths "$OUR_DEB"))
        if deb_paths "$STOCK_DEB" | grep -qx /usr/share/cruft/rules/systemd-timesyncd &&
                ! deb_paths "$OUR_DEB" | grep -qx /usr/share/cruft/rules/timesyncd-nts; then
                missing+=$'\n/usr/share/cruft/rules/systemd-timesyncd (ours: /usr/share/cruft/rules/timesyncd-nts)'
        fi
        # shellcheck disable=SC2001 # a prefix on each line of a multi-line value
        [ -z "$missing" ] || echo "$missing" | sed 's/^/INFO   only in stock: /'
        [ -n "$STOCK_DEB" ] && [ -n "$OUR_DEB" ] && [ -z "$missing" ]
}

multi_arch_as_stock() {
        local ours stock
        ours=$(dpkg-deb -f "$OUR_DEB" Multi-Arch)
        stock=$(dpkg-deb -f "$STOCK_DEB" Multi-Arch)
        info "Multi-Arch: ours '$ours', stock '$stock'"
        [ "$ours" = foreign ] && [ "$ours" = "$stock" ]
}

dhclient_hook_is_a_conffile() {
        dpkg-query -W -f='${Conffiles}\n' timesyncd-nts | grep -q ' /etc/dhcp/dhclient-exit-hooks.d/timesyncd '
}

# dpkg_status PACKAGE: "installed", "config-files" (what dpkg -l shows as "rc")...;
# "not-installed" also when dpkg does not know the package at all
dpkg_status() {
        local s
        s=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)
        echo "${s:-not-installed}"
}

# The D-Bus activation alias and the sysinit.target want, as systemctl enable makes them.
unit_links_present() {
        [ -L /etc/systemd/system/dbus-org.freedesktop.timesync1.service ] &&
                [ -L /etc/systemd/system/sysinit.target.wants/systemd-timesyncd.service ]
}

# stock_ships_time_wait_sync: stock systemd-timesyncd's package has systemd-time-wait-sync (Debian
# 13 and later; on Debian 12 the systemd package has it), and so ours has it.
stock_ships_time_wait_sync() {
        deb_paths "$STOCK_DEB" | grep -qx "$LIBSD/systemd-time-wait-sync"
}

TWS_LINK=/etc/systemd/system/sysinit.target.wants/systemd-time-wait-sync.service

# Whether stock's systemd-time-wait-sync.service was enabled before the swap (mkosi.postinst).
TWS_STOCK_STATE=$(cat $T/stock-time-wait-sync-enabled 2>/dev/null)

tws_state() {
        systemctl is-enabled systemd-time-wait-sync.service 2>/dev/null
}

# tws_state_is STATE: systemd-time-wait-sync.service enabled or not as STATE says (systemctl
# is-enabled), with its link when enabled.
tws_state_is() {
        local now
        now=$(tws_state)
        info "systemd-time-wait-sync.service: '$now', expected '$1'"
        [ -n "$now" ] && [ "$now" = "$1" ] && { [ "$now" != enabled ] || [ -L $TWS_LINK ]; }
}

# The package that owns systemd-time-wait-sync is ours where stock's package had it, the
# systemd package elsewhere; where ours, enabled or not as stock's was before the swap (the
# presets of Debian 13 disable it), with no deb-systemd-helper record (stock's purge would
# remove the links it lists).
time_wait_sync_as_stock() {
        local owner want=systemd
        stock_ships_time_wait_sync && want=timesyncd-nts
        owner=$(dpkg-query -S $LIBSD/systemd-time-wait-sync 2>/dev/null | cut -d: -f1)
        info "systemd-time-wait-sync: owned by '$owner', expected '$want'"
        [ "$owner" = "$want" ] || return 1
        [ "$want" = systemd ] && return 0
        dpkg-query -S $LIBSD/system/systemd-time-wait-sync.service | grep -q '^timesyncd-nts:' &&
                tws_state_is "$TWS_STOCK_STATE" &&
                [ ! -e /var/lib/systemd/deb-systemd-helper-enabled/systemd-time-wait-sync.service.dsh-also ]
}

# The unit ran (enabled) and finished with success, and time-sync.target was reached.
time_wait_sync_done() {
        [ "$(systemctl show -p ActiveState --value systemd-time-wait-sync)" = active ] &&
                [ "$(systemctl show -p Result --value systemd-time-wait-sync)" = success ] &&
                [ "$(systemctl is-active time-sync.target)" = active ]
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
        check unit_file_parses_without_warnings unit_parses_without_warnings
        check package_ships_every_path_of_stock ships_every_path_of_stock
        check package_is_multi_arch_foreign_as_stock multi_arch_as_stock
        check time_wait_sync_is_in_the_package_stock_has_it_in time_wait_sync_as_stock
        check dhclient_hook_is_a_conffile_of_the_package dhclient_hook_is_a_conffile
        # The man page is in the .deb; the image's dpkg filters /usr/share/man.
        check timesync_sources_tool_and_its_man_page_are_in_the_package bash -c \
                "dpkg -S /usr/bin/timesync-sources | grep -q '^timesyncd-nts:' && \
                 dpkg-deb -c $OUR_DEB | grep -q ' ./usr/share/man/man1/timesync-sources\.1\.gz\$'"
        # The record stock's purge would delete, links and all (docs/DEBIAN.md, "Stock's purge").
        check package_keeps_no_deb_systemd_helper_record test ! -e $DSH_RECORD
        info "stock's dpkg state after the swap: $(dpkg_status systemd-timesyncd)"
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

# ---- package: each package's purge of its "rc" leftover spares the other (docs/DEBIAN.md) ----

# purge_leftover PACKAGE: dpkg --purge of a package apt left in "rc" (config-files) when the
# other replaced it, the routine clean-up; true when it was "rc" and the purge succeeded.
purge_leftover() {
        local before
        before=$(dpkg_status "$1")
        info "$1 before the purge: $before"
        [ "$before" = config-files ] || return 1
        if ! dpkg --purge "$1" >"$RUN/purge-$1.log" 2>&1; then
                sed 's/^/INFO   /' "$RUN/purge-$1.log"
                return 1
        fi
        info "$1 after the purge: $(dpkg_status "$1")"
        [ "$(dpkg_status "$1")" = not-installed ]
}

# Stock back (ours in "rc"), then ours purged: stock's unit stays enabled with its record, the
# clock file stays, and systemd-time-wait-sync.service stays as it was.
our_purge_spares_stock() {
        local tws
        mkdir -p /var/lib/systemd/timesync
        touch /var/lib/systemd/timesync/clock
        tws=$(tws_state)
        purge_leftover timesyncd-nts || return 1
        unit_enabled && unit_links_present && test -e $DSH_RECORD && test -e /var/lib/systemd/timesync/clock &&
                ! unit_is_ours && { ! stock_ships_time_wait_sync || tws_state_is "$tws"; }
}

# Ours over stock (stock in "rc"), then stock purged: our unit stays enabled, with its D-Bus
# alias, the NTS state stays, and systemd-time-wait-sync.service stays as it was.
stock_purge_spares_ours() {
        local sum tws
        mkdir -p /var/lib/timesyncd-nts
        echo "nts-test: must survive stock's purge" >/var/lib/timesyncd-nts/nts-test.marker
        sum=$(sha256sum </var/lib/timesyncd-nts/nts-test.marker)
        tws=$(tws_state)
        purge_leftover systemd-timesyncd || return 1
        unit_enabled && unit_links_present && unit_is_ours && { ! stock_ships_time_wait_sync || tws_state_is "$tws"; } &&
                [ "$(sha256sum </var/lib/timesyncd-nts/nts-test.marker 2>/dev/null)" = "$sum" ]
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
        # shellcheck disable=SC2016 # expanded by the inner bash
        check unit_is_skipped_in_a_container wait_for 10 bash -c \
                '[ "$(systemctl show -p ConditionResult --value systemd-timesyncd)" = no ]'
        systemctl stop systemd-timesyncd 2>/dev/null
        # No BusName=: systemd-timesyncd.service has that name already.
        systemd-run -q --unit=nts-observe -p Type=notify -p User=systemd-timesync \
                -p StateDirectory=systemd/timesync \
                -p RuntimeDirectory=systemd/timesync $LIBSD/systemd-timesyncd --observe
        check observe_daemon_takes_the_bus_name wait_for 10 busctl status org.freedesktop.timesync1
        dbus_checks
        # shellcheck disable=SC2016 # expanded by the inner bash
        check observe_daemon_runs_as_systemd_timesync bash -c \
                '[ "$(ps -o user= -p "$(systemctl show -p MainPID --value nts-observe)")" = systemd-timesync ]'
        systemctl stop nts-observe
        mkdir -p $RUN
        check stock_package_reinstalls_with_its_conffile stock_again
        check purging_our_leftover_keeps_stock_enabled our_purge_spares_stock
        check unchanged_conffile_is_replaced_without_a_question swap_without_questions
        check purging_stock_leftover_keeps_ours_enabled_with_its_nts_state stock_purge_spares_ours
        check no_deb_systemd_helper_record_after_the_swap_again test ! -e $DSH_RECORD
}

# ---- qemu: the real unit, real servers in the guest, the guest's clock ----

# start_chrony NAME PORT NTSPORT EXTRA [CHAIN [AHEAD_MS [BASE]]]: chronyd as an NTS server on
# (its files in CHRONY_DIR, default $RUN/NAME)
# the guest's loopback, serving CHAIN (default: the valid server chain) and the guest's clock;
# with AHEAD_MS it serves the true time plus AHEAD_MS milliseconds instead, through
# true-time.so, whatever the guest's clock does: the way a server in the same guest can hand
# out a time of its own. The true time is BASE (true-time-base output), default TRUE_BASE.
start_chrony() {
        local name=$1 port=$2 ntsport=$3 extra=$4 chain=${5:-$CERTS/server-chain.pem} ahead=${6:-} base=${7:-${TRUE_BASE:-}} dir=${CHRONY_DIR:-$RUN/$1}
        local env=()
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
ntsservercert $chain
ntsserverkey $CERTS/server.key
ntsdumpdir $dir
ntsprocesses 0
cmdport 0
bindcmdaddress $dir/chronyd.sock
pidfile $dir/chronyd.pid
EOC
        [ -z "$ahead" ] ||
                env=(-p "Environment=LD_PRELOAD=$T/true-time.so TRUE_TIME_BASE=$((${base%:*} + ahead * 1000000)):${base#*:}")
        # -x and no CAP_SYS_TIME: the servers never steer the guest's clock; only our daemon may.
        systemd-run -q --unit="nts-$name" -p CapabilityBoundingSet=~CAP_SYS_TIME "${env[@]}" \
                "$P/usr/sbin/chronyd" -x -d -u root -f "$dir/chrony.conf"
        wait_for 10 bash -c "ss -ltn | grep -q ':$ntsport '"
}

# The peers' NTPsec (1.2.2 today). orphanwait 1 as in test/lib/ntpsec.sh: from 1.2.5 on, a
# value below 1 means the default of 300 s, during which ntpd answers leap 3.
start_ntpsec() {
        local dir=$RUN/ntpsec
        mkdir -p "$dir"
        cat >"$dir/ntp.conf" <<EOC
nts enable
nts cert $CERTS/server-chain.pem
nts key $CERTS/server.key
nts cookie $dir/nts-keys
nts mintls TLS1.3
tos orphan 1 orphanwait 1
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

# write_config LINES...: the test's drop-in, replacing the last one.
write_config() {
        mkdir -p "$(dirname $DROPIN)"
        printf '[Time]\n' >$DROPIN
        printf '%s\n' "$@" >>$DROPIN
}

# use_config LINES...: write_config, then a restart.
use_config() {
        write_config "$@"
        systemctl restart systemd-timesyncd
}

# The same process, now with ntp.test (NTPsec) from the files, authenticated.
reloaded_to_ntpsec() {
        [ "$(daemon_pid)" = "$1" ] && server_is ntp.test && authenticated && daemon_active
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
        local s
        s=/proc/$(daemon_pid)/status
        grep -q '^CapEff:[[:space:]]*0000000002000000$' "$s" &&
                grep -q '^CapBnd:[[:space:]]*0000000002000000$' "$s" &&
                grep -q '^CapPrm:[[:space:]]*0000000002000000$' "$s"
}

timesync_status_shows_server() {
        local out
        out=$(timedatectl timesync-status)
        # shellcheck disable=SC2001 # a prefix on each line of a multi-line value
        echo "$out" | sed 's/^/INFO   /'
        echo "$out" | grep -qE 'Server: (127\.0\.0\.1|::1) \(localhost:14460\)'
}

show_timesync_says_authenticated() {
        local out
        out=$(timedatectl show-timesync --all)
        echo "$out" | grep -E '^(ServerName|NTS)' | sed 's/^/INFO   /'
        echo "$out" | grep -qx 'NTSAuthenticated=yes' && echo "$out" | grep -qx 'ServerName=localhost:14460'
}

# The targets and files of a synchronized clock, as with stock: time-set.target once the daemon
# started (it is ordered before it), time-sync.target through systemd-time-wait-sync, which
# waits for /run/systemd/timesync/synchronized; the clock file touched at the synchronization
# (and every SaveIntervalSec= after it).
time_set_target_active() {
        [ "$(systemctl is-active time-set.target)" = active ]
}

time_sync_target_active() {
        [ "$(systemctl is-active time-sync.target)" = active ]
}

synchronized_flag_exists() {
        [ -e /run/systemd/timesync/synchronized ]
}

# clock_file_recent: the clock file's mtime within 5 min of now (touched at the first sync and
# every SaveIntervalSec=, 60 s)
clock_file_recent() {
        local m
        m=$(stat -c %Y /var/lib/systemd/timesync/clock 2>/dev/null) || return 1
        info "clock file mtime: $(date -u -d "@$m" '+%F %T'), now $(date -u '+%F %T')"
        [ $(($(date +%s) - m)) -lt 300 ] && [ $((m - $(date +%s))) -lt 5 ]
}

time_wait_sync_completes() {
        timeout 60 systemctl start systemd-time-wait-sync.service &&
                [ "$(systemctl show -p Result --value systemd-time-wait-sync)" = success ]
}

# exposure [ARGS...]: the overall exposure level systemd-analyze security gives, a number
exposure() {
        systemd-analyze security --no-pager "$@" | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p'
}

# not_above A B: A <= B, as numbers
not_above() {
        [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'
}

# Ours (the running unit, and its file) against stock's file; stock's running unit is compared
# at the end, when stock is installed again (stock_memory_and_bus_suite).
security_checks() {
        local ours_offline stock_offline
        OURS_EXPOSURE=$(exposure systemd-timesyncd.service)
        ours_offline=$(exposure --offline=yes $LIBSD/system/systemd-timesyncd.service)
        stock_offline=$(exposure --offline=yes $T/stock/systemd-timesyncd.service)
        info "exposure: ours running ${OURS_EXPOSURE:-?}, ours offline ${ours_offline:-?}, stock offline ${stock_offline:-?}"
        check security_exposure_is_measured test -n "$OURS_EXPOSURE"
        check unit_exposure_not_above_stock_offline not_above "$ours_offline" "$stock_offline"
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

# ---- qemu: clock discipline with NTS, bootstrap, bad certificates, no libssl ----

# Every NTS server unreachable (nothing listens on their key-exchange ports): the journal of the
# booted system has the alert the guide recommends, once, with why (docs/GUIDE.md).
all_nts_servers_down_suite() {
        use_config "NTS=localhost:14498 localhost:14499" "NTSTrustedCertificates=$CERTS/ca.pem"
        check journal_alerts_when_every_nts_server_is_down wait_for 60 bash -c \
                "journalctl -b -o cat --no-pager MESSAGE_ID=5e72c619ab4b479a8430df815d36cbd5 _SYSTEMD_INVOCATION_ID=\$(systemctl show -p InvocationID --value systemd-timesyncd) | grep -q 'No usable NTS server.*localhost:14498'"
        check the_alert_is_logged_once bash -c \
                "[ \$(journalctl -b -o cat --no-pager MESSAGE_ID=5e72c619ab4b479a8430df815d36cbd5 _SYSTEMD_INVOCATION_ID=\$(systemctl show -p InvocationID --value systemd-timesyncd) | wc -l) = 1 ]"
}

# The journal of the daemon's current run (a restart starts a new invocation).
daemon_log() {
        journalctl -b -o cat --no-pager _SYSTEMD_INVOCATION_ID="$(systemctl show -p InvocationID --value systemd-timesyncd)"
}

log_count() {
        daemon_log | grep -c -e "$1"
}

log_count_above() {
        [ "$(log_count "$1")" -gt "$2" ]
}

log_has() {
        daemon_log | grep -q -e "$1"
}

# The offset of the run's first synchronization, from its journal line.
initial_offset() {
        daemon_log | sed -n 's/^Initial clock synchronization to .* (offset \([-+0-9.]*\) s.*/\1/p' | head -n 1
}

# offset_within LOW HIGH: LOW < first offset < HIGH
offset_within() {
        local o
        o=$(initial_offset)
        [ -n "$o" ] && awk -v o="$o" -v l="$1" -v h="$2" 'BEGIN { exit !(o > l && o < h) }'
}

adjtimex_field() {
        $T/adjtimex-read | sed -n "s/^$1=//p"
}

# STA_UNSYNC (0x40) clear and STA_PLL (0x1) set: what the daemon writes once it took a sample.
kernel_synchronized() {
        local st
        st=$(adjtimex_field status)
        [ $((st & 0x40)) = 0 ] && [ $((st & 0x1)) = 1 ]
}

# A slew leaves the rest of the offset in the kernel PLL (a step through ADJ_SETOFFSET clears
# it): the daemon slewed when the kernel still has a negative offset to work off.
kernel_is_slewing_back() {
        $T/adjtimex-read | sed 's/^/INFO   adjtimex /'
        [ "$(adjtimex_field offset)" -lt 0 ]
}

# kernel_frequency_below PPM: the kernel's frequency correction (scaled ppm, 2^-16) is within
# +-PPM. The PLL time constant decides it: a loop matched to the poll interval moves it a few
# ppm for a 50 ms sample; a loop 16 times too fast drives it to the kernel's limit of 500 ppm.
kernel_frequency_below() {
        local f
        f=$(adjtimex_field freq)
        info "kernel frequency: $(awk -v f="$f" 'BEGIN { printf "%+.3f", f / 65536 }') ppm"
        [ $((f < 0 ? -f : f)) -lt $(($1 * 65536)) ]
}

# The Frequency property of a daemon that steers is what its last adjusting adjtimex() reported
# (no second call per sample to read it): the kernel's frequency, which in PLL mode moves only
# with an offset the daemon passes. A poll between the two reads changes both: wait_for reads again.
frequency_property_is_the_kernels() {
        local p k
        p=$(prop Frequency | awk '{ print $2 }')
        k=$(adjtimex_field freq)
        [ -n "$p" ] && [ "$p" = "$k" ]
}

# packets_above N: the guest's main chronyd got more than N NTP packets
packets_above() {
        [ "$(ntp_packets_received)" -gt "$1" ]
}

# The clock 30 min fast again, now with an NTS server that serves the true time (chronyd under
# true-time.so): the daemon steps the clock back, authenticated. Before that, the
# jump itself: the daemon's clock watch (TFD_TIMER_CANCEL_ON_SET) must see another program set
# the clock and resynchronize with the server it has.
nts_step_suite() {
        local changes packets
        check chronyd_true_time_nts_server_starts start_chrony shifted 11124 14461 "local stratum 1" \
                "$CERTS/server-chain.pem" 0
        nts_config
        check nts_authenticated_before_the_jump wait_for 60 authenticated
        changes=$(log_count 'System clock changed, resynchronizing.')
        packets=$(ntp_packets_received)
        date -s "@$(awk -v t="$(now)" 'BEGIN { printf "%.3f", t + 1800 }')" >/dev/null
        check guest_clock_is_set_30_min_fast clock_is_wrong "$T0" "$U0"
        check daemon_logs_system_clock_changed_resynchronizing wait_for 10 log_count_above \
                'System clock changed, resynchronizing.' "$changes"
        # Right after the first synchronization the next regular poll is 32 s away: a request
        # within 15 s of the jump is the resynchronization.
        check daemon_resynchronizes_after_the_clock_change wait_for 15 packets_above "$packets"

        use_config "NTS=localhost:14461" "NTSTrustedCertificates=$CERTS/ca.pem"
        # Room for one failed key exchange and its retry 30 to 60 s later: on a loaded machine
        # chronyd once closed the first one under emulation ("TLS write: Broken pipe").
        check nts_server_steps_the_clock_back wait_for 120 clock_is_right "$T0" "$U0"
        check journal_says_nts_step_of_minus_30_min wait_for 10 log_has \
                'Initial clock synchronization to localhost:14461 (offset -1[78][0-9][0-9]\.[0-9]* s, NTS authenticated)'
        daemon_log | grep -E 'Initial|NTS key exchange' | sed 's/^/INFO   /'

        # 50 ms fast: below the step threshold (0.4 s), so the kernel PLL slews it away. The
        # offset comes from a server 50 ms behind the guest's clock, which the daemon has just
        # set right; a `date -s` would add the time the command takes to start, which under
        # emulation is 0.1-0.4 s and made this offset anything.
        check chronyd_50_ms_behind_starts start_chrony slew 11127 14465 "local stratum 1" \
                "$CERTS/server-chain.pem" -50 "$($T/true-time-base)"
        use_config "NTS=localhost:14465" "NTSTrustedCertificates=$CERTS/ca.pem"
        check nts_authenticated_for_the_slew wait_for 60 authenticated
        # The guest's clock is right only to within the previous step's error, which under
        # emulation beside CI's other lanes reached tens of ms (trixie: both checks failed with
        # a window of -70 to -30 ms). What is checked is the side and that the offset stays far
        # below the step threshold; the PLL check after it shows the slew.
        check small_offset_is_slewed_not_stepped wait_for 10 offset_within -0.3 -0.005
        info "first offset of the slew run: $(initial_offset) s"
        check journal_says_slewed_not_stepped log_has \
                'Initial clock synchronization to localhost:14465 (offset -0\.[0-2][0-9]* s, NTS authenticated)'
        check kernel_pll_still_slews_the_offset kernel_is_slewing_back
        check adjtimex_says_synchronized kernel_synchronized
        check kernel_frequency_stays_below_50_ppm kernel_frequency_below 50
        check frequency_property_is_the_kernels wait_for 5 frequency_property_is_the_kernels
        info "Frequency property: $(prop Frequency), kernel frequency: $(adjtimex_field freq)"
        systemctl stop nts-slew
}

# ---- qemu: the discipline after a 50 ms start, as the simulation says ----

# The simulation's scenario test-sim-kernel-clock-50ms-start-settles-within-the-guest-bounds on
# the guest's kernel: the discipline as at boot (frequency 0, no phase), the clock stepped
# 50 ms ahead of the one NTS server, a chronyd on the guest's loopback serving the guest's
# clock as it was before the step (true-time.so: it follows CLOCK_MONOTONIC_RAW, which no
# adjtimex() reaches, so against it the guest's oscillator is exact, as the scenario's is).
# At the times after the first synchronization that test/simulation/expect-50ms-start.txt
# lists, the kernel's frequency and remaining phase (adjtimex) and the clock's offset from the
# server's time must be within the bounds the simulation holds its own run to. Those bounds
# are the simulation's envelope over its seeds widened for this guest's noise (a loopback
# round trip under emulation, a vCPU descheduled by the host): the file says by how much.
SETTLE_EXPECT=$T/expect-50ms-start.txt

# clock_offset_from BASE: the guest's clock minus the time a true-time.so server with
# TRUE_TIME_BASE=BASE serves, in seconds. In integer nanoseconds: awk's doubles would round
# nanoseconds since 1970 to a quarter of a microsecond.
clock_offset_from() {
        local now rt raw
        now=$($T/true-time-base) || return 1
        rt=$(( ${now%:*} - ${1%:*} ))
        raw=$(( ${now#*:} - ${1#*:} ))
        awk -v ns=$((rt - raw)) 'BEGIN { printf "%+.6f\n", ns / 1e9 }'
}

# STA_PLL (0x1) set: the daemon's first adjustment after adjtimex-start turned the PLL off.
kernel_pll_on() {
        [ $(($(adjtimex_field status) & 0x1)) = 1 ]
}

# within VALUE MAX: |VALUE| <= MAX, as numbers
within() {
        awk -v v="$1" -v m="$2" 'BEGIN { exit !(v <= m && v >= -m) }'
}

# The first sample's offset from the journal ("NTP reply from ...: ..., offset -0.050123 s, delay
# 0.000456 s, ...", at debug level) and the round trips of the run, as one INFO line.
settle_samples_info() {
        daemon_log | sed -n 's/^NTP reply from .*offset \([-+0-9.]*\) s, delay \([0-9.]*\) s.*/\1@\2/p' |
                tr '\n' ' ' | sed 's/^/INFO   samples (offset@delay, s): /'
        echo
}

fifty_ms_start_suite() {
        local base t0 row after offset_max phase_max freq_max offset phase freq rows
        systemctl stop systemd-timesyncd
        # As at a first boot, as the simulation's scenario starts: no frequency file. The checks
        # before leave one (the daemon saves a fitted frequency at once and at stop), which the
        # daemon would start from after adjtimex-start set the kernel's to 0.
        rm -f /var/lib/systemd/timesync/frequency
        # Debug level for the samples' offsets and round trips in the journal.
        mkdir -p "$(dirname $UNIT_DROPIN)"
        printf '[Service]\nEnvironment=SYSTEMD_LOG_LEVEL=debug\n' >$UNIT_DROPIN
        systemctl daemon-reload
        base=$($T/true-time-base)
        check chronyd_serving_the_clock_before_the_50_ms_step_starts start_chrony settle 11150 14490 \
                "local stratum 1" "$CERTS/server-chain.pem" 0 "$base"
        check guest_clock_is_stepped_50_ms_ahead_with_the_discipline_as_at_boot bash -c \
                "$T/adjtimex-start --change-this-machines-clock 0.05 >$RUN/adjtimex-start.txt"
        offset=$(clock_offset_from "$base")
        info "the guest's clock minus the server's time after the step: $offset s"
        use_config "NTS=localhost:14490" "NTSTrustedCertificates=$CERTS/ca.pem"
        if ! check fifty_ms_start_is_taken_up_by_the_kernel_pll wait_for 90 kernel_pll_on; then
                journalctl -q -u nts-settle -n 10 --no-pager | sed 's/^/INFO   chronyd: /'
                daemon_log | tail -n 10 | sed 's/^/INFO   timesyncd: /'
        else
                t0=$(uptime_s)
                # The first exchange under emulation is the slowest (round trips of 10 to 70 ms
                # measured), and its offset is off by up to half of that.
                check fifty_ms_start_is_slewed_not_stepped wait_for 10 offset_within -0.1 -0.01
                mapfile -t rows < <(awk '!/^#/ && NF' "$SETTLE_EXPECT")
                for row in "${rows[@]}"; do
                        read -r after offset_max phase_max freq_max <<<"$row"
                        sleep "$(awk -v t0="$t0" -v a="$after" -v u="$(uptime_s)" 'BEGIN { d = t0 + a - u; printf "%.1f", (d > 0 ? d : 0) }')"
                        offset=$(clock_offset_from "$base")
                        # STA_NANO (0x2000): the offset in nanoseconds, else in microseconds
                        phase=$(awk -v p="$(adjtimex_field offset)" -v n=$(($(adjtimex_field status) & 0x2000)) \
                                'BEGIN { printf "%+.6f", p / (n ? 1e9 : 1e6) }')
                        freq=$(awk -v f="$(adjtimex_field freq)" 'BEGIN { printf "%+.3f", f / 65536 }')
                        info "${after} s after the first sync: clock $offset s from the server, kernel phase $phase s, kernel frequency $freq ppm (bounds $offset_max s, $phase_max s, $freq_max ppm)"
                        check "clock_within_${offset_max}_s_${after}_s_after_a_50_ms_start" within "$offset" "$offset_max"
                        check "kernel_phase_within_${phase_max}_s_${after}_s_after_a_50_ms_start" within "$phase" "$phase_max"
                        check "kernel_frequency_within_${freq_max}_ppm_${after}_s_after_a_50_ms_start" within "$freq" "$freq_max"
                done
        fi
        settle_samples_info
        rm -f $UNIT_DROPIN
        systemctl daemon-reload
        systemctl stop nts-settle
}

# ---- qemu: several NTS servers at once, no single one decides (issue 16) ----

# as_nobody CMD...: an unprivileged user runs CMD.
as_nobody() {
        setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# verdicts_are LIST: the Verdict of every source in timesync-sources --json (run by nobody),
# sorted, space separated.
verdicts_are() {
        [ "$(as_nobody timesync-sources --json | sed -n 's/^ *"Verdict": "\([a-z]*\)",$/\1/p' | sort | tr '\n' ' ')" = "$1 " ]
}

# The table of timesync-sources, run by nobody, marks the source NAME with MARK.
sources_table_marks() {
        as_nobody timesync-sources | grep -q "^$1 $2 "
}

# never_selected NAME: the journal of this run neither selects NAME nor synchronizes to it (one
# server alone is never "Selected", so the second pattern is what catches it).
never_selected() {
        ! daemon_log | grep -Eq "^(Selected server|Initial clock synchronization to) $1 "
}

# key_exchanges_at_least N NAME: the journal of this run has N key exchanges with NAME done.
key_exchanges_at_least() {
        [ "$(log_count "NTS key exchange with $2 .* done")" -ge "$1" ]
}

# Four NTS servers on the guest's loopback, the liar first in NTS=: three serve the true time
# through true-time.so, whatever the guest's clock does, the fourth the true time less 30 min.
# The guest's clock is 30 min fast: the three agree on -30 min, the liar says -60 min. The
# daemon steps the real clock right by what the three agree on and never follows the liar, not
# even when the three stop answering.
several_sources_suite() {
        local i
        systemctl stop systemd-timesyncd
        check liar_30_min_slow_starts start_chrony liar 11130 14470 "local stratum 1" \
                "$CERTS/server-chain.pem" -1800000
        for i in 1 2 3; do
                check "true_time_server_${i}_starts" start_chrony "true$i" "1113$i" "1447$i" "local stratum 1" \
                        "$CERTS/server-chain.pem" 0
        done
        date -s "@$(awk -v t="$(now)" 'BEGIN { printf "%.3f", t + 1800 }')" >/dev/null
        check guest_clock_is_set_30_min_fast_again clock_is_wrong "$T0" "$U0"
        use_config "NTS=localhost:14470 localhost:14471 localhost:14472 localhost:14473" \
                "NTSTrustedCertificates=$CERTS/ca.pem"
        check three_of_four_servers_step_the_clock_right wait_for 90 clock_is_right "$T0" "$U0"
        check journal_says_three_of_four_agree_on_minus_30_min log_has \
                'Initial clock synchronization to localhost:1447[123] (offset -1[78][0-9][0-9]\.[0-9]* s, NTS authenticated, 3 of 4 NTS sources agree'
        check journal_says_the_liar_is_a_falseticker wait_for 30 log_has '^NTS source localhost:14470 is a falseticker'
        check liar_is_never_selected never_selected localhost:14470
        check server_name_is_one_of_the_three wait_for 10 bash -c \
                "busctl get-property ${BUS[*]} ServerName | grep -q '^s \"localhost:1447[123]\"\$'"
        check timesync_sources_as_nobody_marks_the_liar wait_for 10 sources_table_marks x localhost:14470
        check timesync_sources_json_one_selected_two_agree_one_falseticker wait_for 10 verdicts_are \
                'falseticker selected truechimer truechimer'
        # Three agree: NTSStatus names only the falseticker, with its offset (-30 min, or -60 min
        # measured before the step).
        check nts_status_names_only_the_falseticker_while_three_agree bash -c \
                "busctl get-property ${BUS[*]} NTSStatus | grep -Eq '^s \"Falseticker: localhost:14470 \\(-(1[78]|3[56])[0-9]{2}\\.[0-9]{6} s\\)\"\$'"
        # What an attacker who drops everything the three honest servers send achieves (here
        # they stop): the liar still answers, and never moves the real clock.
        systemctl stop nts-true1 nts-true2 nts-true3
        # After "(3 do not answer)" the status may name answers from before the clock's last
        # slew too: the guest's clock is slewed for real.
        check liar_alone_leaves_the_clock_alone wait_for 120 log_has \
                '^Only 0 of 4 NTS sources answer and agree, 3 needed (3 do not answer)[^;]*; clock left alone'
        sleep 40
        check clock_stays_right_while_only_the_liar_answers clock_is_right "$T0" "$U0"
        check liar_alone_is_never_selected never_selected localhost:14470
        daemon_log | grep -E 'falseticker|NTS sources|Initial|Selected|fails' | sed 's/^/INFO   /'
        as_nobody timesync-sources | sed 's/^/INFO   /'
        systemctl stop nts-liar
}

# Years behind (the clock file removed, 2020), with two servers whose certificates were issued
# after the floor, named localhost and 127.0.0.1: while one answers, its bootstrap time is not
# enough (a majority of the sources in use must agree); once both do, they set the real
# clock right in one step, then run their key exchanges again with every check.
bootstrap_several_suite() {
        systemctl stop systemd-timesyncd
        check first_of_two_fresh_servers_starts start_chrony several1 11134 14474 "local stratum 1" \
                "$CERTS/fresh-chain.pem" 0
        rm -f /var/lib/systemd/timesync/clock
        date -s 2020-01-01 >/dev/null
        use_config "NTS=localhost:14474 127.0.0.1:14475" "NTSTrustedCertificates=$CERTS/ca.pem" "ConnectionRetrySec=2"
        check one_of_two_servers_is_not_enough_for_a_bootstrap wait_for 60 log_has \
                'Only 1 of 2 NTS sources agree, 2 needed (1 does not answer); clock left alone'
        check clock_stays_wrong_with_one_server clock_is_wrong "$T0" "$U0"
        check second_of_two_fresh_servers_starts start_chrony several2 11135 14475 "local stratum 1" \
                "$CERTS/fresh-chain.pem" 0
        check two_agreeing_servers_bootstrap_the_clock wait_for 120 clock_is_right "$T0" "$U0"
        check journal_says_two_sources_agree_on_the_bootstrap log_has \
                '^Bootstrap: the clock took the time that 2 NTS sources agree on'
        check first_repeats_its_key_exchange_with_every_check wait_for 60 key_exchanges_at_least 2 localhost:14474
        check second_repeats_its_key_exchange_with_every_check wait_for 60 key_exchanges_at_least 2 127.0.0.1:14475
        check nts_authenticated_after_the_bootstrap_of_two wait_for 60 authenticated
        daemon_log | grep -E 'advancing|not yet valid|Bootstrap|bootstrap|Initial|NTS sources agree' | sed 's/^/INFO   /'
        systemctl stop nts-several1 nts-several2
}

# STA_UNSYNC (0x40) set: what the kernel says at every boot, and after every `date -s`.
kernel_unsynchronized() {
        [ $(($(adjtimex_field status) & 0x40)) != 0 ]
}

# Years behind, as with a dead RTC battery: the clock reads 2020 when the daemon starts, which
# advances it to its floor (the clock file is gone: the package's build time). The server's
# certificate was issued at run.sh time, after that floor, so it is not yet valid by the clock:
# the bootstrap from the floor, on the guest's real clock, in one start of the daemon as at a
# boot (a daemon started again later finds the clock past its floor, docs/NTS.md).
bootstrap_suite() {
        systemctl stop systemd-timesyncd
        check chronyd_fresh_certificate_server_starts start_chrony fresh 11125 14462 "local stratum 1" \
                "$CERTS/fresh-chain.pem" 0
        rm -f /var/lib/systemd/timesync/clock
        date -s 2020-01-01 >/dev/null
        check guest_clock_is_set_to_2020 output_is 2020 date +%Y
        check kernel_says_unsynchronized_at_2020 kernel_unsynchronized
        use_config "NTS=localhost:14462" "NTSTrustedCertificates=$CERTS/ca.pem"
        check daemon_advances_the_clock_to_its_floor wait_for 10 log_has \
                '^System clock is behind the last recorded time, advancing it to'
        check bootstrap_sets_the_clock_right wait_for 90 clock_is_right "$T0" "$U0"
        check journal_says_bootstrap_from_the_floor log_has \
                'is not yet valid by our clock, which is not synchronized and behind (the \(daemon advanced the clock to its floor\|clock reads [0-9]* s before its floor\)'
        check journal_says_bootstrap_done wait_for 10 log_has '^Bootstrap: the clock took the time of localhost:14462'
        check nts_authenticated_after_bootstrap wait_for 60 authenticated
        daemon_log | grep -E 'advancing|not yet valid|Bootstrap|Initial|NTS key exchange' | sed 's/^/INFO   /'
}

# The issue's case on the real clock: the clock right, the kernel calling it unsynchronized (as
# at every boot; a `date -s` to its own time does that), and a server two years ahead whose
# certificate is valid from two years ahead (issued ahead of a rotation). Before the fix it
# moved the clock by two years; now nothing says the clock is behind its floor.
correct_clock_suite() {
        systemctl stop systemd-timesyncd
        check chronyd_two_years_ahead_starts start_chrony ahead 11128 14466 "local stratum 1" \
                "$CERTS/ahead-chain.pem" $((2 * 365 * 86400 * 1000))
        date -s "@$(now)" >/dev/null
        check kernel_says_unsynchronized_on_a_correct_clock kernel_unsynchronized
        use_config "NTS=localhost:14466" "NTSTrustedCertificates=$CERTS/ca.pem"
        check journal_says_bootstrap_refused_on_a_correct_clock wait_for 30 log_has \
                '^Bootstrap with localhost:14466 refused: its certificate is not yet valid by our clock, and nothing says that the clock is behind'
        sleep 5
        check correct_clock_is_not_moved_by_a_not_yet_valid_certificate clock_is_right "$T0" "$U0"
        check not_authenticated_by_a_not_yet_valid_certificate not_authenticated
        daemon_log | grep -E 'Bootstrap|NTS key exchange' | sed 's/^/INFO   /'
        systemctl stop nts-ahead
}

# An expired certificate on a correctly set guest. Its server serves a time 30 min ahead, so a
# daemon that took it would move the clock by that much.
expired_certificate_suite() {
        systemctl stop nts-shifted nts-fresh
        check chronyd_expired_certificate_server_starts start_chrony expired 11126 14463 "local stratum 1" \
                "$CERTS/expired-chain.pem" 1800000
        use_config "NTS=localhost:14463" "NTSTrustedCertificates=$CERTS/ca.pem"
        check journal_says_certificate_expired wait_for 30 log_has 'NTS key exchange with localhost:14463 failed: .*expired'
        daemon_log | grep -E 'NTS key exchange|Bootstrap' | sed 's/^/INFO   /'
        sleep 5
        check expired_certificate_does_not_move_the_clock clock_is_right "$T0" "$U0"
        check expired_certificate_is_not_authenticated not_authenticated
}

not_authenticated() {
        ! authenticated
}

# output_is VALUE COMMAND...: COMMAND prints exactly VALUE
output_is() {
        local want=$1
        shift
        [ "$("$@")" = "$want" ]
}

# one_line_saying TEXT PATTERN: TEXT is one line, and it matches PATTERN
one_line_saying() {
        [ "$(grep -c . <<<"$1")" = 1 ] && grep -q -e "$2" <<<"$1"
}

ntp_packets_received() {
        "$P/usr/bin/chronyc" -h "$RUN/chrony/chronyd.sock" serverstats | sed -n 's/^NTP packets received *: *//p'
}

ke_connections() {
        "$P/usr/bin/chronyc" -h "$RUN/chrony/chronyd.sock" serverstats | sed -n 's/^NTS-KE connections accepted *: *//p'
}

# libssl3 gone for the daemon: NTS servers configured, and a plain NTP server too, so no time
# at all, one error saying so, and not a single packet to either server. The package cannot
# leave this image (systemd 252 and libsystemd-shared depend on it, PID 1 maps libcrypto), so the
# two libraries are hidden in the daemon's mount namespace: dlopen() fails for it alone.
no_libssl_suite() {
        local ntp_before ke_before errors
        mkdir -p "$(dirname $UNIT_DROPIN)"
        printf '[Service]\nBindReadOnlyPaths=/dev/null:/usr/lib/x86_64-linux-gnu/libssl.so.3 /dev/null:/usr/lib/x86_64-linux-gnu/libcrypto.so.3\n' \
                >$UNIT_DROPIN
        systemctl daemon-reload
        ntp_before=$(ntp_packets_received)
        ke_before=$(ke_connections)
        use_config "NTS=localhost:14460" "NTSTrustedCertificates=$CERTS/ca.pem" "NTP=127.0.0.1:11123"
        check daemon_without_libssl_runs wait_for 10 daemon_active
        sleep 15
        errors=$(journalctl -b -p err -o cat --no-pager \
                _SYSTEMD_INVOCATION_ID="$(systemctl show -p InvocationID --value systemd-timesyncd)")
        # shellcheck disable=SC2001 # a prefix on each line of a multi-line value
        echo "$errors" | sed 's/^/INFO   error: /'
        check without_libssl_exactly_one_error one_line_saying "$errors" 'libssl.so.3 or libcrypto.so.3 is missing'
        check without_libssl_not_authenticated not_authenticated
        # The NTS server stays the selected one (unusable): never the plain NTP= server.
        check without_libssl_no_plain_ntp_fallback output_is 's "localhost:14460"' prop ServerName
        check without_libssl_nts_status_says_unavailable bash -c \
                "busctl get-property ${BUS[*]} NTSStatus | grep -q 'NTS unavailable'"
        info "chronyd NTP packets received: $ntp_before -> $(ntp_packets_received), NTS-KE connections: $ke_before -> $(ke_connections)"
        check without_libssl_no_ntp_packet_reaches_the_server output_is "$ntp_before" ntp_packets_received
        check without_libssl_no_key_exchange_reaches_the_server output_is "$ke_before" ke_connections
        rm -f $UNIT_DROPIN
        systemctl daemon-reload
        nts_config
        check nts_authenticated_again_with_libssl wait_for 60 authenticated
}

# ---- qemu: the dhclient exit hook (DHCP-provided NTP servers on ifupdown machines) ----

HOOK=/etc/dhcp/dhclient-exit-hooks.d/timesyncd
DHCP_DROPIN=/run/systemd/timesyncd.conf.d/01-dhclient.conf

# run_dhclient_hook REASON [SERVERS]: the hook as dhclient-script runs it, sourced, with the
# lease's option in new_ntp_servers
run_dhclient_hook() {
        reason=$1 new_ntp_servers=${2:-} sh -c ". $HOOK"
}

dhcp_dropin_says() {
        grep -qx "NTP=$1" $DHCP_DROPIN
}

# With NTS= configured: the lease's servers become NTP= in a runtime drop-in, read by a reload
# (same process), and change nothing about the time source: no plain NTP next to NTS.
dhclient_hook_suite() {
        local pid
        pid=$(daemon_pid)
        run_dhclient_hook BOUND "192.0.2.53 192.0.2.54"
        check dhclient_hook_writes_the_lease_ntp_servers dhcp_dropin_says "192.0.2.53 192.0.2.54"
        check daemon_reloads_the_dhcp_ntp_servers wait_for 15 runtime_prop_is SystemNTPServers \
                'as 2 "192.0.2.53" "192.0.2.54"'
        check dhcp_ntp_servers_reloaded_in_the_same_process output_is "$pid" daemon_pid
        sleep 3
        check dhcp_ntp_servers_do_not_replace_nts bash -c \
                "[ \"\$(busctl get-property ${BUS[*]} ServerName)\" = 's \"localhost:14460\"' ] && \
                 [ \"\$(busctl get-property ${BUS[*]} NTSAuthenticated)\" = 'b true' ]"
        run_dhclient_hook BOUND $'192.0.2.1\nNTS=198.51.100.1'
        check dhclient_hook_refuses_a_malformed_option dhcp_dropin_says "192.0.2.53 192.0.2.54"
        run_dhclient_hook EXPIRE
        check dhclient_hook_removes_the_servers_when_the_lease_ends test ! -e $DHCP_DROPIN
        check daemon_drops_the_dhcp_ntp_servers wait_for 15 runtime_prop_is SystemNTPServers 'as 0'
}

runtime_prop_is() {
        [ "$(prop "$1")" = "$2" ]
}

# ---- qemu: stock's purge and a reboot (docs/DEBIAN.md, "Stock's purge") ----

REBOOT_DROPIN=/etc/systemd/timesyncd.conf.d/60-nts-test-reboot.conf
REBOOT_JAR=/var/lib/timesyncd-nts/nts-localhost_14467.jar

# chronyd whose server keys are kept over the reboot, so that the saved cookies stay valid
start_persistent_chrony() {
        CHRONY_DIR=$PERSIST/chrony start_chrony persist 11129 14467 "local stratum 1"
}

# Ours over stock again (stock left in "rc" by apt), NTS in use with a configuration on disk,
# then the routine purge of stock's leftover: our unit stays enabled with its D-Bus alias, the
# daemon keeps running, and its state directory stays: the cookie jar, which the daemon writes
# at a clean stop (and removes when it loads it), is written there after the purge. The next
# boot checks the rest (after_reboot_suite).
purge_stock_then_reboot_suite() {
        local tws
        # The changed timesyncd.conf is kept, as in the image's swap (dpkg would ask).
        check ours_installed_over_stock_again bash -c "apt-get install -y -o Dpkg::Options::=--force-confdef \
                -o Dpkg::Options::=--force-confold /opt/nts-test/debs/timesyncd-nts_*.deb \
                </dev/null >$RUN/swap-qemu.log 2>&1 || { tail -n 8 $RUN/swap-qemu.log | sed 's/^/INFO   /'; exit 1; }"
        check stock_left_in_rc_state_by_apt output_is config-files dpkg_status systemd-timesyncd
        check no_deb_systemd_helper_record_after_the_swap test ! -e $DSH_RECORD
        mkdir -p $PERSIST "$(dirname $REBOOT_DROPIN)"
        check chronyd_with_kept_keys_starts start_persistent_chrony
        rm -f $DROPIN
        printf '[Time]\nNTS=localhost:14467\nNTSTrustedCertificates=%s\n' "$CERTS/ca.pem" >$REBOOT_DROPIN
        systemctl restart systemd-timesyncd
        check nts_authenticated_before_the_purge wait_for 60 authenticated

        tws=$(tws_state)
        check dpkg_purge_of_stock_leftover_succeeds purge_leftover systemd-timesyncd
        check unit_enabled_after_stock_purge unit_enabled
        check unit_links_kept_after_stock_purge unit_links_present
        if stock_ships_time_wait_sync; then
                check time_wait_sync_state_kept_after_stock_purge tws_state_is "$tws"
                # Enabled as an administrator does it, for the next boot to show it at work.
                check time_wait_sync_can_be_enabled systemctl enable systemd-time-wait-sync.service
        fi
        check daemon_still_active_after_stock_purge daemon_active
        # The unit starts again at the next boot; stopped now, the jar is on disk before it.
        check daemon_stops_cleanly_after_stock_purge systemctl stop systemd-timesyncd
        check cookie_jar_saved_in_var_lib_timesyncd_nts_at_stop grep -q '^cookie=' $REBOOT_JAR
        info "after stock's purge: /var/lib/systemd/timesync $([ -d /var/lib/systemd/timesync ] && echo kept || echo removed by it, as expected)"
        echo after-stock-purge >$PHASE_FILE
}

ke_connections_of() {
        "$P/usr/bin/chronyc" -h "$1/chronyd.sock" serverstats | sed -n 's/^NTS-KE connections accepted *: *//p'
}

# The boot after stock's purge: enabled and started at boot, reachable by its D-Bus name, and
# going on with the cookies saved before the purge.
after_reboot_suite() {
        check unit_enabled_after_the_reboot unit_enabled
        check daemon_active_after_the_reboot wait_for 60 daemon_active
        check daemon_resumes_with_the_cookies_saved_before_the_purge wait_for 30 log_has \
                '^Resuming NTS with localhost:14467: [1-8] cookies'
        check chronyd_with_kept_keys_starts_again start_persistent_chrony
        check nts_authenticated_after_the_reboot wait_for 120 authenticated
        # Enabled before the reboot, it started at boot and waited for the daemon's first
        # synchronization.
        if stock_ships_time_wait_sync; then
                check time_wait_sync_finished_after_the_sync_at_boot wait_for 30 time_wait_sync_done
                info "systemd-time-wait-sync at boot: $(journalctl -b -u systemd-time-wait-sync -o cat | tail -n 2 | paste -sd '|')"
        fi
        # shellcheck disable=SC2016 # expanded by the inner bash
        check timedatectl_reaches_the_daemon_after_the_reboot bash -c \
                '[ "$(timedatectl show-timesync -p ServerName --value)" = localhost:14467 ]'
        check state_directory_made_again_by_the_unit test -d /var/lib/systemd/timesync
        info "chronyd NTS-KE connections since the reboot: $(ke_connections_of $PERSIST/chrony)"
        daemon_log | grep -E 'Resuming|NTS key exchange|Initial' | sed 's/^/INFO   /'
        rm -f $PHASE_FILE
}

# ---- qemu: memory against stock and chronyd, and stock's D-Bus surface ----

# mem NAME PID: "MEM" line with the process's RSS and PSS from smaps_rollup (KiB)
mem() {
        awk -v n="$1" -v p="$2" '/^Rss:/ { r = $2 } /^Pss:/ { s = $2 }
                END { printf "MEM %s pid=%s rss_kib=%d pss_kib=%d\n", n, p, r, s }' "/proc/$2/smaps_rollup"
}

# mem_after_sync NAME: the daemon's memory 10 s after its first synchronization
mem_after_sync() {
        if ! wait_for 60 bash -c "journalctl -b -o cat --no-pager _SYSTEMD_INVOCATION_ID=\$(systemctl show -p InvocationID --value systemd-timesyncd) | grep -qi 'initial.*synchroni'"; then
                info "$1: no synchronization" >&2
                return 1
        fi
        sleep 10
        mem "$1" "$(daemon_pid)"
}

chrony_client_synchronized() {
        "$P/usr/bin/chronyc" -h "$RUN/client/chronyd.sock" -n sources | grep -q '^\^\*'
}

# chronyd as an NTS client of the guest's NTS server, -x: the reference for our memory with NTS.
chrony_client_mem() {
        local dir=$RUN/client
        mkdir -p "$dir"
        chmod 0700 "$dir"
        cat >"$dir/chrony.conf" <<EOC
server localhost port 11123 nts ntsport 14460 iburst
ntstrustedcerts $CERTS/ca.pem
cmdport 0
bindcmdaddress $dir/chronyd.sock
pidfile $dir/chronyd.pid
EOC
        systemd-run -q --unit=nts-chrony-client -p CapabilityBoundingSet=~CAP_SYS_TIME \
                "$P/usr/sbin/chronyd" -x -d -u root -f "$dir/chrony.conf"
        wait_for 60 chrony_client_synchronized || return 1
        sleep 10
        mem chronyd_client_nts "$(systemctl show -p MainPID --value nts-chrony-client)"
        systemctl stop nts-chrony-client
}

# The D-Bus surface: member, kind, signature (and a method's result), no values.
bus_surface() {
        busctl introspect --no-pager org.freedesktop.timesync1 /org/freedesktop/timesync1 |
                awk 'NR > 1 { print $1, $2, $3, ($2 == "method" ? $4 : "") }' | sort
}

show_timesync_names() {
        timedatectl show-timesync --all | cut -d= -f1 | sort
}

# Our members that stock lacks: those with NTS in the name, SecureTime (the upstream NTS patch
# set's name for NTSAuthenticated; its NTSKeyExchangeServers has NTS in it), RefusedReplies
# (replies refused, per server and cause) and Sources (every source in use, with its verdict).
OUR_ADDITIONS='NTS|SecureTime|RefusedReplies|Sources'

# surface_matches_stock KIND: ours without our additions equals stock
surface_matches_stock() {
        local d
        d=$(diff <(grep -Ev "$OUR_ADDITIONS" "$RUN/ours-$1") "$RUN/stock-$1")
        # shellcheck disable=SC2001 # a prefix on each line of a multi-line value
        [ -z "$d" ] || echo "$d" | sed "s/^/INFO   $1 diff: /"
        [ -z "$d" ]
}

# ---- qemu: CPU and system calls per poll, ours with NTS against stock with plain NTP ----

# Both against the same chronyd ("plain": NTP on port 123, NTS-KE on 14464), both polling every
# CPU_POLL_SEC (PollIntervalMinSec= = PollIntervalMaxSec=, 16 s being stock's floor), one after
# the other. INFO figures, not targets: the checks only say that numbers came out.
CPU_POLL_SEC=16
CPU_POLLS=4
SYSCALL_POLLS=2

# The whole suite measures unless run.sh --skip cpu said not to: each daemon's windows are
# (CPU_POLLS + SYSCALL_POLLS) polls of 16 s under emulation, and CI measures in one suite's
# guest only, to stay inside its time (docs/TESTING.md).
cpu_wanted() {
        [ "$(cat $T/skip 2>/dev/null)" != cpu ]
}

cpu_server_packets() {
        "$P/usr/bin/chronyc" -h "$RUN/plain/chronyd.sock" serverstats | sed -n 's/^NTP packets received *: *//p'
}

cpu_server_packets_above() {
        [ "$(cpu_server_packets)" -gt "$1" ]
}

# chronyc has the count: chronyd's command socket comes up after its NTS-KE port, which is
# what start_chrony waits for
cpu_server_counts() {
        [ -n "$(cpu_server_packets)" ]
}

# cpu_ticks PID: utime + stime of the process, all threads, in clock ticks (/proc/PID/stat,
# fields 14 and 15; the part after the command name, which may hold spaces, starts at field 3)
cpu_ticks() {
        sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# cpu_ns PID: time on a CPU of every thread, in ns (schedstat: finer than the ticks)
cpu_ns() {
        cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# cpu_per_poll NAME: once the daemon has synchronized, its CPU time over CPU_POLLS polls (the
# requests that reach the server), the D-Bus signals it sends meanwhile, then its system calls
# over SYSCALL_POLLS more polls, traced apart (a tracer makes every call dearer). One line:
# "CPU NAME pid= polls= cpu_ms= cpu_ms_per_poll= cpu_us_per_poll= signals_per_reply=
# syscall_polls= syscalls= syscalls_per_poll= top=" (top: the most frequent calls, NAME:COUNT).
# Each window runs from a request's arrival to a later one's, so it holds whole poll cycles.
cpu_per_poll() {
        local name=$1 pid p0 p1 t0 t1 n0 n1 s0 s1 sc q1 hz
        hz=$(getconf CLK_TCK)
        if ! wait_for 120 log_has 'nitial.*synchroni'; then
                info "$name: no synchronization" >&2
                return 1
        fi
        if ! wait_for 30 cpu_server_counts; then
                info "$name: chronyc gives no packet count" >&2
                return 1
        fi
        pid=$(daemon_pid)
        # Line-buffered, so that the file holds every signal sent so far when it is read.
        stdbuf -oL dbus-monitor --system "type='signal',path='/org/freedesktop/timesync1'" \
                >"$RUN/signals-$name" 2>/dev/null &
        CPU_MONITOR=$!
        p0=$(cpu_server_packets)
        wait_for $((3 * CPU_POLL_SEC)) cpu_server_packets_above "$p0" || { cpu_window_failed "$name: no request reached chronyd"; return 1; }
        p0=$(cpu_server_packets) t0=$(cpu_ticks "$pid") n0=$(cpu_ns "$pid") s0=$(cpu_signals "$name")
        wait_for $(((CPU_POLLS + 2) * CPU_POLL_SEC)) cpu_server_packets_above $((p0 + CPU_POLLS - 1)) ||
                { cpu_window_failed "$name: fewer than $CPU_POLLS requests reached chronyd"; return 1; }
        p1=$(cpu_server_packets) t1=$(cpu_ticks "$pid") n1=$(cpu_ns "$pid") s1=$(cpu_signals "$name")
        cpu_window_failed ""

        $T/syscall-count "$pid" >"$RUN/syscalls-$name" &
        sc=$!
        wait_for $(((SYSCALL_POLLS + 2) * CPU_POLL_SEC)) cpu_server_packets_above $((p1 + SYSCALL_POLLS - 1)) ||
                { info "$name: fewer than $SYSCALL_POLLS traced requests" >&2; kill -INT "$sc"; wait "$sc"; return 1; }
        q1=$(cpu_server_packets)
        kill -INT "$sc"
        wait "$sc" || { info "$name: syscall-count failed" >&2; return 1; }
        awk -v n="$name" -v pid="$pid" -v polls=$((p1 - p0)) -v ticks=$((t1 - t0)) -v hz="$hz" \
                -v ns=$((n1 - n0)) -v sig=$((s1 - s0)) -v sp=$((q1 - p1)) '
                { split($1, s, "="); split($2, t, "=")
                  printf "CPU %s pid=%s polls=%d cpu_ms=%d cpu_ms_per_poll=%.2f cpu_us_per_poll=%.0f signals_per_reply=%.2f syscall_polls=%d syscalls=%d syscalls_per_poll=%.1f top=%s\n",
                        n, pid, polls, ticks * 1000 / hz, ticks * 1000 / hz / polls, ns / 1000 / polls, sig / polls,
                        sp, s[2], s[2] / sp, t[2] }' "$RUN/syscalls-$name"
}

# cpu_signals NAME: the PropertiesChanged signals dbus-monitor has seen so far
cpu_signals() {
        grep -c '^signal .*member=PropertiesChanged' "$RUN/signals-$1"
}

# cpu_window_failed WHY: dbus-monitor stopped; WHY, when not empty, said
cpu_window_failed() {
        kill "$CPU_MONITOR" 2>/dev/null
        wait "$CPU_MONITOR" 2>/dev/null
        [ -z "$1" ] || info "$1" >&2
}

# cpu_ours_nts: ours with NTS against the plain chronyd, polling every CPU_POLL_SEC
cpu_ours_nts() {
        use_config "NTS=localhost:14464" "NTSTrustedCertificates=$CERTS/ca.pem" "PollIntervalMinSec=$CPU_POLL_SEC" "PollIntervalMaxSec=$CPU_POLL_SEC"
        cpu_per_poll ours_nts >$RUN/cpu-ours-nts
        check cpu_and_syscalls_per_poll_ours_nts_measured test -s $RUN/cpu-ours-nts
}

# cpu_stock_ntp: stock (installed) with plain NTP against the same chronyd, same interval
cpu_stock_ntp() {
        use_config "NTP=127.0.0.1" "PollIntervalMinSec=$CPU_POLL_SEC" "PollIntervalMaxSec=$CPU_POLL_SEC"
        cpu_per_poll stock_ntp >$RUN/cpu-stock-ntp
        check cpu_and_syscalls_per_poll_stock_ntp_measured test -s $RUN/cpu-stock-ntp
}

# The two CPU lines, and "CPU ratio ours_nts/stock_ntp cpu= syscalls= signals=" (measured in
# this one run, so comparable with each other).
cpu_report() {
        cat $RUN/cpu-ours-nts $RUN/cpu-stock-ntp
        awk '{ for (i = 3; i <= NF; i++) { split($i, kv, "="); v[$2, kv[1]] = kv[2] } }
                END { o = "ours_nts"; s = "stock_ntp"
                        if (v[s, "cpu_us_per_poll"] > 0 && v[s, "syscalls_per_poll"] > 0 && v[s, "signals_per_reply"] > 0)
                                printf "CPU ratio ours_nts/stock_ntp cpu=%.2f syscalls=%.2f signals=%.2f\n",
                                        v[o, "cpu_us_per_poll"] / v[s, "cpu_us_per_poll"],
                                        v[o, "syscalls_per_poll"] / v[s, "syscalls_per_poll"],
                                        v[o, "signals_per_reply"] / v[s, "signals_per_reply"] }' \
                $RUN/cpu-ours-nts $RUN/cpu-stock-ntp
}

# The simulation's model of the kernel's clock discipline (test/simulation/sim-kclock.c) against
# this kernel: one scripted adjtimex() sequence run on both, the kernel's offset, frequency and
# state compared second by second. The script changes the guest's clock (slews, two steps that
# cancel out) and leaves the discipline as at boot; the daemon is stopped meanwhile.
kernel_model_suite() {
        systemctl stop systemd-timesyncd
        check adjtimex_script_runs_against_the_guest_kernel bash -c \
                "$T/adjtimex-script --change-this-machines-clock >$RUN/adjtimex-kernel.txt 2>$RUN/adjtimex-kernel.err"
        $T/adjtimex-script-model >$RUN/adjtimex-model.txt
        # The model was validated against Debian 12's kernel (Linux 6.1, whose output the
        # simulation suite also compares with on every run): there a difference fails. On the
        # newer kernels of the other suites it is reported below until checked there.
        if [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" = bookworm ]; then
                check kernel_clock_model_matches_the_guest_kernel_second_by_second bash -c \
                        "$T/adjtimex-script-compare.sh $RUN/adjtimex-kernel.txt $RUN/adjtimex-model.txt >$RUN/adjtimex-compare.txt"
        elif ! $T/adjtimex-script-compare.sh $RUN/adjtimex-kernel.txt $RUN/adjtimex-model.txt >$RUN/adjtimex-compare.txt; then
                info "the kernel clock model differs from this kernel ($(uname -r)); see below"
        fi
        sed 's/^/INFO   /' $RUN/adjtimex-compare.txt $RUN/adjtimex-kernel.err | head -n 20
        sed 's/^/INFO   kernel: /' $RUN/adjtimex-kernel.txt
        systemctl start systemd-timesyncd
}

# The CPU part alone (run.sh --only cpu): the plain chronyd, ours, stock reinstalled, stock.
cpu_only_suite() {
        check daemon_active_after_boot wait_for 30 daemon_active
        check chronyd_plain_server_on_port_123_starts start_chrony plain 123 14464 "local stratum 1"
        cpu_ours_nts
        check stock_reinstalls_in_qemu bash -c "apt-get install -y -o Dpkg::Options::=--force-confold \
                /opt/nts-test/stock/systemd-timesyncd_*.deb </dev/null >$RUN/stock-qemu.log 2>&1"
        systemctl restart systemd-timesyncd
        check stock_daemon_active wait_for 30 daemon_active
        cpu_stock_ntp
        cpu_report
}

stock_memory_and_bus_suite() {
        systemctl stop nts-ntpsec
        check chronyd_plain_server_on_port_123_starts start_chrony plain 123 14464 "local stratum 1"
        use_config "NTP=127.0.0.1"
        mem_after_sync ours_ntp >$RUN/mem-ours-ntp
        check memory_ours_without_nts_measured test -s $RUN/mem-ours-ntp
        nts_config
        mem_after_sync ours_nts >$RUN/mem-ours-nts
        check memory_ours_with_nts_measured test -s $RUN/mem-ours-nts
        cpu_wanted && cpu_ours_nts
        chrony_client_mem >$RUN/mem-chrony-client
        check memory_chronyd_nts_client_measured test -s $RUN/mem-chrony-client
        bus_surface >$RUN/ours-introspect
        show_timesync_names >$RUN/ours-show-timesync

        use_config "NTP=127.0.0.1"
        check stock_reinstalls_in_qemu bash -c "apt-get install -y -o Dpkg::Options::=--force-confold \
                /opt/nts-test/stock/systemd-timesyncd_*.deb </dev/null >$RUN/stock-qemu.log 2>&1"
        systemctl restart systemd-timesyncd
        check stock_daemon_active wait_for 30 daemon_active
        info "exposure: stock running $(exposure systemd-timesyncd.service), ours running $OURS_EXPOSURE"
        check running_unit_exposure_not_above_stock not_above "$OURS_EXPOSURE" "$(exposure systemd-timesyncd.service)"
        mem_after_sync stock_ntp >$RUN/mem-stock-ntp
        check memory_stock_measured test -s $RUN/mem-stock-ntp
        cpu_wanted && cpu_stock_ntp
        bus_surface >$RUN/stock-introspect
        show_timesync_names >$RUN/stock-show-timesync
        check dbus_introspect_matches_stock_minus_nts surface_matches_stock introspect
        check show_timesync_names_match_stock_minus_nts surface_matches_stock show-timesync
        info "our NTS additions: $(grep -E "$OUR_ADDITIONS" $RUN/ours-introspect | cut -d' ' -f1 | tr '\n' ' ')"
        cat $RUN/mem-ours-ntp $RUN/mem-ours-nts $RUN/mem-chrony-client $RUN/mem-stock-ntp
        awk '{ for (i = 3; i <= NF; i++) { split($i, kv, "="); v[$2, kv[1]] = kv[2] } }
                END { for (k = 1; k <= 2; k++) { f = k == 1 ? "rss_kib" : "pss_kib"
                        if (v["stock_ntp", f] && v["chronyd_client_nts", f])
                                printf "MEM ratio %s ours_ntp/stock_ntp=%.2f ours_nts/chronyd_client_nts=%.2f\n", f,
                                        v["ours_ntp", f] / v["stock_ntp", f], v["ours_nts", f] / v["chronyd_client_nts", f] } }' \
                $RUN/mem-ours-ntp $RUN/mem-ours-nts $RUN/mem-chrony-client $RUN/mem-stock-ntp
        if cpu_wanted; then cpu_report; fi
}

# ---- qemu: an SRV pool through the real systemd-resolved (issue 17) ----

resolved_on_bus() {
        busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s \
                org.freedesktop.resolve1 2>/dev/null | grep -qx 'b true'
}

# Not authenticated, and no key exchange with anything in the daemon's current run.
srv_pool_unused() {
        ! authenticated && ! log_has 'Starting NTS key exchange'
}

# NSD serves the zone nts.test that run.sh signed on 127.0.0.2; the image's systemd-resolved
# (Debian's package, enabled: mkosi installs it) is restarted by the real systemd with a drop-in
# for DNSSEC=yes and the zone's DS as trust anchor; NTS=srv:pool.nts.test names two chronyd at
# the ports of their SRV records (14481, 14482), with certificates for *.nts.test. resolved
# needs a link besides lo that is up with an address, or it answers every lookup with
# NetworkDown (/work/shared/DNSSEC.md): a veth pair. Then resolved is masked and stopped: one
# clear error, nothing used. At the end resolved runs again as it came, the link is gone.
srv_pool_suite() {
        local dir=$RUN/nsd
        check srv_pool_guest_clock_is_right_for_the_signatures clock_is_right "$T0" "$U0"
        systemctl stop systemd-timesyncd
        check srv_pool_veth_link_is_up bash -c 'ip link add nts0 type veth peer name nts1 &&
                ip address add 192.0.2.1/24 dev nts0 && ip link set nts0 up && ip link set nts1 up'
        mkdir -p "$dir"
        # shellcheck source=../../../../../../lib/dns-zone.sh
        . $T/dns-zone.sh
        dns_nsd_conf "$dir" 127.0.0.2 "$CERTS/dns" nts.test=nts.test.signed
        systemd-run -q --unit=nts-nsd -p CapabilityBoundingSet=~CAP_SYS_TIME \
                -p "Environment=LD_LIBRARY_PATH=/opt/nts-test/dns/lib" /opt/nts-test/dns/nsd -d -c "$dir/nsd.conf"
        check nsd_serves_the_signed_zone wait_for 10 bash -c "ss -Hlun | grep -q '127.0.0.2:53 '"
        mkdir -p /etc/systemd/resolved.conf.d /etc/dnssec-trust-anchors.d
        printf '[Resolve]\nDNS=127.0.0.2\nDomains=~nts.test\nDNSSEC=yes\nLLMNR=no\nMulticastDNS=no\nFallbackDNS=\n' \
                >/etc/systemd/resolved.conf.d/50-nts-test.conf
        cp "$CERTS/dns/nts.test.ds" /etc/dnssec-trust-anchors.d/nts.test.positive
        info "systemd-resolved: $(dpkg-query -W -f='${Version} ${Status}' systemd-resolved 2>&1), $(systemctl is-enabled systemd-resolved 2>&1)"
        check systemd_resolved_restarts_with_dnssec_yes systemctl restart systemd-resolved
        check systemd_resolved_runs_on_the_bus wait_for 30 resolved_on_bus
        check srv_target_ke1_starts start_chrony srv1 11141 14481 "local stratum 1"
        check srv_target_ke2_starts start_chrony srv2 11142 14482 "local stratum 1"
        use_config "NTS=srv:pool.nts.test" "NTSTrustedCertificates=$CERTS/ca.pem"
        check srv_pool_records_are_dnssec_authenticated wait_for 30 log_has \
                '^SRV pool srv:pool\.nts\.test: 2 targets, DNSSEC-authenticated, TTL 300 s: '
        check srv_pool_targets_synchronize_at_their_ports wait_for 60 log_has \
                '^Initial clock synchronization to ke[12]\.nts\.test:1448[12] (offset .*, NTS authenticated, 2 of 2 NTS sources agree'
        check timesync_sources_lists_both_srv_targets wait_for 10 bash -c \
                "timesync-sources | grep -q ' ke1\.nts\.test:14481 ' && timesync-sources | grep -q ' ke2\.nts\.test:14482 '"
        daemon_log | grep -E 'SRV pool|NTS sources agree|Initial' | sed 's/^/INFO   /'
        # Masked, not only stopped: the package's bus activation file would start it again at
        # the daemon's first call.
        systemctl mask --runtime --now systemd-resolved >/dev/null 2>&1
        check resolved_is_gone_from_the_bus wait_for 10 bash -c '! busctl call org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus NameHasOwner s org.freedesktop.resolve1 | grep -q true'
        use_config "NTS=srv:pool.nts.test" "NTSTrustedCertificates=$CERTS/ca.pem"
        check srv_pool_without_resolved_is_one_clear_error wait_for 30 log_has \
                '^SRV pool srv:pool\.nts\.test is not used: systemd-resolved is not running'
        sleep 3
        check srv_pool_without_resolved_uses_nothing srv_pool_unused
        daemon_log | grep -E 'SRV pool|Starting NTS' | sed 's/^/INFO   /'
        # The same for host names: with resolved masked they are resolved with getaddrinfo()
        # (before the fix the bus's activation error counted as resolved's answer, and no NTS
        # server name resolved at all).
        # ntp.test (the guest's /etc/hosts) at chronyd's port: a name no earlier run has cookies
        # for, so a key exchange needs it resolved.
        use_config "NTS=ntp.test:14460" "NTSTrustedCertificates=$CERTS/ca.pem"
        check nts_server_name_resolves_while_resolved_is_masked wait_for 60 authenticated
        systemctl stop nts-srv1 nts-srv2 nts-nsd
        rm -f /etc/systemd/resolved.conf.d/50-nts-test.conf /etc/dnssec-trust-anchors.d/nts.test.positive
        systemctl unmask --runtime systemd-resolved >/dev/null 2>&1
        systemctl start systemd-resolved
        ip link del nts0 2>/dev/null || true
        nts_config
}

qemu_suite() {
        check daemon_active_after_boot wait_for 30 daemon_active
        check daemon_runs_as_systemd_timesync runs_as_systemd_timesync
        check daemon_keeps_only_cap_sys_time only_cap_sys_time
        security_checks

        T0=$(now)
        U0=$(uptime_s)
        # The true time, for true-time.so: the guest's clock is right until step_suite.
        TRUE_BASE=$($T/true-time-base)
        check chronyd_nts_server_starts start_chrony chrony 11123 14460 "local stratum 1"
        nts_config
        check nts_authenticated_against_chronyd wait_for 60 authenticated
        # Why not, from both sides: their logs are in the guest's journal, gone with the guest.
        authenticated || {
                journalctl -q -u nts-chrony -n 20 --no-pager | sed 's/^/INFO   chronyd: /'
                journalctl -q -u systemd-timesyncd -n 20 --no-pager | sed 's/^/INFO   timesyncd: /'
        }
        check timesync_status_shows_the_nts_server timesync_status_shows_server
        check unit_status_text_says_nts_authenticated bash -c \
                "systemctl show -p StatusText --value systemd-timesyncd | grep -q ', NTS authenticated\.\$'"
        check show_timesync_says_nts_authenticated show_timesync_says_authenticated
        check time_wait_sync_completes time_wait_sync_completes
        check time_set_target_is_reached time_set_target_active
        check time_sync_target_is_reached wait_for 10 time_sync_target_active
        check synchronized_flag_file_exists synchronized_flag_exists
        check clock_file_touched_at_the_sync clock_file_recent

        step_suite

        nts_config
        # shellcheck disable=SC2016 # expanded by the inner bash
        check set_ntp_false_stops_the_daemon bash -c 'timedatectl set-ntp false && sleep 1 && \
                [ "$(systemctl is-active systemd-timesyncd)" = inactive ]'
        # shellcheck disable=SC2016 # expanded by the inner bash
        check set_ntp_true_starts_the_daemon bash -c 'timedatectl set-ntp true && \
                for i in $(seq 20); do [ "$(systemctl is-active systemd-timesyncd)" = active ] && exit 0; sleep 0.5; done; exit 1'
        check nts_authenticated_again_after_set_ntp_true wait_for 60 authenticated
        dhclient_hook_suite

        check ntpsec_nts_server_starts start_ntpsec
        check runtime_nts_servers_switch_to_ntpsec busctl call "${BUS[@]}" SetRuntimeNTSServers as 1 ntp.test
        check nts_authenticated_against_ntpsec wait_for 60 bash -c \
                "[ \"\$(busctl get-property ${BUS[*]} ServerName)\" = 's \"ntp.test\"' ] && \
                 [ \"\$(busctl get-property ${BUS[*]} NTSAuthenticated)\" = 'b true' ]"
        busctl call "${BUS[@]}" SetRuntimeNTSServers as 0

        # systemctl reload (ExecReload= sends SIGHUP): the new NTS= in the same process.
        local pid
        pid=$(daemon_pid)
        write_config "NTS=ntp.test" "NTSTrustedCertificates=$CERTS/ca.pem"
        check systemctl_reload_succeeds systemctl reload systemd-timesyncd
        check reload_switches_to_the_new_nts_server_in_the_same_process wait_for 60 reloaded_to_ntpsec "$pid"
        check journal_says_configuration_reloaded bash -c \
                "journalctl -b -u systemd-timesyncd | grep -q 'Configuration reloaded, servers changed'"

        # Plain NTP: runtime servers come first, as in stock timesyncd.
        use_config "NTP=127.0.0.1:11123"
        check plain_ntp_uses_the_configured_server wait_for 30 server_is 127.0.0.1:11123
        check set_runtime_ntp_servers_switches_server set_runtime_ntp 127.0.0.1
        check daemon_follows_the_runtime_server wait_for 30 server_is 127.0.0.1
        dbus_checks

        kernel_model_suite
        nts_step_suite
        # About five minutes of waiting for the discipline to settle: in Debian 12's guest,
        # whose kernel the simulation's model was validated on; `run.sh --only settle` runs it
        # in the others.
        if [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" = bookworm ]; then
                fifty_ms_start_suite
        else
                info "the 50 ms start's settling is checked in bookworm's guest (run.sh --only settle)"
        fi
        all_nts_servers_down_suite
        bootstrap_suite
        correct_clock_suite
        expired_certificate_suite
        several_sources_suite
        bootstrap_several_suite
        srv_pool_suite
        no_libssl_suite
        fresh_install_suite
        stock_memory_and_bus_suite
        purge_stock_then_reboot_suite
}

# shellcheck source=fresh-install.sh
. $T/fresh-install.sh

info "timesyncd-nts guest tests, virtualization: $(systemd-detect-virt || true)"
mkdir -p $RUN
if [ -e $PHASE_FILE ]; then
        # The qemu guest's second boot, after stock's purge (run.sh boots the same disk again).
        info "second boot: $(cat $PHASE_FILE)"
        after_reboot_suite
        echo "=== TESTS RESULT rc=$failures"
        systemctl poweroff
        exit 0
fi
package_checks
if systemd-detect-virt -q --container; then
        nspawn_suite
elif [ "$(cat $T/only 2>/dev/null)" = cpu ]; then
        cpu_only_suite
elif [ "$(cat $T/only 2>/dev/null)" = kclock ]; then
        kernel_model_suite
elif [ "$(cat $T/only 2>/dev/null)" = settle ]; then
        check daemon_active_after_boot wait_for 30 daemon_active
        fifty_ms_start_suite
else
        qemu_suite
        journalctl -b -u systemd-timesyncd --no-pager -o short-monotonic | tail -n 25 | sed 's/^/INFO journal /'
fi

echo "=== TESTS RESULT rc=$failures"
if systemd-detect-virt -q --container; then
        systemctl exit "$((failures > 0 ? 1 : 0))"
elif [ -e $PHASE_FILE ]; then
        # qemu runs with -no-reboot: it ends here, and run.sh starts the second boot.
        echo "=== REBOOT for the second boot"
        systemctl reboot
else
        systemctl poweroff
fi
