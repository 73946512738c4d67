#!/usr/bin/env bash
# The whole test suite: makes the real media the file-system tests read, runs every
# Rust test with every feature (LZO included), then builds the Python package's wheel
# (scripts/build-wheel.sh), installs it into a virtualenv (target/pyenv, test tools pinned
# in python/requirements-test.txt) and runs its tests. `.ci/run` runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Python test tools (about a minute of pip) install in the background, beside the
# Rust build, whose one crate at a time leaves a core idle now and then; the Python
# tests wait for them below.
mkdir -p target
venv=target/pyenv
pip=(python -m pip --disable-pip-version-check --quiet)
if ! "$venv/bin/python" -c "" 2>/dev/null; then
    command -v python3 >/dev/null || { echo "error: python3 is missing" >&2; exit 1; }
    rm -rf "$venv"
    python3 -m venv "$venv"
fi
"$venv/bin/${pip[0]}" "${pip[@]:1}" install -r python/requirements-test.txt \
    > target/pyenv-install.log 2>&1 &
pip_install=$!

scripts/make-media.sh target/media
# The public traces some tests read: $MOBMEM_TRACES, else ../shared/traces, else
# fetched into target/traces. Without them (no network) those tests are listed as
# skipped below, with the reason, and everything else runs.
if [ -z "${MOBMEM_TRACES:-}" ] && [ ! -d ../shared/traces ]; then
    if scripts/fetch-traces.sh target/traces; then
        export MOBMEM_TRACES="$PWD/target/traces"
    else
        echo "note: the public traces could not be fetched; the tests that read them are skipped" >&2
    fi
fi
# Tests that cannot run here (no root, no tracefs, no KSM) name themselves in this file.
export MOBMEM_SKIP_LOG="$PWD/target/skipped-tests.txt"
rm -f "$MOBMEM_SKIP_LOG"
cargo test --workspace --all-features --locked

if ! wait "$pip_install"; then
    cat target/pyenv-install.log >&2
    echo "error: installing python/requirements-test.txt into $venv failed" >&2
    exit 1
fi
# As if activated: the build below finds the pinned maturin on the PATH.
export PATH="$PWD/$venv/bin:$PATH"
# The package as a user installs it: the wheel scripts/build-wheel.sh builds (maturin,
# release build, the pinned maturin), installed with pip. Its tests install the same
# wheel into a fresh virtualenv without Rust on the PATH ($MOBMEM_WHEEL).
wheel=$(scripts/build-wheel.sh target/wheels)
"${pip[@]}" install --no-deps --force-reinstall "$wheel"
# The CLI the Python results are compared with: the one cargo test just built.
MOBMEM_BIN="$PWD/target/debug/mobmem" MOBMEM_WHEEL="$wheel" pytest python/tests -q

if [ -s "$MOBMEM_SKIP_LOG" ]; then
    echo "Tests that passed without running, and why:"
    sed 's/^/  /' "$MOBMEM_SKIP_LOG"
else
    echo "No test was skipped."
fi
