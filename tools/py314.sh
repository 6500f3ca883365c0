#!/usr/bin/env bash
# CPython 3.14 for CI on a machine that has no package of it (Debian 12): Debian sid's python3.14
# in a chroot, and an interpreter `python3.14` on the host that runs inside it, so that nox's
# `tests-3.14` job works unchanged (issue 32).
#
#   tools/py314.sh BIN_DIR     make (or reuse) the chroot; write BIN_DIR/python3.14
#
# The chroot is made once with debootstrap and kept, named by its suite and package set (the Python
# version it got is recorded in it), under AJPCORE_PY314_CACHE (default /var/cache/ajpcore): a
# second run reuses it in a second; delete the folder to take a newer sid.
# BIN_DIR/python3.14 (a link to the cache's wrapper) runs the chroot's interpreter in a private mount
# namespace (nothing stays mounted after it exits) that sees, at their host paths, this clone (nox's
# venvs are in .nox/), /tmp (pip's build folders, pytest's tmp_path, the CI's tools), /proc, /sys,
# /dev and the host's CA bundle (pip inside goes through the same TLS proxy as the host).  Loopback
# is the host's, so a redis-server started by .ci/run answers; redis-server and node, for the tests
# that start their own, are installed in the chroot.  A venv made by it (`python3.14 -m venv DIR`,
# as nox does) works from either side: see the wrapper below.
#
# Needs root (mount namespaces, chroot) and Debian's debootstrap (taken with `apt-get download`
# when not installed).  AJPCORE_PY314_MIRROR overrides the Debian mirror.  Exit status non-zero,
# with the reason on stderr, when anything fails.
set -euo pipefail

PACKAGES="python3.14,python3.14-venv,python3.14-dev,gcc,libc6-dev,ca-certificates,redis-server,nodejs,e2fsprogs"
SUITE=sid
CACHE="${AJPCORE_PY314_CACHE:-/var/cache/ajpcore}"
MIRROR="${AJPCORE_PY314_MIRROR:-http://deb.debian.org/debian}"
MARKER=.ajpcore-complete  # written last: a chroot without it is not used

die() { echo "py314: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 BIN_DIR"
BIN_DIR="$(mkdir -p "$1" && cd "$1" && pwd -P)"
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, mount namespaces, chroot)"
for tool in unshare chroot mount flock; do
    command -v "$tool" >/dev/null || die "$tool not found"
done

# The package set names the cache entry: another set (or this script asking for more) is another chroot.
key="$SUITE-$(printf '%s' "$PACKAGES" | sha256sum | cut -c1-12)"
root="$CACHE/python3.14-$key"
mkdir -p "$CACHE"

debootstrap_cmd() {
    if command -v debootstrap >/dev/null; then
        echo debootstrap
        return
    fi
    # Not installed: Debian's package unpacked in a temporary folder (it is a shell script).
    local dir
    dir="$(mktemp -d "$CACHE/debootstrap.XXXXXX")"
    (cd "$dir" && apt-get download -q debootstrap >/dev/null && dpkg-deb -x debootstrap_*.deb tree) \
        || die "debootstrap is not installed and apt-get download debootstrap failed"
    echo "env DEBOOTSTRAP_DIR=$dir/tree/usr/share/debootstrap $dir/tree/usr/sbin/debootstrap"
}

make_root() {
    local staging
    staging="$(mktemp -d "$CACHE/python3.14-staging.XXXXXX")"
    echo "py314: debootstrap $SUITE into $staging ($PACKAGES)" >&2
    # shellcheck disable=SC2046  # the command may carry an environment assignment
    $(debootstrap_cmd) --variant=minbase --include="$PACKAGES" "$SUITE" "$staging" "$MIRROR" >"$staging.log" 2>&1 \
        || { tail -20 "$staging.log" >&2; rm -rf "$staging"; die "debootstrap failed (log above)"; }
    chroot "$staging" /usr/bin/python3.14 -c 'import ensurepip, ssl, sqlite3, venv' \
        || { rm -rf "$staging"; die "the chroot's python3.14 lacks a standard module"; }
    chroot "$staging" /usr/bin/python3.14 -c 'import sys; print(sys.version.split()[0])' >"$staging/python-version"
    touch "$staging/$MARKER"
    rm -f "$staging.log"
    rm -rf "$root"  # an earlier attempt's, left incomplete
    mv -T "$staging" "$root"
}

# One maker at a time; a chroot is complete once it has its name (made in a staging folder).
exec 9>"$CACHE/.python3.14.lock"
flock 9
if [ -f "$root/$MARKER" ]; then
    echo "py314: reusing $root (Python $(cat "$root/python-version"))" >&2
else
    make_root
    echo "py314: made $root (Python $(cat "$root/python-version"))" >&2
fi
flock -u 9

# The interpreter's host path, "$root.bin/python3.14": on the host a script that enters the chroot;
# inside it the same path is the real interpreter (a hard link in the chroot's own tree, so that
# realpath, as python-discovery asks it, gives a path that exists on the host too).
# A venv made by it records that path (pyvenv.cfg `home`, bin/python3.14), so the venv's python
# and console scripts run from either side: the script enters the chroot and runs the very path it
# was called by, which inside is the venv's python.
hostbin="$root.bin"
mkdir -p "$root$hostbin" "$hostbin"
ln -fn "$root/usr/bin/python3.14" "$root$hostbin/python3.14"  # a hard link: its real path is this one
cat >"$hostbin/python3.14.new" <<EOF
#!/bin/bash
# Written by tools/py314.sh (ajpcore): CPython $(cat "$root/python-version") of Debian $SUITE, in $root.
# Runs "\$0" (a venv's python) or the chroot's interpreter inside the chroot, in a private mount
# namespace that sees at their host paths: /tmp, the caller's directory (a clone: nox runs there,
# its venvs are in .nox/), the venv, the folder of a script given by path, the folders in AJPCORE_PY314_SHARE (colon-separated) and in
# PIP_FIND_LINKS, and /proc, /sys, /dev, the host's CA bundle, resolv.conf and hosts.
root=${root@Q}
program="\$0" venv=""
dir="\$(cd "\$(dirname "\$0")" && pwd -P)"
if [ -f "\$dir/pyvenv.cfg" ]; then venv="\$dir"; elif [ -f "\$dir/../pyvenv.cfg" ]; then venv="\$(dirname "\$dir")"; fi
[ -n "\$venv" ] || program=${hostbin@Q}/python3.14
script=""  # a script run by its path (python-discovery's probe, as nox runs it) is seen too
if [ -f "\${1-}" ]; then script="\$(cd "\$(dirname "\$1")" && pwd -P)"; fi
exec unshare --mount --propagation private -- /bin/bash -c '
    set -e
    root="\$1" share="\$2"; shift 2
    mount --rbind /proc "\$root/proc"; mount --rbind /sys "\$root/sys"; mount --rbind /dev "\$root/dev"
    mount --rbind /tmp "\$root/tmp"
    IFS=: read -r -a dirs <<<"\$share"
    for dir in "\${dirs[@]}"; do
        dir="\$(cd "\$dir" 2>/dev/null && pwd -P)" || continue
        case "/\${dir#/}/" in  # never over the chroot system: the clone, a venv, a work folder
            //|/tmp/*|/bin/*|/boot/*|/dev/*|/etc/*|/lib*|/proc/*|/run/*|/sbin/*|/sys/*|/usr/*|/var/*) continue ;;
        esac
        mkdir -p "\$root\$dir"; mount --rbind "\$dir" "\$root\$dir"
    done
    for file in /etc/ssl/certs/ca-certificates.crt /etc/resolv.conf /etc/hosts; do
        if [ -f "\$file" ]; then touch "\$root\$file"; mount --bind "\$file" "\$root\$file"; fi
    done
    cwd="\$(pwd -P)"; [ -d "\$root\$cwd" ] || cwd=/
    exec chroot "\$root" /bin/sh -c "cd \"\\\$0\" && exec \"\\\$@\"" "\$cwd" "\$@"
' - "\$root" "\$(pwd -P):\$venv:\$script:\${AJPCORE_PY314_SHARE-}:\${PIP_FIND_LINKS// /:}" "\$program" "\$@"
EOF
chmod +x "$hostbin/python3.14.new"
mv -f "$hostbin/python3.14.new" "$hostbin/python3.14"
ln -sfn "$hostbin/python3.14" "$BIN_DIR/python3.14"
"$BIN_DIR/python3.14" -c 'import sys; assert sys.version_info[:2] == (3, 14), sys.version' \
    || die "$BIN_DIR/python3.14 does not run"
echo "py314: $BIN_DIR/python3.14 -> $hostbin/python3.14 (CPython $(cat "$root/python-version") in $root)" >&2
