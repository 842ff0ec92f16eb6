#!/usr/bin/env bash
# Runs every fuzz target for a fixed number of executions, seeded with the repository's
# examples and, when present, ../shared's models and small benchmark files.
#
#   bash fuzz/run.sh [RUNS]      (default 2000 per target; needs nightly and cargo-fuzz)
#
# A crash (a panic in a reader, or a plan the verifier rejects) fails the script and
# leaves its input in fuzz/artifacts/<target>/; add it as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-2000}"
corpus=target/fuzz-corpus
shared=../shared

seed() { # target, files...
    local target=$1
    shift
    mkdir -p "$corpus/$target"
    for f in "$@"; do
        if [ -f "$f" ]; then
            # Named by the whole path: several seeds share a base name (memory.x).
            cp "$f" "$corpus/$target/seed-$(echo "$f" | tr / -)"
        fi
    done
}

seed csv examples/problems/*.csv
if [ -d "$shared/benchmarks" ]; then
    # The small instances only: libFuzzer mutates every seed, and big ones are slow.
    seed csv $(find "$shared/benchmarks" -name '*.csv' -size -32k | sort)
fi
seed problem_json examples/problems/*.json
seed model_ir examples/models/kws.json
seed pools_file examples/models/kws_pools.json
seed usmp_toml examples/*/usmp.toml fixtures/*/usmp.toml
seed tflite fixtures/tflite/models/*.tflite
if [ -d "$shared/tflite-models" ]; then
    seed tflite $(find "$shared/tflite-models" -name '*.tflite' -size -64k | sort)
fi
seed memory_x examples/*/memory.x
# Kernel preparation: the models the kernels run (mutations reach their quantization).
seed kernels $(find fixtures/tflite/models -name '*.tflite' -size -64k | sort)

mkdir -p target/fuzz-logs
for target in csv problem_json model_ir pools_file usmp_toml tflite memory_x kernels; do
    echo "== fuzz $target: $runs runs"
    log="target/fuzz-logs/$target.log"
    # -seed fixes libFuzzer's random choices, so a run is repeatable.
    if ! cargo +nightly fuzz run -O "$target" "$corpus/$target" -- \
        -runs="$runs" -seed=1 -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        echo "fuzz $target: a crash was found; its input is in fuzz/artifacts/$target/" >&2
        exit 1
    fi
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|INFO: seed corpus)' "$log" || true
done
