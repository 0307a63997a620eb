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

# The Debian archive (not its security one) that the machine's own apt sources name, e.g.
# http://deb.debian.org/debian/; empty if there is none.
debian_archive_uri() {
        # shellcheck disable=SC2016 # apt's format, not the shell's
        apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -m1 -E '/debian/?$' || true
}

# fetch_suite_packages DIR SUITE PKG...: downloads the .debs of PKG (each may be PKG=VERSION)
# from SUITE of the machine's Debian archive into DIR/SUITE/debs and unpacks them into
# DIR/SUITE/root, both made anew. Uses a private apt configuration in DIR/apt (its own sources
# list and package lists): the machine's apt sources and state are never changed, nothing is
# installed. Fails if the archive or a package cannot be had.
fetch_suite_packages() {
        local dir=$1 suite=$2 uri apt dl deb
        shift 2
        uri=$(debian_archive_uri)
        [ -n "$uri" ] || { echo "no Debian archive in the machine's apt sources" >&2; return 1; }
        apt="$dir/apt/$suite"
        mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d"
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main" >"$apt/sources.list"
        # apt's sandbox user writes the lists.
        chmod -R a+rwX "$apt"
        local opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=$apt/sources.list.d"
                    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
        apt-get "${opts[@]}" -q update >&2 || return 1
        rm -rf "$dir/$suite/debs" "$dir/$suite/root"
        mkdir -p "$dir/$suite/debs" "$dir/$suite/root"
        dl=$(mktemp -d)
        chmod 0777 "$dl"
        (cd "$dl" && apt-get "${opts[@]}" -q download "$@" >&2) || { rm -rf "$dl"; return 1; }
        mv "$dl"/*.deb "$dir/$suite/debs/"
        rm -rf "$dl"
        for deb in "$dir/$suite"/debs/*.deb; do
                dpkg-deb -x "$deb" "$dir/$suite/root"
        done
}
