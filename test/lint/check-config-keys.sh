#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every key the configuration parser accepts (the table in timesyncd-conf.c) is in the shipped
# timesyncd.conf as a commented default ("#Key=..."), in docs/CONFIG.md ("`Key=`") and in
# timesyncd.conf(5) ("*Key=*"). A key that fills the same field as an earlier one (another name
# for it, as SecureServers= for NTS=) needs no default line of its own: naming it ("Key=") in
# the file's comments is enough, two default lines for one list would mislead.
#   check-config-keys.sh TIMESYNCD-CONF.C TIMESYNCD.CONF.IN CONFIG.MD TIMESYNCD.CONF.5.SCD
set -euo pipefail

[ $# = 4 ] || { echo "usage: $0 TIMESYNCD-CONF.C TIMESYNCD.CONF.IN CONFIG.MD MAN.SCD" >&2; exit 2; }
table_c=$1 conf_in=$2 config_md=$3 man=$4

# "Key field" per entry of the table, entries joined over their continuation lines.
entries=$(sed -n '/const ConfigTableItem table\[\] = {/,/{}/p' "$table_c" | tr '\n' ' ' |
        grep -oE 'T\("[A-Za-z]+", *[a-z_]+, *[A-Z_0-9]+, *[a-z_]+\)' |
        sed -E 's/T\("([A-Za-z]+)", *[a-z_]+, *[A-Z_0-9]+, *([a-z_]+)\)/\1 \2/')
[ "$(wc -l <<<"$entries")" -ge 5 ] || { echo "no parser table found in $table_c" >&2; exit 1; }

bad=0
declare -A seen_field
while read -r key field; do
        if [ -n "${seen_field[$field]:-}" ]; then
                grep -qF "$key=" "$conf_in" ||
                        { echo "$conf_in: $key= (another name for ${seen_field[$field]}=) is not mentioned"; bad=1; }
        else
                seen_field[$field]=$key
                grep -qE "^#$key=" "$conf_in" ||
                        { echo "$conf_in: no commented default line #$key="; bad=1; }
        fi
        grep -qF "\`$key=" "$config_md" || { echo "$config_md: $key= is not documented"; bad=1; }
        grep -qF "*$key=*" "$man" || { echo "$man: $key= is not documented"; bad=1; }
done <<<"$entries"

# No default line for a key the parser does not know (a typo would be shipped as advice).
while read -r key; do
        grep -q "^$key " <<<"$entries" || { echo "$conf_in: #$key= is not a key the daemon accepts"; bad=1; }
done < <(sed -nE 's/^#([A-Za-z]+)=.*/\1/p' "$conf_in")

[ "$bad" = 0 ] && echo "$(wc -l <<<"$entries") keys: each in $(basename "$conf_in"), $(basename "$config_md") and $(basename "$man")"
exit "$bad"
