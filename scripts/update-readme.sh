#!/usr/bin/env bash
# Reproduces every paper's experiment over 5 seeds, each claim also at both ends of every
# assumed constant (--sensitivity), and writes the summary of the claims
# (from the reports' claims.json) into README.md, between the summary markers, and their
# findings (findings.json) into docs/results.md, between the findings markers.
#   scripts/update-readme.sh [OUT]     (the report folder; default target/readme-report)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/readme-report}"
scripts/make-media.sh target/media
cargo build --release --locked -p mobmem-cli
target/release/mobmem reproduce all --seeds 5 --sensitivity --media target/media --out "$out"
target/release/mobmem report summary "$out" --write-into README.md
target/release/mobmem report summary "$out" --write-into docs/results.md
echo "README.md and docs/results.md: summary of $out/*/claims.json and findings.json written; the report is $out/index.html"
