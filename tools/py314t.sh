#!/usr/bin/env bash
# Free-threaded CPython 3.14 (3.14t, built with --disable-gil) for testing ajpcore without the GIL
# (issue 32, item 2).  No Debian package has a free-threaded interpreter, so it is built here from
# Debian's python3.14 source package, the version of the sid chroot tools/py314.sh keeps.
#
#   tools/py314t.sh BIN_DIR     build (or reuse) the interpreter; write BIN_DIR/python3.14t
#
# The build is a test interpreter: plain `./configure --disable-gil` and `make`, no PGO or LTO
# (~15 min on 2 busy cores, under nice).  It is installed under AJPCORE_PY314_CACHE (default
# /var/cache/ajpcore) in a folder named by its version and configure flags, so a machine that built
# it once reuses it in a second; delete the folder to rebuild.  It runs on the host (Debian 12's
# libraries: libssl-dev, libffi-dev, zlib1g-dev, libbz2-dev, liblzma-dev, libsqlite3-dev are needed).
#
# The source: `apt-get source --download-only python3.14=VERSION` inside the sid chroot, with its
# own sources list and package lists (the chroot's apt state is left as it is), unpacked without
# Debian's patches (they fit the interpreter to /usr and to Debian's packaging of ensurepip and the
# standard library, none of which a test interpreter in its own folder wants).  Where the mirror
# serves no source packages, AJPCORE_PY314T_SOURCE may name a CPython 3.14 source tarball of the same
# version (Debian's .orig.tar.xz or python.org's Python-3.14.X.tar.xz) to build instead.
#
# Needs root (the chroot).  Exit status non-zero, with the reason on stderr, when anything fails.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd -P)"
CACHE="${AJPCORE_PY314_CACHE:-/var/cache/ajpcore}"
MIRROR="${AJPCORE_PY314_MIRROR:-http://deb.debian.org/debian}"
CONFIGURE_FLAGS="--disable-gil --with-ensurepip=install --without-static-libpython"
MARKER=.ajpcore-complete  # written last: an install without it is not used

die() { echo "py314t: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 BIN_DIR"
BIN_DIR="$(mkdir -p "$1" && cd "$1" && pwd -P)"
[ "$(id -u)" -eq 0 ] || die "needs root (the sid chroot of tools/py314.sh)"

# The sid chroot: its python3.14's Debian version is the source version to build.
chroot_bin="$(mktemp -d)"
trap 'rm -rf "$chroot_bin"' EXIT
bash "$HERE/py314.sh" "$chroot_bin" 2>/dev/null || die "tools/py314.sh failed (run it alone to see why)"
root="$(dirname "$(readlink -f "$chroot_bin/python3.14")")"
root="${root%.bin}"
debian_version="$(chroot "$root" dpkg-query -W -f '${Version}' python3.14)"
version="${debian_version%%-*}"
prefix="$CACHE/python3.14t-$version-$(printf '%s' "$CONFIGURE_FLAGS" | sha256sum | cut -c1-8)"

fetch_source() {  # $1: a folder; leaves the source tarball there, prints its path
    local work="$1" apt_opts
    if [ -n "${AJPCORE_PY314T_SOURCE-}" ]; then
        [ -f "$AJPCORE_PY314T_SOURCE" ] || die "AJPCORE_PY314T_SOURCE=$AJPCORE_PY314T_SOURCE is no file"
        echo "$AJPCORE_PY314T_SOURCE"
        return
    fi
    mkdir -p "$work/lists/partial" "$work/parts"
    chmod 755 "$work"
    echo "deb-src $MIRROR sid main" >"$work/sources.list"
    # Inside the chroot $work is /mnt.  Check-Valid-Until=false: sid's Release is valid for a week,
    # and a mirror that caches it may serve an older one.
    apt_opts="-q -o Dir::Etc::SourceList=/mnt/sources.list -o Dir::Etc::SourceParts=/mnt/parts"
    apt_opts+=" -o Dir::State::Lists=/mnt/lists -o Acquire::Check-Valid-Until=false"
    unshare --mount --propagation private -- /bin/bash -c '
        set -e
        root="$1" work="$2" opts="$3" want="$4"
        mount --bind /etc/resolv.conf "$root/etc/resolv.conf"
        mount --bind "$work" "$root/mnt"
        chroot "$root" /bin/sh -c "cd /mnt && apt-get $opts update && apt-get $opts source --download-only $want"
    ' - "$root" "$work" "$apt_opts" "python3.14=$debian_version" >"$work/apt.log" 2>&1 || {
        grep -E '^(E|Err):|404' "$work/apt.log" | head -4 >&2
        die "apt-get source python3.14=$debian_version failed: the mirror serves no source package" \
            "(set AJPCORE_PY314T_SOURCE to a CPython $version source tarball)"
    }
    ls "$work"/python3.14_"$version".orig.tar.* 2>/dev/null | head -1 | grep . \
        || die "apt-get source left no python3.14_$version.orig.tar.* in $work"
}

build() {
    local work tarball src staging
    work="$(mktemp -d "$CACHE/python3.14t-build.XXXXXX")"
    tarball="$(fetch_source "$work")" || { rm -rf "$work"; exit 1; }
    mkdir "$work/src"
    tar -xf "$tarball" -C "$work/src" --strip-components=1 || die "cannot unpack $tarball"
    src="$work/src"
    grep -q "^#define PY_VERSION \"$version\"" "$src/Include/patchlevel.h" \
        || die "$tarball is not CPython $version"
    staging="$prefix.staging"
    rm -rf "$staging" "$prefix"
    echo "py314t: building CPython $version --disable-gil into $prefix (log: $work/build.log)" >&2
    # shellcheck disable=SC2086  # the flags are words
    (cd "$src" && nice ./configure --prefix="$prefix" $CONFIGURE_FLAGS \
        && nice make -j"$(nproc)" && make install DESTDIR="$staging") >"$work/build.log" 2>&1 \
        || { tail -30 "$work/build.log" >&2; die "the build failed (log above, kept in $work)"; }
    mv -T "$staging$prefix" "$prefix"
    rm -rf "$staging" "$work"
    "$prefix/bin/python3.14t" -c 'import sys, sysconfig, ssl, sqlite3, ctypes, venv
assert sysconfig.get_config_var("Py_GIL_DISABLED") == 1, "not a free-threaded build"
assert not sys._is_gil_enabled(), "the GIL is on"' || die "$prefix/bin/python3.14t lacks a module or is not free-threaded"
    touch "$prefix/$MARKER"
}

mkdir -p "$CACHE"
exec 9>"$CACHE/.python3.14t.lock"
flock 9
if [ -f "$prefix/$MARKER" ]; then
    echo "py314t: reusing $prefix" >&2
else
    build
fi
flock -u 9
ln -sfn "$prefix/bin/python3.14t" "$BIN_DIR/python3.14t"
echo "py314t: $BIN_DIR/python3.14t -> $prefix/bin/python3.14t (CPython $version, free-threaded)" >&2
