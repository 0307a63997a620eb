#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-daemon-without-sys-time.sh SRCDIR [FILE...]: every place a script of test/, tools/ or
# bench/ runs the built daemon ("$TIMESYNCD" followed by arguments) goes through start_daemon,
# run_nosystime or "${NOSYSTIME[@]}" (test/lib/common.sh), which drop CAP_SYS_TIME from the
# bounding and inheritable sets. Without them a test run as root starts a daemon that can set
# this machine's clock the moment an argument is parsed wrongly. Continued lines count as one
# command. The guest's scripts (test/mkosi/guest) are left out: there the daemon runs as the
# guest's own service and may step the guest's clock.
set -euo pipefail

src=${1:?usage: $0 SRCDIR [FILE...]}
shift

files=("$@")
if [ ${#files[@]} = 0 ]; then
        cd "$src"
        mapfile -t files < <(grep -rlE --include='*.sh' '\$\{?TIMESYNCD\}?' test tools bench |
                grep -Ev '^test/mkosi/guest/|^test/lint/broken-')
        [ ${#files[@]} -gt 0 ] || { echo "FAIL: no script runs \$TIMESYNCD under $src"; exit 1; }
fi

# Joins continued lines, then prints FILE:LINE: COMMAND for each command that runs the daemon
# without one of the wrappers. "Runs" is "$TIMESYNCD" followed by a word that is not the end of
# a test ("]"), or by a redirection, a pipe, "&", or the end of the command.
bad=$(awk '
        FNR == 1 { cmd = ""; start = 0 }
        /^[[:space:]]*#/ && cmd == "" { next }
        {
                if (cmd == "") start = FNR
                line = $0
                if (sub(/\\$/, "", line)) { cmd = cmd line " "; next }
                cmd = cmd line
                if (cmd ~ /"\$\{?TIMESYNCD\}?"([[:space:]]+[^][:space:];)]|[[:space:]]*$|[[:space:]]*[&|<>])/ &&
                    cmd !~ /(^|[[:space:]])(start_daemon|run_nosystime)[[:space:]]|"\$\{NOSYSTIME\[@\]\}"/)
                        printf "%s:%d: %s\n", FILENAME, start, cmd
                cmd = ""
        }' "${files[@]}")

if [ -n "$bad" ]; then
        echo "FAIL: the daemon is run with CAP_SYS_TIME (use start_daemon, run_nosystime or \"\${NOSYSTIME[@]}\"):"
        echo "$bad"
        exit 1
fi
echo "OK: ${#files[@]} scripts run the daemon only without CAP_SYS_TIME"
