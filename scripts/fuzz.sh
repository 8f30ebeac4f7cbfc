#!/usr/bin/env bash
# Fuzzes every importer for SECONDS each (default 60), one target at a time.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# 1. Builds the seeds: fuzz/make_seeds.py cuts them from ../shared/samples into fuzz/corpus/
#    (git-ignored: most samples carry no license grant), plus fuzz/regressions/<target>/.
# 2. Builds the targets with cargo-fuzz on nightly, overflow checks and debug assertions on.
# 3. Runs each target with libFuzzer: -max_total_time=SECONDS, -timeout=10 (s per input),
#    -rss_limit_mb=2048, its dictionary fuzz/dict/<target>.dict, one process at a time
#    (fork mode with one job, so that one crash does not end the round).
# 4. Minimises every new crash, timeout and out-of-memory input (cargo fuzz tmin) into
#    fuzz/regressions/<target>/<kind>_<hash> — check by hand that it is small and not a copy of
#    a sample before committing it; crates/warpscope-core/tests/fuzz_regressions.rs replays it.
# 5. Prints executions and crashes per target; exits 1 on any crash, timeout or OOM (including
#    already-known regressions that still fail), 2 if it could not run.
#
# Environment: FUZZ_RUNS=N runs each target for exactly N executions in one process instead of
# SECONDS in fork mode; FUZZ_SAMPLES (default ../shared/samples), FUZZ_SANITIZER (default none: the
# importers' only unsafe is mapping a file and giving its pages back, one UTF-8 view after an
# exact ASCII check and one set_len after a counted parallel fill; `address` instruments them),
# FUZZ_NO_TMIN=1 skips step 4.
set -euo pipefail

cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
[[ $# -gt 0 ]] && shift
ALL_TARGETS=(chrome_json nvprof_text nvprof_sqlite nsys_sqlite detect snapshot rocm_text rocpd_sqlite rpd_sqlite)
if [[ $# -gt 0 ]]; then TARGETS=("$@"); else TARGETS=("${ALL_TARGETS[@]}"); fi
SAMPLES=${FUZZ_SAMPLES:-../shared/samples}
SANITIZER=${FUZZ_SANITIZER:-none}
TRIPLE=$(rustc +nightly -vV | sed -n 's/^host: //p')
# cargo-fuzz builds into CARGO_TARGET_DIR when it is set (a relative one from fuzz/).
case ${CARGO_TARGET_DIR:-} in
    "") BIN=fuzz/target/$TRIPLE/release ;;
    /*) BIN=$CARGO_TARGET_DIR/$TRIPLE/release ;;
    *) BIN=fuzz/$CARGO_TARGET_DIR/$TRIPLE/release ;;
esac
LOGS=fuzz/artifacts/logs

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: cargo-fuzz is not installed (cargo install cargo-fuzz --locked)" >&2
    exit 2
fi

# 1. Seeds.
if [[ -d $SAMPLES ]]; then
    python3 fuzz/make_seeds.py "$SAMPLES" fuzz/corpus
else
    echo "fuzz.sh: no samples at $SAMPLES; fuzzing from fuzz/regressions only" >&2
fi

# 2. Targets. -a: debug assertions (the profile also forces overflow checks).
mkdir -p "$LOGS"
if ! cargo +nightly fuzz build -a -s "$SANITIZER" >"$LOGS/build.log" 2>&1; then
    tail -30 "$LOGS/build.log" >&2
    echo "fuzz.sh: build failed (log $LOGS/build.log)" >&2
    exit 2
fi

declare -A EXECS CRASHES NEW
status=0
for t in "${TARGETS[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    # Known failing inputs are rewritten each round; start from a clean artifact directory.
    find "fuzz/artifacts/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' \
        -o -name 'oom-*' -o -name 'leak-*' \) -delete
    log=$LOGS/$t.log
    echo "fuzz.sh: $t for ${SECONDS_EACH}s (log $log)"
    set +e
    if [[ -n ${FUZZ_RUNS:-} ]]; then
        # Exactly FUZZ_RUNS executions in one process (the first crash ends the target).
        "$BIN/$t" -runs="$FUZZ_RUNS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
            -dict="fuzz/dict/$t.dict" -artifact_prefix="fuzz/artifacts/$t/" \
            "fuzz/corpus/$t" "fuzz/regressions/$t" >"$log" 2>&1
    else
        "$BIN/$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
            -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
            -dict="fuzz/dict/$t.dict" -artifact_prefix="fuzz/artifacts/$t/" \
            "fuzz/corpus/$t" "fuzz/regressions/$t" >"$log" 2>&1
    fi
    rc=$?
    set -e
    # Both modes report "#<execs> ..." lines; the last one holds the total.
    EXECS[$t]=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [[ -n $runs ]] && EXECS[$t]=$runs
    EXECS[$t]=${EXECS[$t]:-0}
    mapfile -t found < <(find "fuzz/artifacts/$t" -maxdepth 1 -type f \
        \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | sort)
    CRASHES[$t]=${#found[@]}
    NEW[$t]=0
    if [[ $rc -ne 0 && ${#found[@]} -eq 0 ]]; then
        echo "fuzz.sh: $t exited $rc without an artifact; see $log" >&2
        CRASHES[$t]=1
    fi
    # Hashes of the committed regressions: libFuzzer names an artifact after its content's SHA-1.
    known=$(find "fuzz/regressions/$t" -type f -exec sha1sum {} + 2>/dev/null | cut -d' ' -f1)
    for a in "${found[@]}"; do
        status=1
        kind=$(basename "$a" | cut -d- -f1)
        sum=$(basename "$a" | cut -d- -f2)
        # A known failure replayed from fuzz/regressions: not new.
        if grep -qx "$sum" <<<"$known"; then
            continue
        fi
        NEW[$t]=$((NEW[$t] + 1))
        out=$a
        if [[ -z ${FUZZ_NO_TMIN:-} && $kind == crash ]]; then
            tlog=$LOGS/$t-tmin-$sum.log
            cargo +nightly fuzz tmin -a -s "$SANITIZER" -r 2000 "$t" "$a" >"$tlog" 2>&1 || true
            min=$(grep -o "fuzz/artifacts/$t/minimized-from-[0-9a-f]*" "$tlog" | tail -1)
            [[ -n $min && -f $min ]] && out=$min
        fi
        dest=fuzz/regressions/$t/${kind}_$(sha1sum "$out" | cut -c1-10)
        cp "$out" "$dest"
        size=$(wc -c <"$dest")
        echo "fuzz.sh: $t: new $kind, minimised to $dest ($size bytes):"
        if [[ $size -gt 4096 ]]; then
            echo "    over 4 KB: probably still a sample cut (SQLite pages do not shrink); do not"
            echo "    commit it: write an equivalent by hand in fuzz/handwritten.py instead"
        fi
        # The panic message and the head of the stack, for FUZZ_FINDINGS.md.
        "$BIN/$t" "$dest" 2>&1 | grep -m1 -A12 -E "panicked|ERROR: libFuzzer" | sed 's/^/    /' || true
    done
done

echo
printf '%-14s %12s %8s %6s\n' target executions crashes new
for t in "${TARGETS[@]}"; do
    printf '%-14s %12s %8s %6s\n' "$t" "${EXECS[$t]}" "${CRASHES[$t]}" "${NEW[$t]}"
done
for t in "${TARGETS[@]}"; do
    if [[ ${CRASHES[$t]} -gt 0 ]]; then status=1; fi
done
exit $status
