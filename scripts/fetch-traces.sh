#!/usr/bin/env bash
# Downloads the public traces the tests read, from their public sources, and checks
# each against its SHA-256:
#   scripts/fetch-traces.sh [DIR]     (default: target/traces)
# Then run the tests with MOBMEM_TRACES=DIR (scripts/test.sh does both when neither
# $MOBMEM_TRACES nor ../shared/traces is there). A file already present with the right
# checksum is kept. Exits non-zero, naming the file, when a download or a check fails;
# nothing unchecked is left under its final name.
#
# The traces (see their sources for the conditions of use):
# - arc/OLTP.lis.zst, arc/P3.lis.zst: the traces of N. Megiddo and D. S. Modha, "ARC: A
#   Self-Tuning, Low Overhead Replacement Cache", USENIX FAST 2003 (cite the paper when
#   using them), zstd-compressed, as published in github.com/moka-rs/cache-trace;
# - libcachesim/cloudPhysicsIO.oracleGeneral.bin, libcachesim/cloudPhysicsIO.vscsi: the
#   CloudPhysics block trace shipped with libCacheSim (github.com/1a1a11a/libCacheSim,
#   data/), converted and as recorded (vscsi).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-target/traces}"

moka=https://raw.githubusercontent.com/moka-rs/cache-trace/ef0a9de8cf0202a1f2fee186a0af497774b0f0a9
lcs=https://raw.githubusercontent.com/1a1a11a/libCacheSim/aa0fc40914b2b786f4b9f4dafb099f8f332b216a
traces=(
    "arc/OLTP.lis.zst $moka/arc/OLTP.lis.zst 2a81096104b6de28aae54558b764bb32fe2ac3beb8a7dcdee1259af8798d3531"
    "arc/P3.lis.zst $moka/arc/P3.lis.zst 4110048c690756400675b14f200989fae351b62147705dac9637bbcff6d29751"
    "libcachesim/cloudPhysicsIO.oracleGeneral.bin $lcs/data/cloudPhysicsIO.oracleGeneral.bin 65438dd7b2d3dec7ffe8a5c9348045da92de3311f339b7b59c9a0a44e6050dea"
    "libcachesim/cloudPhysicsIO.vscsi $lcs/data/cloudPhysicsIO.vscsi 3e67d66a07e9292bb47f6c765eb24ab3ea3f1f7de7d64a1b9e8c28b38b7439b9"
)

fetch() {
    if command -v curl >/dev/null; then
        curl --fail --silent --show-error --location --max-time 300 --output "$2" "$1"
    elif command -v wget >/dev/null; then
        wget --quiet --timeout=60 --output-document="$2" "$1"
    else
        echo "error: neither curl nor wget is installed" >&2
        return 1
    fi
}

for entry in "${traces[@]}"; do
    read -r name url sum <<<"$entry"
    target="$dir/$name"
    if [ -f "$target" ] && echo "$sum  $target" | sha256sum --check --status; then
        continue
    fi
    if [ -f "$target" ]; then
        echo "note: $target does not have the expected checksum; fetching it again" >&2
        rm -f "$target"
    fi
    mkdir -p "$(dirname "$target")"
    partial="$target.partial"
    if ! fetch "$url" "$partial"; then
        rm -f "$partial"
        echo "error: could not download $name from $url" >&2
        exit 1
    fi
    if ! echo "$sum  $partial" | sha256sum --check --status; then
        rm -f "$partial"
        echo "error: $name from $url does not have SHA-256 $sum" >&2
        exit 1
    fi
    mv "$partial" "$target"
    echo "fetched $name"
done
echo "public traces in $dir"
