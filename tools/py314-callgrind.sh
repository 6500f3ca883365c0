#!/usr/bin/env bash
# bench/callgrind.py on CPython 3.14 (Debian sid's, through tools/py314.sh), on this clone: the
# instruction counts and ratios of docs/benchmarks.md's "Python 3.14" section (issues 32 and 33).
#
#   tools/py314-callgrind.sh VENV [ARGS...]    ARGS go to bench/callgrind.py (default: --peers)
#
# Valgrind runs inside the chroot (the interpreter's glibc is sid's), so valgrind, and g++ for
# pysimdjson (no CPython 3.14 wheel: built from its sdist), are installed there once with apt-get.
# VENV (made when missing, with the python3.14 of tools/py314.sh) gets the baseline's pins of
# Cython, orjson and ssrjson, the other decode peers (msgspec, pysimdjson) and ajpcore's own
# dependencies; the native core is built in place (ajpcore/_core_c.cpython-314-*.so beside the
# other versions' builds).  Run from the clone's root, as root.
#
# The compiler moves counts too (on the number-heavy fixtures gcc 16 of sid's build adds up to 15 %
# over gcc 12 of Debian 12), so by default the core is compiled again by the host's cc against the
# chroot's 3.14 headers, with setup.py's release flags: a comparison with a 3.11 run on the host
# then differs by the Python version alone.  AJPCORE_PY314_CC=sid keeps the chroot's own build.
set -euo pipefail

die() { echo "py314-callgrind: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: $0 VENV [bench/callgrind.py ARGS...]"
[ -f bench/callgrind_baseline.json ] || die "run from the clone's root"
venv="$(mkdir -p "$1" && cd "$1" && pwd -P)"
shift
[ $# -gt 0 ] || set -- --peers

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
bash tools/py314.sh "$bin"
root="$(dirname "$(readlink -f "$bin/python3.14")")"
root="${root%.bin}"

# valgrind (and its callgrind.h) and g++ in the chroot, unless there already.
installed() { chroot "$root" dpkg-query -W -f '${db:Status-Abbrev}\n' valgrind g++ 2>/dev/null | grep -c '^ii' || true; }
if [ "$(installed)" -ne 2 ]; then
    echo "py314-callgrind: apt-get install valgrind g++ in $root" >&2
    # Check-Valid-Until=false: sid's Release is valid for a week, and the chroot is kept longer.
    unshare --mount --propagation private -- /bin/bash -c '
        set -e
        root="$1" opts="-q -o Acquire::Check-Valid-Until=false"
        mount --bind /etc/resolv.conf "$root/etc/resolv.conf"
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        chroot "$root" apt-get $opts update
        chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get $opts install -y --no-install-recommends valgrind g++
    ' - "$root" >"$bin/apt.log" 2>&1 || { tail -20 "$bin/apt.log" >&2; die "apt-get install valgrind g++ failed"; }
fi

[ -x "$venv/bin/python" ] || "$bin/python3.14" -m venv "$venv"
pins="$("$venv/bin/python" -c 'import json; p = json.load(open("bench/callgrind_baseline.json"))["pins"]
print(" ".join(f"{k}=={p[k]}" for k in ("Cython", "orjson", "ssrjson") if k in p))')"
# shellcheck disable=SC2086  # the pins are words
"$venv/bin/python" -m pip install -q $pins setuptools wheel msgspec pysimdjson rfc8785 \
    "cryptography>=42" "pynacl>=1.5" "jsonschema-rs>=0.61,<0.62"
"$venv/bin/python" setup.py -q build_ext --inplace >/dev/null
if [ "${AJPCORE_PY314_CC:-host}" = host ]; then
    # Python.h's pyconfig.h includes <x86_64-linux-gnu/python3.14/pyconfig.h>: found through a
    # folder holding only that, so the host's C library headers stay the host's.
    multiarch="$(chroot "$root" /usr/bin/python3.14 -c 'import sysconfig; print(sysconfig.get_config_var("MULTIARCH"))')"
    mkdir -p "$bin/include/$multiarch"
    ln -s "$root/usr/include/$multiarch/python3.14" "$bin/include/$multiarch/python3.14"
    so="ajpcore/$(chroot "$root" /usr/bin/python3.14 -c 'import sysconfig; print("_core_c" + sysconfig.get_config_var("EXT_SUFFIX"))')"
    "${CC:-cc}" -O3 -g0 -fno-strict-overflow -DNDEBUG -fPIC -Inative -I"$root/usr/include/python3.14" -I"$bin/include" \
        -c native/_core_c.c -o "$bin/core.o"
    "${CC:-cc}" -shared -s "$bin/core.o" -o "$so.new"
    mv -f "$so.new" "$so"
    echo "py314-callgrind: $so compiled by $("${CC:-cc}" --version | head -1)" >&2
fi
PYTHONPATH=. "$venv/bin/python" bench/callgrind.py "$@"
