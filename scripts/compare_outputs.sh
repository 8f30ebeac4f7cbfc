#!/usr/bin/env bash
# Byte-for-byte comparison of what two warpscope binaries print for the same files: for each
# FILE (a folder stands for every file under it) that OLD's `summary` accepts, `summary` (JSON,
# JSON with every row, table), `info --format json` and `analyze` (JSON with 1000 rows, table),
# with the default threads and with WARPSCOPE_THREADS=1. Prints each output that differs and
# exits 1 if any did. For a change that must not change any result (speed work).
#
#   scripts/compare_outputs.sh OLD_BINARY NEW_BINARY FILE_OR_DIR...
set -euo pipefail
if [[ $# -lt 3 ]]; then
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
OLD=$1 NEW=$2
shift 2
mapfile -t files < <(find "$@" -type f | sort)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
outputs() { # BINARY FILE DIR
    "$1" summary "$2" --format json >"$3/summary.json" 2>&1 || return 1
    "$1" summary "$2" --format json --top 1000000 >"$3/summary-all.json" 2>&1 || true
    "$1" summary "$2" >"$3/summary.txt" 2>&1 || true
    "$1" info "$2" --format json >"$3/info.json" 2>&1 || true
    "$1" analyze "$2" --format json --top 1000 >"$3/analyze.json" 2>&1 || true
    "$1" analyze "$2" >"$3/analyze.txt" 2>&1 || true
}
compared=0 differ=0
for f in "${files[@]}"; do
    for threads in default 1; do
        mkdir -p "$work/old" "$work/new"
        if [[ $threads == 1 ]]; then export WARPSCOPE_THREADS=1; else unset WARPSCOPE_THREADS; fi
        outputs "$OLD" "$f" "$work/old" || continue
        outputs "$NEW" "$f" "$work/new" || true
        for o in "$work"/old/*; do
            compared=$((compared + 1))
            if ! cmp -s "$o" "$work/new/$(basename "$o")"; then
                echo "differs: $f $(basename "$o") (threads: $threads)"
                differ=$((differ + 1))
            fi
        done
        rm -rf "$work/old" "$work/new"
    done
done
echo "$compared outputs compared, $differ differ"
[[ $differ == 0 ]]
