# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# What fetch-peers.sh and fetch-dns.sh share: packages whose maintainer scripts must not run are
# downloaded and unpacked, only their runtime libraries are installed. Sourced.

# A fresh machine may have no package lists yet: refresh them once and retry.
apt_retry() {
        "$@" || { apt-get update && "$@"; }
}

# install_runtime_libs PKG...: installs those of the packages that are not installed yet, never
# upgrading anything.
install_runtime_libs() {
        local p missing=()
        for p; do
                dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
        done
        if [ "${#missing[@]}" -gt 0 ]; then
                DEBIAN_FRONTEND=noninteractive apt_retry apt-get install -y --no-upgrade --no-install-recommends "${missing[@]}"
        fi
}

# fetch_and_unpack DIR PKG...: downloads the .debs into DIR/debs and unpacks them into DIR/root,
# both made anew.
fetch_and_unpack() {
        local dir=$1 dl deb
        shift
        rm -rf "$dir/debs" "$dir/root"
        mkdir -p "$dir/debs" "$dir/root"
        # apt's sandbox user cannot write into an arbitrary directory; download where it can.
        dl=$(mktemp -d)
        chmod 0777 "$dl"
        (cd "$dl" && apt_retry apt-get download "$@") || { rm -rf "$dl"; return 1; }
        mv "$dl"/*.deb "$dir/debs/"
        rm -rf "$dl"
        for deb in "$dir"/debs/*.deb; do
                dpkg-deb -x "$deb" "$dir/root"
        done
}

# check_binaries ROOT TOOL BIN...: each BIN (relative to ROOT) exists and all its libraries
# resolve; TOOL names the caller in the messages.
check_binaries() {
        local root=$1 tool=$2 bin
        shift 2
        for bin; do
                [ -x "$root/$bin" ] || { echo "$tool: $bin missing after unpacking" >&2; return 1; }
                if ldd "$root/$bin" | grep -q 'not found'; then
                        echo "$tool: $bin has unresolved libraries:" >&2
                        ldd "$root/$bin" | grep 'not found' >&2
                        return 1
                fi
        done
}
