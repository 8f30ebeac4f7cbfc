#!/usr/bin/env bash
# Whole-process comparison of two warpscope binaries on the same files, as a user runs them:
# `BINARY summary FILE --format json`, the two interleaved RUNS times (default 5), under
# /usr/bin/time; prints the median wall time and peak resident memory of each, and their ratio.
# On a shared machine only the ratio measured in one run means much.
#
#   scripts/compare_binaries.sh OLD_BINARY NEW_BINARY FILE...
set -euo pipefail
if [[ $# -lt 3 ]]; then
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
OLD=$1 NEW=$2
shift 2
RUNS=${RUNS:-5}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
printf '%-44s %10s %10s %9s %9s %8s\n' file old_s new_s old_MB new_MB new/old
for f in "$@"; do
    : >/tmp/cmp_old.txt
    : >/tmp/cmp_new.txt
    for _ in $(seq "$RUNS"); do
        for which in old new; do
            bin=$OLD
            [[ $which == new ]] && bin=$NEW
            /usr/bin/time -f '%e %M' -o /tmp/cmp_one.txt "$bin" summary "$f" --format json \
                >/dev/null 2>/tmp/cmp_err.txt || { echo "$bin failed on $f:" >&2; cat /tmp/cmp_err.txt >&2; exit 1; }
            tail -1 /tmp/cmp_one.txt >>"/tmp/cmp_$which.txt"
        done
    done
    os=$(cut -d' ' -f1 /tmp/cmp_old.txt | median)
    ns=$(cut -d' ' -f1 /tmp/cmp_new.txt | median)
    om=$(cut -d' ' -f2 /tmp/cmp_old.txt | median)
    nm=$(cut -d' ' -f2 /tmp/cmp_new.txt | median)
    printf '%-44s %10s %10s %9d %9d %8.2f\n' "$(basename "$f")" "$os" "$ns" $((om / 1024)) $((nm / 1024)) \
        "$(awk -v a="$os" -v b="$ns" 'BEGIN {print (a > 0 ? b / a : 0)}')"
done
