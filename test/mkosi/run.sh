#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# System tests of the Debian package on a real systemd: builds the .deb, a Debian 12 image with
# mkosi 14 in which the .deb replaces stock systemd-timesyncd, then boots the image in
# systemd-nspawn (unit, sysusers and D-Bus checks; no clock there) and in qemu with software
# emulation (the guest's own clock: NTS against chronyd in the guest, real clock steps and
# slews, the bootstrap, memory against stock and chronyd; figures in $NTS_MKOSI_DIR/memory-guest.txt;
# CPU, system calls and D-Bus signals per poll against stock in $NTS_MKOSI_DIR/cpu-guest.txt),
# then boots that disk again: stock's purge and a reboot.
# The guest never has a network; this machine's clock is never touched.
#   test/mkosi/run.sh [--suite SUITE] [--no-nspawn] [--no-qemu] [--reuse-image] [--only cpu|kclock|settle | --skip cpu]
# --suite trixie or forky (default bookworm): the image of that Debian suite, with a package
# built in a debootstrap tree of that suite ($NTS_MKOSI_DIR/chroot; docs/DEBIAN.md, "Other
# Debian suites").
# --reuse-image skips the package and image builds and only refreshes the guest's test scripts
# and their unit in the last image (for work on the tests themselves).
# --only cpu runs, in qemu, only the CPU and system calls per poll against stock (a few minutes
# instead of the whole guest suite; no second boot); --only kclock, only the scripted adjtimex()
# sequence against the guest's kernel and the simulation's model of it (test/simulation/
# adjtimex-script.c; a boot and about three minutes); --only settle, only the discipline after a
# 50 ms start against what the simulation says (test/simulation/expect-50ms-start.txt; a boot
# and about five minutes).
# Work files and caches: $NTS_MKOSI_DIR (default build-mkosi/ in the source tree).
# Peers: $NTS_MKOSI_PEERS, a directory test/tools/fixtures/fetch-peers.sh and fetch-dns.sh have filled
# (CI's build-peers, shared by the guests of all suites), else fetched into $NTS_MKOSI_DIR/peers.
# Needs (Debian 12), installed beforehand (this script installs nothing): mkosi
# systemd-container debootstrap qemu-system-x86 e2fsprogs, and what tools/build-deb.sh needs.
# The last line is "mkosi: N passed, N failed", counting the guest's check lines of all boots.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
work=${NTS_MKOSI_DIR:-$src/build-mkosi}
run_nspawn=1
run_qemu=1
build=1
suite=bookworm
only=
skip=
usage() {
        echo "usage: $0 [--suite bookworm|trixie|forky] [--no-nspawn] [--no-qemu] [--reuse-image] [--only cpu|kclock|settle | --skip cpu]" >&2
        exit 2
}
while [ $# -gt 0 ]; do
        case "$1" in
        --suite) [ $# -ge 2 ] || usage; suite=$2; shift ;;
        --no-nspawn) run_nspawn=0 ;;
        --no-qemu) run_qemu=0 ;;
        --reuse-image) build=0 ;;
        --only) case "${2:-}" in cpu | kclock | settle) only=$2 ;; *) usage ;; esac; shift ;;
        --skip) [ "${2:-}" = cpu ] || usage; skip=$2; shift ;;
        *) usage ;;
        esac
        shift
done
case "$suite" in
bookworm | trixie | forky) ;;
*) usage ;;
esac

step_start=$SECONDS
# The tree the guest's scripts come from, for the tables written at the end.
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
step() {
        echo "--- $* (at $((SECONDS - step_start)) s)"
}

# guest_lines LOG: the runner's output in a boot's log. The console copy carries a
# "guest-checks.sh[PID]: " prefix, after the kernel's time stamp on a serial console.
guest_lines() {
        tr -d '\r' <"$1" | sed -E 's/^(.*\[ *[0-9.]+\] )?guest-checks\.sh\[[0-9]+\]: //'
}

# results NAME LOG EXIT: prints the guest's check lines; true when the guest ran to its marker
# with no failure and its boot ended well.
results() {
        local clean
        clean=$(guest_lines "$2")
        grep -aE '^(PASS|FAIL|INFO|SKIP) ' <<<"$clean" || true
        grep -a '=== TESTS RESULT' <<<"$clean" || echo "$1: no result marker"
        if [ "$3" != 0 ] || ! grep -aq '^=== TESTS RESULT rc=0$' <<<"$clean"; then
                # The boot's end says why (a panic, a hung unit, a lost console): CI keeps
                # only this output, not the log.
                tail -n 40 <<<"$clean" | sed "s/^/$1 log: /"
                echo "$1: FAILED (exit $3), log: $2"
                return 1
        fi
}

# true-time.so: an LD_PRELOAD that gives a chronyd in the guest a clock of its own
# (guest-checks.sh), and true-time-base, which takes its starting point; syscall-count, the
# guest's count of a daemon's system calls (the images have no strace); adjtimex-script against
# the guest's kernel and against the simulation's model of it, and their comparison;
# adjtimex-start and the bounds the simulation holds a 50 ms start to, for the same start on the
# guest's kernel.
true_time_tools() {
        cc -O2 -Wall -Wextra -shared -fPIC -o "$1/true-time.so" "$src/test/tools/preload/true-time.c" -ldl
        cc -O2 -Wall -Wextra -o "$1/true-time-base" "$src/test/tools/preload/true-time-base.c"
        cc -O2 -Wall -Wextra -o "$1/syscall-count" "$src/test/tools/probes/syscall-count.c"
        cc -O2 -Wall -Wextra -o "$1/adjtimex-script" "$src/test/simulation/adjtimex-script.c"
        cc -O2 -Wall -Wextra -DADJTIMEX_SCRIPT_MODEL -I"$src/test/simulation" -o "$1/adjtimex-script-model" \
                "$src/test/simulation/adjtimex-script.c" "$src/test/simulation/sim-kclock.c" -lm
        cp "$src/test/simulation/adjtimex-script-compare.sh" "$1/"
        cc -O2 -Wall -Wextra -o "$1/adjtimex-start" "$src/test/mkosi/adjtimex-start.c"
        cp "$src/test/simulation/expect-50ms-start.txt" "$1/"
}

mkdir -p "$work"
work=$(cd "$work" && pwd)
peers=${NTS_MKOSI_PEERS:-}
if [ -n "$peers" ]; then
        if [ ! -x "$peers/root/usr/sbin/chronyd" ] || [ ! -x "$peers/dns/root/usr/sbin/nsd" ]; then
                echo "run.sh: NTS_MKOSI_PEERS=$peers has no chronyd or nsd (fetch-peers.sh, fetch-dns.sh)" >&2
                exit 2
        fi
        peers=$(cd "$peers" && pwd)
fi

# debootstrap 1.0.128 (Debian 12) has no script for forky: a copy of its data directory where
# forky is testing's script (the one later debootstraps use), for the build tree and for mkosi.
if [ "$suite" = forky ] && [ ! -e /usr/share/debootstrap/scripts/forky ]; then
        rm -rf "$work/debootstrap"
        cp -a /usr/share/debootstrap "$work/debootstrap"
        ln -s sid "$work/debootstrap/scripts/forky"
        export DEBOOTSTRAP_DIR="$work/debootstrap"
fi

# The image's configuration: bookworm's, for another suite with that suite's release and the
# names its 64-bit time_t transition gave the libraries the unpacked peers need.
mkosi_conf() {
        if [ "$suite" = bookworm ]; then
                cat "$src/test/mkosi/mkosi.conf"
        else
                sed -E -e "s/^Release=bookworm$/Release=$suite/" \
                        -e '/^Packages=/s/,(libssl3|libgnutls30|libnettle8)(,|$)/,\1t64\2/g' \
                        -e '/^Packages=/s/,(libssl3|libgnutls30|libnettle8)(,|$)/,\1t64\2/g' \
                        "$src/test/mkosi/mkosi.conf"
        fi
}

# build_tree: a debootstrap tree of the suite with the package's build dependencies, made once
# and kept in $work/chroot.
build_tree() {
        local t="$work/chroot"
        [ -e "$t/.complete" ] && return 0
        rm -rf "$t"
        debootstrap --variant=minbase \
                --include=build-essential,debhelper,meson,pkg-config,libsystemd-dev,libssl-dev,scdoc,fakeroot \
                "$suite" "$t" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 || {
                tail -n 20 "$work/debootstrap.log" >&2
                return 1
        }
        touch "$t/.complete"
}

image="$work/out/image"
if [ "$build" = 1 ]; then
        step "package ($suite)"
        if [ "$suite" = bookworm ]; then
                "$src/tools/build-deb.sh" "$work/debs" >/dev/null
        else
                build_tree
                "$src/tools/build-deb.sh" --root "$work/chroot" "$work/debs" >/dev/null
        fi

        step "peers and test tools"
        if [ -z "$peers" ]; then
                peers="$work/peers"
                "$src/test/tools/fixtures/fetch-peers.sh" "$peers" >/dev/null
                # NSD for the SRV pool check (srv_pool_suite; the image has systemd-resolved).
                "$src/test/tools/fixtures/fetch-dns.sh" "$peers" >/dev/null
        fi
        [ -d "$work/meson" ] || meson setup "$work/meson" "$src" -Dtests=true >/dev/null
        ninja -C "$work/meson" test/tools/mock-server/ntp-test-server test/tools/probes/adjtimex-read >/dev/null
        # Idempotent; before any certificate of this run is signed with its server.key (a
        # directory left incomplete by an older make-certs.sh is made again, key included).
        "$src/test/tools/fixtures/make-certs.sh" "$work/certs" >/dev/null
        # A server certificate valid from now on: issued after the package's clock floor (its
        # build epoch), so a guest clock at that floor finds it not yet valid (the bootstrap).
        openssl req -new -key "$work/certs/server.key" -subj /CN=localhost -out "$work/fresh.csr" 2>/dev/null
        openssl x509 -req -in "$work/fresh.csr" -CA "$work/certs/ca.pem" -CAkey "$work/certs/ca.key" \
                -set_serial "$(date +%s)" -days 30 -out "$work/fresh.pem" 2>/dev/null \
                -extfile <(echo 'subjectAltName = DNS:localhost, DNS:ntp.test, IP:127.0.0.1, IP:::1')
        cat "$work/fresh.pem" "$work/certs/ca.pem" >"$work/fresh-chain.pem"
        # A chain valid from two years ahead (issued ahead of a rotation), for a server two years
        # ahead that must not move the guest's correct clock.
        "$src/test/tools/fixtures/make-certs.sh" "$work/certs" ahead \
                "$(date -u -d '+730 days -1 day' +%Y%m%d%H%M%SZ)" "$(date -u -d '+1095 days' +%Y%m%d%H%M%SZ)" >/dev/null

        # The guest's DNSSEC-signed zone: _ntske._tcp.pool.nts.test names two NTS servers
        # (chronyd in the guest, at the ports of their records); signed now, valid four weeks.
        rm -rf "$work/dns"
        mkdir -p "$work/dns"
        # shellcheck disable=SC2016 # zone file directives, not shell variables
        printf '%s\n' '$ORIGIN nts.test.' '$TTL 300' '@ SOA ns hostmaster 1 3600 600 86400 300' '@ NS ns' \
                'ns A 127.0.0.2' '_ntske._tcp.pool SRV 10 50 14481 ke1' '_ntske._tcp.pool SRV 10 50 14482 ke2' \
                'ke1 A 127.0.0.1' 'ke2 A 127.0.0.1' >"$work/dns/nts.test.zone"
        # shellcheck source-path=SCRIPTDIR/../lib source=../lib/dns-zone.sh
        . "$src/test/lib/dns-zone.sh"
        dns_sign "$work/dns" nts.test >/dev/null || { echo "run.sh: signing the guest's zone failed" >&2; exit 1; }

        step "image"
        # The mkosi tree is staged afresh (mkosi.extra gets this run's package and tools); the
        # outputs and mkosi's caches stay: Incremental=yes keeps the tree with the packages
        # installed, so a warm build only copies it and runs mkosi.extra and mkosi.postinst.
        # A changed mkosi.conf (the package list) rebuilds that cache too.
        rm -rf "$work/tree"
        mkdir -p "$work/tree" "$work/cache" "$work/out"
        mkosi_conf >"$work/tree/mkosi.conf"
        cp "$src/test/mkosi/mkosi.postinst" "$work/tree/"
        # The archive copy this machine reaches can be older than the Valid-Until of a suite's
        # Release file (testing's, forky's, expire within days): mkosi's debootstrap ignores
        # it, and so does the apt that mkosi runs on the image (the signatures are still
        # checked). mkosi hides the host's /etc/apt from that apt, but passes APT_CONFIG on.
        echo 'Acquire::Check-Valid-Until "false";' >"$work/apt.conf"
        extra="$work/tree/mkosi.extra"
        cp -a "$src/test/mkosi/guest" "$extra"
        mkdir -p "$extra/opt/nts-test/debs" "$extra/opt/nts-test/bin" "$extra/etc/nts-test"
        cp "$work"/debs/timesyncd-nts_*.deb "$extra/opt/nts-test/debs/"
        cp -a "$peers/root" "$extra/opt/nts-test/peers"
        cp "$work/meson/test/tools/mock-server/ntp-test-server" "$extra/opt/nts-test/bin/"
        cp "$work/meson/test/tools/probes/adjtimex-read" "$extra/usr/local/lib/nts-test/"
        cp "$src/test/lib/dns-zone.sh" "$extra/usr/local/lib/nts-test/"
        true_time_tools "$extra/usr/local/lib/nts-test"
        # NSD unpacked, with the three libraries the image lacks (the host's, Debian 12 as the
        # guest).
        mkdir -p "$extra/opt/nts-test/dns/lib" "$extra/etc/nts-test/dns"
        cp "$peers/dns/root/usr/sbin/nsd" "$extra/opt/nts-test/dns/"
        for lib in libevent-2.1.so.7 libfstrm.so.0 libprotobuf-c.so.1; do
                cp -L "/lib/x86_64-linux-gnu/$lib" "$extra/opt/nts-test/dns/lib/"
        done
        cp "$work/dns/nts.test.signed" "$work/dns/nts.test.ds" "$extra/etc/nts-test/dns/"
        cp "$work/certs/ca.pem" "$work/certs/server.key" "$work/certs/server-chain.pem" \
                "$work/certs/expired-chain.pem" "$work/fresh-chain.pem" "$work/certs/ahead-chain.pem" \
                "$extra/etc/nts-test/"
        force=-f
        conf_sum=$(sha256sum <"$work/tree/mkosi.conf")
        [ "$conf_sum" = "$(cat "$work/out/mkosi.conf.sha256" 2>/dev/null)" ] || force=-ff
        (cd "$work/tree" && APT_CONFIG="$work/apt.conf" mkosi --cache "$work/cache" --output "$image" $force build \
                >"$work/mkosi.log" 2>&1) || {
                tail -n 40 "$work/mkosi.log" >&2
                exit 1
        }
        echo "$conf_sum" >"$work/out/mkosi.conf.sha256"
else
        [ -d "$image" ] || { echo "--reuse-image: no image in $image" >&2; exit 2; }
        cp -a "$src/test/mkosi/guest/usr/local/lib/nts-test/." "$image/usr/local/lib/nts-test/"
        cp "$src/test/mkosi/guest/etc/systemd/system/nts-test.service" "$image/etc/systemd/system/"
        cp "$src/test/lib/dns-zone.sh" "$image/usr/local/lib/nts-test/"
        true_time_tools "$image/usr/local/lib/nts-test"
fi
# The guest runs only the part named in "only", or all but the one named in "skip".
rm -f "$image/usr/local/lib/nts-test/only" "$image/usr/local/lib/nts-test/skip"
[ -z "$only" ] || echo "$only" >"$image/usr/local/lib/nts-test/only"
[ -z "$skip" ] || echo "$skip" >"$image/usr/local/lib/nts-test/skip"

passed=0
failed=0
# count LOG: adds the boot's PASS and FAIL check lines to the totals.
count() {
        local clean
        clean=$(guest_lines "$1")
        passed=$((passed + $(grep -ac '^PASS ' <<<"$clean" || true)))
        failed=$((failed + $(grep -ac '^FAIL ' <<<"$clean" || true)))
}

rc=0
if [ "$run_nspawn" = 1 ]; then
        step "nspawn boot"
        rm -rf "$work/results-nspawn"
        mkdir -p "$work/results-nspawn"
        r=0
        # systemd 258 and later refuse a cgroup v1 hierarchy, which Debian 12's nspawn gives the
        # container on a host without cgroup2 (as here): forky's gets the unified one.
        cgroup=()
        [ "$suite" != forky ] || cgroup=(SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1)
        env "${cgroup[@]}" timeout 300 systemd-nspawn -q --boot -D "$image" --register=no --keep-unit --private-network \
                --ephemeral --bind="$work/results-nspawn:/results" </dev/null >"$work/nspawn.log" 2>&1 || r=$?
        results nspawn "$work/nspawn.log" "$r" || rc=1
        count "$work/nspawn.log"
fi

if [ "$run_qemu" = 1 ]; then
        step "qemu boot"
        rm -f "$work/disk.raw" "$work"/serial.log* "$work"/serial-reboot.log*
        truncate -s 2G "$work/disk.raw"
        mkfs.ext4 -q -F -L root -d "$image" "$work/disk.raw"
        # shellcheck disable=SC2012 # Debian's kernel and initrd names: no spaces, no newlines
        kernel=$(ls "$image"/boot/vmlinuz-* | head -n1)
        # shellcheck disable=SC2012 # the same
        initrd=$(ls "$image"/boot/initrd.img-* | head -n1)
        # qemu_boot LOG: one boot of the disk, which a boot before may have changed (disk.raw is
        # made afresh above, so no -snapshot). -nic none: no network device at all. TCG, since
        # KVM is unusable on these machines. -no-reboot: a reboot in the guest ends qemu. The
        # timeout only stops a hung guest: forky's first boot ran past 900 s at a load of 10.
        qemu_boot() {
                timeout 1800 qemu-system-x86_64 -machine q35,accel=tcg -cpu max -smp 2 -m 1G -nodefaults \
                        -nographic -nic none -serial "file:$1" -no-reboot \
                        -kernel "$kernel" -initrd "$initrd" \
                        -append "root=/dev/vda rw console=ttyS0 quiet panic=-1" \
                        -drive "if=virtio,file=$work/disk.raw,format=raw,cache=unsafe" </dev/null
        }
        # guest_boot LOG: qemu_boot, and once more when the boot ended within two minutes
        # before the guest's runner wrote a line: forky's second boot once ended after 4 s with
        # exit 0 and no line from the runner (in CI; not reproduced). Such a boot ran no check.
        # A runner that never starts leaves the guest up until the timeout: no second try then.
        # The cut boot's log stays in LOG.cut and its end is printed.
        guest_boot() {
                local r=0 start=$SECONDS
                qemu_boot "$1" || r=$?
                if [ $((SECONDS - start)) -lt 120 ] && ! grep -aq 'guest-checks\.sh\[' "$1"; then
                        echo "qemu: the boot ended (exit $r) before the guest's runner started; booting once more"
                        tr -d '\r' <"$1" | tail -n 40 | sed 's/^/qemu cut boot log: /'
                        mv "$1" "$1.cut"
                        r=0
                        qemu_boot "$1" || r=$?
                fi
                return "$r"
        }
        r=0
        guest_boot "$work/serial.log" || r=$?
        results qemu "$work/serial.log" "$r" || rc=1
        count "$work/serial.log"
        # The guest asks for a second boot after stock's purge: the checks after a reboot. grep
        # reads all of its input (no -q): under pipefail, a grep that quits at the match may
        # leave the sed before it writing into a closed pipe, and the pipeline fail.
        if [ -n "$only" ]; then
                echo "qemu: --only $only, no second boot"
        elif guest_lines "$work/serial.log" | grep -a '^=== REBOOT' >/dev/null; then
                step "qemu second boot"
                r=0
                guest_boot "$work/serial-reboot.log" || r=$?
                results qemu-reboot "$work/serial-reboot.log" "$r" || rc=1
                count "$work/serial-reboot.log"
        else
                echo "qemu: the guest did not ask for its second boot"
                rc=1
        fi
        # The guest's memory figures, "MEM name pid= rss_kib= pss_kib=", and as the table
        # bench/run.sh copies into docs/BENCHMARKS.md: client, metric, value, unit.
        guest_lines "$work/serial.log" | grep -a '^MEM ' >"$work/memory-guest.txt" || true
        sed 's/^/INFO /' "$work/memory-guest.txt"
        awk -v suite="$suite" '$2 != "ratio" {
                split($4, r, "="); split($5, p, "=")
                c = $2 == "ours_ntp" ? "ours, no NTS servers (NTP=)" : $2 == "ours_nts" ? "ours, NTS" : \
                    $2 == "chronyd_client_nts" ? "chronyd -x, NTS client" : \
                    $2 == "stock_ntp" ? "stock systemd-timesyncd of " suite ", NTP=" : $2
                printf "%s\tRSS 10 s after the first sync\t%s\tKiB\n%s\tPSS, same moment\t%s\tKiB\n", c, r[2], c, p[2] }' \
                "$work/memory-guest.txt" >"$work/guest-bench.tsv"
        # CPU, system calls and D-Bus signals per poll, "CPU name pid= polls= cpu_ms= ...", and as
        # the table of the suite for docs/BENCHMARKS.md: client, metric, value, unit.
        guest_lines "$work/serial.log" | grep -a '^CPU ' >"$work/cpu-guest.txt" || true
        sed 's/^/INFO /' "$work/cpu-guest.txt"
        awk -v suite="$suite" -v commit="$commit" \
                -v when="$(date -u '+%Y-%m-%d %H:%M UTC')" '
                BEGIN { printf "# %s, test/mkosi/run.sh at %s, %s\n", suite, commit, when }
                $2 == "ratio" { for (i = 4; i <= NF; i++) { split($i, kv, "="); r[kv[1]] = kv[2] } ; next }
                { delete v; for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                  c = $2 == "ours_nts" ? "ours, NTS" : $2 == "stock_ntp" ? "stock systemd-timesyncd, NTP=" : $2
                  printf "%s\tCPU per poll (schedstat, %d polls)\t%s\tus\n", c, v["polls"], v["cpu_us_per_poll"]
                  printf "%s\tCPU per poll (utime+stime, %d polls)\t%s\tms\n", c, v["polls"], v["cpu_ms_per_poll"]
                  printf "%s\tsystem calls per poll (%d polls)\t%s\t\n", c, v["syscall_polls"], v["syscalls_per_poll"]
                  printf "%s\tD-Bus signals per reply\t%s\t\n", c, v["signals_per_reply"]
                  printf "%s\tmost frequent system calls (name:count)\t%s\t\n", c, v["top"] }
                END { if ("cpu" in r)
                        printf "ours NTS / stock NTP\tCPU, system calls, D-Bus signals\t%s, %s, %s\tratio\n", r["cpu"], r["syscalls"], r["signals"] }' \
                "$work/cpu-guest.txt" >"$work/guest-cpu.tsv"
fi

step "done, rc=$rc"
# A boot that failed without a FAIL line (no marker, bad exit) still counts as one failure.
[ "$rc" = 0 ] || [ "$failed" -gt 0 ] || failed=1
echo "mkosi: $passed passed, $failed failed"
exit "$rc"
