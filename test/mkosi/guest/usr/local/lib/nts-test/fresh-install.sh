# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by guest-checks.sh in the qemu guest: the package as a new user has it, with no
# configuration at all, and a mistyped NTS key. The compiled-in server names (FallbackNTS= and
# FallbackNTP=, as --validate prints them) resolve through the guest's own resolver path (NSS or
# systemd-resolved, both read /etc/hosts) to stand-ins on the guest's loopback: a chronyd NTS
# server for each FallbackNTS= name, with a certificate for all of them from a CA made here and
# put into the guest's trust store for these checks, and one plain chronyd for the FallbackNTP=
# names, whose packet counter must stay at zero. The guest has no network: nothing of this
# reaches the real servers.

FRESH=$RUN/fresh
FRESH_CA=/etc/ssl/certs/nts-test-fresh-install.pem
TIMESYNCD_CONF=/etc/systemd/timesyncd.conf
# The plain NTP stand-in for every FallbackNTP= name; the NTS stand-ins are 127.0.0.11 onwards.
FRESH_PLAIN=127.0.0.21

# validated KEY: the value of KEY= in what the daemon's --validate prints for the files as they
# are (the compiled-in default where nothing sets it)
validated() {
        "$LIBSD"/systemd-timesyncd --validate 2>/dev/null | sed -n "s/^$1=//p"
}

validate_says_fallback_nts() {
        "$LIBSD"/systemd-timesyncd --validate 2>/dev/null |
                grep -qx '# Time from: FallbackNTS= (NTS only), unless the network names NTP servers'
}

# start_standin NAME ADDRESS [CHAIN]: chronyd serving NTP on ADDRESS:123, -x and without
# CAP_SYS_TIME; with CHAIN also NTS-KE on ADDRESS:4460 (chronyd's default NTS-KE port, the one
# a name without :PORT is reached at).
start_standin() {
        local dir=$FRESH/$1 addr=$2 chain=${3:-}
        mkdir -p "$dir"
        chmod 0700 "$dir"
        cat >"$dir/chrony.conf" <<EOC
local stratum 1
allow 127.0.0.0/8
bindaddress $addr
port 123
cmdport 0
bindcmdaddress $dir/chronyd.sock
pidfile $dir/chronyd.pid
EOC
        [ -z "$chain" ] || printf 'ntsport 4460\nntsservercert %s\nntsserverkey %s\nntsdumpdir %s\nntsprocesses 0\n' \
                "$chain" "$FRESH/server.key" "$dir" >>"$dir/chrony.conf"
        systemd-run -q --unit="nts-fresh-$1" -p CapabilityBoundingSet=~CAP_SYS_TIME \
                "$P/usr/sbin/chronyd" -x -d -u root -f "$dir/chrony.conf"
        if [ -n "$chain" ]; then
                wait_for 10 bash -c "ss -Hltn | grep -q '$addr:4460 '"
        else
                wait_for 10 bash -c "ss -Hlun | grep -q '$addr:123 '"
        fi
}

# standin_stat NAME FIELD: a counter of chronyc serverstats of stand-in NAME
standin_stat() {
        "$P/usr/bin/chronyc" -h "$FRESH/$1/chronyd.sock" serverstats | sed -n "s/^$2 *: *//p"
}

plain_packets() {
        standin_stat plain 'NTP packets received'
}

# A test CA and one server certificate that names every FallbackNTS= name (EC keys: quick to
# make under emulation), valid from now for two days.
make_fresh_certificates() {
        local san
        # shellcheck disable=SC2086 # one name per word
        san=$(printf 'DNS:%s,' $FRESH_NTS_NAMES)
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
                -subj '/CN=timesyncd-nts fresh-install test CA' -keyout "$FRESH/ca.key" -out "$FRESH/ca.pem" \
                -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
                2>"$FRESH/openssl.log" &&
                openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                        -subj "/CN=${FRESH_NTS_NAMES%% *}" -keyout "$FRESH/server.key" -out "$FRESH/server.csr" \
                        2>>"$FRESH/openssl.log" &&
                openssl x509 -req -in "$FRESH/server.csr" -CA "$FRESH/ca.pem" -CAkey "$FRESH/ca.key" -set_serial 1 \
                        -days 2 -out "$FRESH/server.pem" -extfile <(echo "subjectAltName = ${san%,}") \
                        2>>"$FRESH/openssl.log" &&
                cat "$FRESH/server.pem" "$FRESH/ca.pem" >"$FRESH/server-chain.pem"
}

# The test CA in the system's trust store, and out of it again: in the hashed directory
# /etc/ssl/certs, which the daemon reads (nts-tls.c) and which ca-certificates fills, as
# update-ca-certificates would put it there (the file and its hash link). Not that command
# itself: it rewrites the whole store, about 160 s under emulation each time.
ca_hash_link() {
        echo "/etc/ssl/certs/$(openssl x509 -hash -noout -in "$FRESH/ca.pem").0"
}

trust_fresh_ca() {
        local link
        link=$(ca_hash_link) || return 1
        [ ! -e "$link" ] && cp "$FRESH/ca.pem" "$FRESH_CA" && ln -s "$(basename "$FRESH_CA")" "$link" &&
                openssl verify -CApath /etc/ssl/certs "$FRESH/server.pem" >/dev/null
}

untrust_fresh_ca() {
        local link
        link=$(ca_hash_link) || return 1
        rm -f "$link" "$FRESH_CA"
        [ ! -e "$link" ] && ! openssl verify -CApath /etc/ssl/certs "$FRESH/server.pem" >/dev/null 2>&1
}

# The /etc/hosts lines of the stand-ins, after a copy of the file as it was.
add_standin_hosts() {
        local i=11 name
        cp -p /etc/hosts "$FRESH/hosts.orig"
        {
                echo "# nts-test: fresh-install stand-ins"
                for name in $FRESH_NTS_NAMES; do
                        echo "127.0.0.$i $name"
                        i=$((i + 1))
                done
                for name in $FRESH_NTP_NAMES; do
                        echo "$FRESH_PLAIN $name"
                done
        } >>/etc/hosts
}

# resolves_to NAME ADDRESS: NSS, and systemd-resolved where it runs (the daemon asks it then),
# give ADDRESS for NAME. Not `getent ahosts`: its AI_ADDRCONFIG finds no IPv4 address in a
# guest that has only a loopback interface, and returns nothing.
resolves_to() {
        local nss resolved=
        nss=$(getent hosts "$1" | awk '{ print $1 }')
        systemctl -q is-active systemd-resolved && resolved=$(resolvectl query -4 "$1" 2>&1)
        [ "$nss" = "$2" ] && { [ -z "$resolved" ] || grep -qwF "$2" <<<"$resolved"; } && return 0
        info "$1: NSS says '$nss', systemd-resolved '${resolved:-not running}', expected $2"
        return 1
}

standin_names_resolve() {
        local i=11 name ok=0
        for name in $FRESH_NTS_NAMES; do
                resolves_to "$name" "127.0.0.$i" || ok=1
                i=$((i + 1))
        done
        for name in $FRESH_NTP_NAMES; do
                resolves_to "$name" $FRESH_PLAIN || ok=1
        done
        return $ok
}

# Nothing configures a server: the package's timesyncd.conf has only comments, no drop-in in
# any of the directories the daemon reads.
no_configuration() {
        local keys dropins
        keys=$(grep -Ev '^[[:space:]]*([#;[]|$)' $TIMESYNCD_CONF)
        dropins=$(ls /etc/systemd/timesyncd.conf.d/*.conf /run/systemd/timesyncd.conf.d/*.conf \
                /usr/local/lib/systemd/timesyncd.conf.d/*.conf /usr/lib/systemd/timesyncd.conf.d/*.conf \
                /lib/systemd/timesyncd.conf.d/*.conf 2>/dev/null)
        [ -z "$keys" ] || info "set in $TIMESYNCD_CONF: $keys"
        [ -z "$dropins" ] || info "drop-ins: $dropins"
        [ -z "$keys" ] && [ -z "$dropins" ]
}

# Neither runtime nor per-link servers in the running daemon.
no_runtime_or_link_servers() {
        local p
        for p in LinkNTPServers SystemNTPServers RuntimeNTPServers RuntimeNTSServers SystemNTSServers; do
                [ "$(prop $p)" = 'as 0' ] || { info "$p: $(prop $p)"; return 1; }
        done
}

# ke_accepted_total: NTS-KE connections all the NTS stand-ins accepted
ke_accepted_total() {
        local i n=0
        for ((i = 1; i <= FRESH_NTS_COUNT; i++)); do
                n=$((n + $(standin_stat "nts$i" 'NTS-KE connections accepted')))
        done
        echo $n
}

every_nts_standin_had_a_key_exchange() {
        local i
        for ((i = 1; i <= FRESH_NTS_COUNT; i++)); do
                [ "$(standin_stat "nts$i" 'NTS-KE connections accepted')" -gt 0 ] || return 1
        done
}

server_is_one_of_the_fallback_nts_names() {
        local s
        s=$(prop ServerName | sed -n 's/^s "\(.*\)"$/\1/p')
        [ -n "$s" ] && grep -qxF "$s" <(tr ' ' '\n' <<<"$FRESH_NTS_NAMES")
}

status_text() {
        systemctl show -p StatusText --value systemd-timesyncd
}

# nts_status_is TEXT: the NTSStatus property, as timedatectl show-timesync prints it
nts_status_is() {
        [ "$(timedatectl show-timesync -p NTSStatus --value)" = "$1" ]
}

# nts_status_starts_with PREFIX: NTSStatus begins with PREFIX.
nts_status_starts_with() {
        local s
        s=$(timedatectl show-timesync -p NTSStatus --value)
        [ "${s:0:${#1}}" = "$1" ]
}

# A restart of the daemon with what is configured now and no cookies of the stand-ins' names:
# a first start, as after an installation.
restart_fresh() {
        local name
        systemctl stop systemd-timesyncd
        for name in $FRESH_NTS_NAMES; do
                rm -f "/var/lib/timesyncd-nts/nts-$name.jar"
        done
        systemctl start systemd-timesyncd
}

# The mistyped key in the package's own timesyncd.conf, as a user would write it.
typo_in_timesyncd_conf() {
        cp -p $TIMESYNCD_CONF "$FRESH/timesyncd.conf.orig"
        echo "NTSServers=${FRESH_NTS_NAMES%% *}" >>$TIMESYNCD_CONF
}

validate_names_the_typo() {
        local out r=0
        out=$("$LIBSD"/systemd-timesyncd --validate 2>&1 >/dev/null) || r=$?
        # shellcheck disable=SC2001 # a prefix on each line of a multi-line value
        echo "$out" | sed 's/^/INFO   --validate: /'
        [ "$r" != 0 ] && grep -q "Unknown key name 'NTSServers' in section 'Time' looks like an NTS setting (did you mean NTS=?)" <<<"$out"
}

fresh_install_suite() {
        local before ke_before
        mkdir -p "$FRESH"
        # NTPsec listens on port 123 and 4460 of every address.
        systemctl stop nts-ntpsec systemd-timesyncd
        rm -f "$DROPIN"
        check fresh_install_has_no_configuration no_configuration
        FRESH_NTS_NAMES=$(validated FallbackNTS)
        FRESH_NTP_NAMES=$(validated FallbackNTP)
        FRESH_NTS_COUNT=$(wc -w <<<"$FRESH_NTS_NAMES")
        info "compiled-in FallbackNTS=$FRESH_NTS_NAMES FallbackNTP=$FRESH_NTP_NAMES"
        info "resolver: systemd-resolved $(systemctl is-active systemd-resolved 2>&1), nsswitch $(grep '^hosts:' /etc/nsswitch.conf)"
        check validate_says_time_from_fallback_nts_only validate_says_fallback_nts
        check fallback_nts_compiled_in_has_four_names test "$FRESH_NTS_COUNT" -ge 4
        check fallback_ntp_compiled_in_is_not_empty test -n "$FRESH_NTP_NAMES"

        check fresh_install_test_certificates_made make_fresh_certificates
        check fresh_install_test_ca_in_the_trust_store trust_fresh_ca
        add_standin_hosts
        check fresh_install_names_resolve_to_the_standins standin_names_resolve
        tail -n 9 /etc/hosts | sed 's/^/INFO   hosts: /'
        local i=1 name
        for name in $FRESH_NTS_NAMES; do
                check "nts_standin_${i}_starts" start_standin "nts$i" "127.0.0.$((10 + i))" "$FRESH/server-chain.pem"
                i=$((i + 1))
        done
        check plain_ntp_standin_starts start_standin plain $FRESH_PLAIN

        # 1. Nothing configured: the FallbackNTS= names, NTS only, together.
        restart_fresh
        check fresh_install_daemon_active wait_for 30 daemon_active
        check fresh_install_no_runtime_or_link_servers no_runtime_or_link_servers
        check fresh_install_uses_fallback_nts wait_for 30 log_has \
                "^No NTS=, NTP= or network servers: using the $FRESH_NTS_COUNT NTS servers of FallbackNTS=, never FallbackNTP=\.$"
        check fresh_install_nts_authenticated wait_for 120 authenticated
        check fresh_install_server_is_a_fallback_nts_name server_is_one_of_the_fallback_nts_names
        check fresh_install_every_nts_standin_had_a_key_exchange wait_for 60 every_nts_standin_had_a_key_exchange
        check fresh_install_four_sources_agree wait_for 120 verdicts_are "selected$(printf ' truechimer%.0s' $(seq 2 "$FRESH_NTS_COUNT"))"
        check fresh_install_journal_says_nts_authenticated_and_agreement log_has \
                "^Initial clock synchronization to .* (offset .*, NTS authenticated, [0-9]* of $FRESH_NTS_COUNT NTS sources agree"
        check fresh_install_show_timesync_says_authenticated bash -c \
                "timedatectl show-timesync --all | grep -qx 'NTSAuthenticated=yes'"
        info "plain NTP stand-in: $(plain_packets) packets received; NTS stand-ins: $(ke_accepted_total) key exchanges"
        check fresh_install_not_one_packet_to_fallback_ntp output_is 0 plain_packets
        info "status: $(status_text)"
        as_nobody timesync-sources | sed 's/^/INFO   /'
        daemon_log | grep -E 'FallbackNTS|Initial|NTS sources agree|Selected' | sed 's/^/INFO   /'

        # 2. A mistyped NTS key in timesyncd.conf: no time at all, although every stand-in answers.
        ke_before=$(ke_accepted_total)
        typo_in_timesyncd_conf
        check validate_names_the_mistyped_key_and_fails validate_names_the_typo
        restart_fresh
        check typo_journal_names_the_key_and_nts wait_for 30 log_has \
                "Unknown key name 'NTSServers' in section 'Time' looks like an NTS setting (did you mean NTS=?)"
        check typo_journal_says_not_synchronized wait_for 30 log_has \
                '^Unknown key NTSServers= (did you mean NTS=?) in the configuration: the clock is not synchronized'
        check typo_status_text_names_the_key wait_for 10 output_is \
                'Unknown key NTSServers= (did you mean NTS=?): no NTS server, not synchronizing.' status_text
        info "status: $(status_text)"
        check typo_nts_status_names_the_key nts_status_is 'Unknown key NTSServers= (did you mean NTS=?): no NTS server'
        timedatectl timesync-status 2>&1 | sed 's/^/INFO   timesync-status: /'
        sleep 10
        check typo_gives_no_time not_authenticated
        check typo_no_synchronization never_synchronized
        check typo_not_one_packet_to_fallback_ntp output_is 0 plain_packets
        check typo_no_key_exchange_with_fallback_nts output_is "$ke_before" ke_accepted_total
        cp -p "$FRESH/timesyncd.conf.orig" $TIMESYNCD_CONF
        check typo_timesyncd_conf_restored no_configuration

        # 3. The FallbackNTS= stand-ins stopped, as behind a firewall that blocks TCP 4460: no
        # time, no plain NTP, and the status says why.
        for ((i = 1; i <= FRESH_NTS_COUNT; i++)); do
                systemctl stop "nts-fresh-nts$i"
        done
        restart_fresh
        check unreachable_status_text_says_why wait_for 180 bash -c \
                "systemctl show -p StatusText --value systemd-timesyncd | grep -q '^No FallbackNTS= server reachable (TCP port 4460 blocked? DNS?), no plain NTP: set NTS= to reachable servers'"
        # The reason, then each failing server with its own.
        check unreachable_nts_status_says_why nts_status_starts_with \
                'No FallbackNTS= server reachable (TCP port 4460 blocked? DNS?), no plain NTP: set NTS= to reachable servers; 4 of 4 NTS servers failing: '
        info "status: $(status_text)"
        check unreachable_gives_no_time not_authenticated
        check unreachable_no_synchronization never_synchronized
        check unreachable_not_one_packet_to_fallback_ntp output_is 0 plain_packets
        daemon_log | grep -E 'FallbackNTS|NTS key exchange|reachable' | tail -n 8 | sed 's/^/INFO   /'

        # 4. The control: FallbackNTS= emptied, as stock, and the same stand-in gets the packets
        # the checks above count (so a zero there means none were sent).
        before=$(plain_packets)
        use_config "FallbackNTS="
        check empty_fallback_nts_synchronizes_to_fallback_ntp_unauthenticated wait_for 60 synchronized_to_fallback_ntp
        check empty_fallback_nts_is_not_authenticated not_authenticated
        check empty_fallback_nts_packets_reach_the_plain_standin packets_of_plain_above "$before"
        info "plain NTP stand-in: $before -> $(plain_packets) packets received"
        daemon_log | grep -E '^Initial|FallbackNTP' | sed 's/^/INFO   /'

        rm -f "$DROPIN"
        systemctl stop nts-fresh-plain
        cp -p "$FRESH/hosts.orig" /etc/hosts
        check fresh_install_test_ca_removed_from_the_trust_store untrust_fresh_ca
        nts_config
}

# This run of the daemon synchronized, and to a FallbackNTP= name without NTS.
synchronized_to_fallback_ntp() {
        local line name
        line=$(daemon_log | grep -m1 '^Initial clock synchronization to ') || return 1
        name=${line#Initial clock synchronization to }
        name=${name%% *}
        grep -qxF "$name" <(tr ' ' '\n' <<<"$FRESH_NTP_NAMES") && ! grep -q 'NTS authenticated' <<<"$line"
}

never_synchronized() {
        ! daemon_log | grep -q '^Initial clock synchronization'
}

packets_of_plain_above() {
        [ "$(plain_packets)" -gt "$1" ]
}
