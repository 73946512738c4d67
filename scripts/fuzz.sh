#!/usr/bin/env bash
# Coverage-guided fuzzing of every reader and config parser (libFuzzer through cargo
# fuzz; the targets are `mobmem::fuzzing::TARGETS`, listed by `--list`):
#   scripts/fuzz.sh [--seconds N | --runs N] [--timeout S] [TARGET...]   (default: 60 s each)
# --runs N runs N inputs of each target instead of a time.
# Each target runs without a sanitizer (fuzz/fuzz_targets/target.rs says why) with a
# memory limit of 1 GiB and S seconds per input (default 10;
# give more when it runs niced beside other work, which can starve one input that long).
# New inputs that widen coverage go to fuzz/corpus/TARGET/ (minimized at the end to
# the fewest inputs that reach every edge the corpus reaches), and
# an input that panics, runs out of memory or time goes to fuzz/regressions/TARGET/. The
# ordinary test suite replays both folders (crates/mobmem/tests/fuzz_corpus.rs): commit
# them. Each target's run is recorded in fuzz/campaigns.tsv (date, commit, target,
# inputs, outcome).
# Needs the nightly toolchain and cargo-fuzz; both are installed if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
runs_asked=""
timeout=10
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --runs) runs_asked="$2"; shift 2 ;;
        --timeout) timeout="$2"; shift 2 ;;
        --list)
            sed -n 's/^ *name: "\(.*\)",$/\1/p' crates/mobmem/src/fuzzing.rs
            exit 0 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) targets+=("$1"); shift ;;
    esac
done
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(sed -n 's/^ *name: "\(.*\)",$/\1/p' crates/mobmem/src/fuzzing.rs)
fi

if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
if ! command -v cargo-fuzz >/dev/null; then
    cargo install cargo-fuzz --locked
fi

cd fuzz
summary=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "regressions/$t"
    log="target/fuzz-$t.log"
    mkdir -p target
    if [ -n "$runs_asked" ]; then
        limit=(-runs="$runs_asked"); echo "fuzzing $t for $runs_asked inputs"
    else
        limit=(-max_total_time="$seconds"); echo "fuzzing $t for ${seconds}s"
    fi
    status=0
    MOBMEM_FUZZ_TARGET="$t" cargo +nightly fuzz run -s none target "corpus/$t" -- \
        -rss_limit_mb=1024 -timeout="$timeout" "${limit[@]}" \
        -artifact_prefix="regressions/$t/" -print_final_stats=1 >"$log" 2>&1 || status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ "$status" -ne 0 ]; then
        outcome="failed"
        summary+=("$t: FAILED after ${runs:-?} inputs, see fuzz/$log and fuzz/regressions/$t/")
    else
        outcome="no failure"
        summary+=("$t: ${runs:-?} inputs, no failure")
    fi
    [ -f campaigns.tsv ] || printf 'date\tcommit\ttarget\tinputs\toutcome\n' >campaigns.tsv
    printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%F)" "$(git rev-parse --short HEAD)" "$t" \
        "${runs:-?}" "$outcome" >>campaigns.tsv
    # Kept: the fewest inputs that reach every edge the corpus reaches (-use_counters=0:
    # edges, not how often each is taken), so the committed corpus stays small.
    MOBMEM_FUZZ_TARGET="$t" cargo +nightly fuzz cmin -s none target "corpus/$t" -- \
        -use_counters=0 -rss_limit_mb=1024 -timeout="$timeout" >>"$log" 2>&1 || true
done
printf '%s\n' "${summary[@]}"
