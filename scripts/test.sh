#!/usr/bin/env bash
# The whole test suite: makes the real media the file-system tests read, then runs every
# Rust test with every feature (LZO included). `.ci/run` runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/make-media.sh target/media
cargo test --workspace --all-features --locked
