# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Peers of a newer Debian suite that need its glibc run chrooted in a tree of that suite
# (test/tools/fixtures/fetch-peers.sh: DEST/SUITE/tree). Sourced by chrony.sh and ntpsec.sh.
[ -n "${_TSNTS_SUITE_TREE_SH:-}" ] && return 0
_TSNTS_SUITE_TREE_SH=1

# suite_tree_command ARRAY TREE RUNDIR CERTDIR BIN: sets the array named ARRAY to a command
# prefix that runs BIN (a path inside TREE) chrooted in TREE, in a mount namespace of its own
# where RUNDIR is bind-mounted on the tree's /mnt; the server certificate chain and key of
# CERTDIR are copied into RUNDIR. The program then sees RUNDIR and the certificates as /mnt.
suite_tree_command() {
        local -n _command=$1
        local tree=$2 rundir=$3 certdir=$4 bin=$5
        cp "$certdir/server-chain.pem" "$certdir/server.key" "$rundir/"
        # shellcheck disable=SC2016 # the inner shell's $0, $1 and $2
        _command=(unshare --mount --propagation private sh -c
                  'tree=$1 bin=$2; shift 2; mount --bind "$0" "$tree/mnt" && exec chroot "$tree" "$bin" "$@"'
                  "$rundir" "$tree" "$bin")
}

# suite_tree_run TREE DIR BIN [ARG...]: runs DIR/BIN, a program of this build, chrooted in TREE,
# so that it loads that suite's libraries (dlopen() finds the tree's libcrypto: OpenSSL 3.5 in
# trixie, 3.6 in forky), in a mount namespace of its own where DIR is bind-mounted on the
# tree's /mnt: paths in ARGs name files of DIR as /mnt/FILE. Without CAP_SYS_TIME, like every
# client of the tests.
suite_tree_run() {
        local tree=$1 dir=$2 bin=$3
        shift 3
        # shellcheck disable=SC2016 # the inner shell's $0, $1 and $@
        "${NOSYSTIME[@]}" unshare --mount --propagation private sh -c \
                'tree=$1; shift; mount --bind "$0" "$tree/mnt" && exec chroot "$tree" "$@"' \
                "$dir" "$tree" "/mnt/$bin" "$@"
}
