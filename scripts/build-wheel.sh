#!/usr/bin/env bash
# Builds the Python package `mobmem` as a wheel (release build, the stable ABI: one wheel
# for every CPython from 3.10 on) with the maturin pinned in python/requirements-test.txt,
# and prints the wheel's path. The wheel installs with pip on a machine without Rust.
#
#   scripts/build-wheel.sh [DIR]      (default: target/wheels of the repository)
#
# The maturin on the PATH is used when it is the pinned version; otherwise the pinned one
# is installed into target/wheelenv (a virtualenv of its own) first. A wheel of mobmem's
# already in DIR under the same name is replaced; any other file of that name is left
# alone and the build stops with an error.
set -euo pipefail
# DIR as given, relative to the folder the script is called from.
out=${1:-}
if [ -n "$out" ] && [ "${out#/}" = "$out" ]; then
    out=$PWD/$out
fi
cd "$(dirname "$0")/.."
out=${out:-$PWD/target/wheels}

pin=$(sed -n 's/^maturin==//p' python/requirements-test.txt)
[ -n "$pin" ] || { echo "error: python/requirements-test.txt pins no maturin" >&2; exit 1; }
maturin=maturin
if [ "$(maturin --version 2>/dev/null)" != "maturin $pin" ]; then
    command -v python3 >/dev/null || { echo "error: python3 is missing" >&2; exit 1; }
    env=target/wheelenv
    if [ "$("$env/bin/maturin" --version 2>/dev/null)" != "maturin $pin" ]; then
        python3 -m venv "$env"
        "$env/bin/python" -m pip --disable-pip-version-check --quiet install "maturin==$pin"
    fi
    maturin=$PWD/$env/bin/maturin
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
# Built into a fresh folder first, so the wheel's name is known without reading
# maturin's messages, and nothing in DIR is touched until the build succeeded.
staging=$(mktemp -d "$out/.mobmem-wheel.XXXXXX")
trap 'rm -rf "$staging"' EXIT
(cd python && "$maturin" build --release --locked --quiet --out "$staging" >&2)
built=("$staging"/*.whl)
if [ "${#built[@]}" -ne 1 ] || [ ! -f "${built[0]}" ]; then
    echo "error: maturin left ${#built[@]} files in $staging, not one wheel" >&2
    exit 1
fi
name=$(basename "${built[0]}")
case "$name" in
    mobmem-*-abi3-*.whl) ;;
    *) echo "error: $name is not an abi3 wheel of mobmem" >&2; exit 1 ;;
esac
wheel="$out/$name"
if [ -e "$wheel" ]; then
    # Replaced only when it is a wheel of mobmem's (its metadata says so).
    if ! python3 - "$wheel" <<'EOF'
import sys, zipfile
try:
    names = zipfile.ZipFile(sys.argv[1]).namelist()
except (OSError, zipfile.BadZipFile):
    sys.exit(1)
sys.exit(0 if any(n.startswith("mobmem-") and n.endswith(".dist-info/WHEEL") for n in names) else 1)
EOF
    then
        echo "error: $wheel exists and is not a wheel of mobmem's; move it away first" >&2
        exit 1
    fi
fi
mv -f "${built[0]}" "$wheel"
echo "$wheel"
