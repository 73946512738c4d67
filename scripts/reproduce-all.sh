#!/usr/bin/env bash
# The main job: reproduce every paper's experiment and write the report.
#   scripts/reproduce-all.sh [OUT]     (default: report; open OUT/index.html)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/make-media.sh target/media
cargo run --release --locked -p mobmem-cli -- reproduce all --out "${1:-report}" --media target/media
