#!/usr/bin/env python3
"""What the FLOPs analysis costs on the 139 MB Kineto trace: `analyze` and `summary` of this
build against a build without it, interleaved, with `gzip -dc` of the same file as the
yardstick measured in the same run.

    python3 scripts/bench_flops.py --base /path/to/warpscope-without-flops
        [--bin target/release/warpscope] [--runs 5] [--trace FILE]

The base is this tree with the FLOPs work switched off (`scripts/no_flops.patch`: the Kineto
importer reads no operator shapes, `analyze` computes no FLOPs section), so that nothing else
differs:

    git apply scripts/no_flops.patch && cargo build --release -p warpscope \
        && cp target/release/warpscope /tmp/ws-noflops; git apply -R scripts/no_flops.patch
    cargo build --release -p warpscope
    python3 scripts/bench_flops.py --base /tmp/ws-noflops --runs 15

Prints per row the medians of wall time, CPU time and peak resident memory (wait4, as
scripts/bench.py measures them), and the ratios of this build to the base.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import RELEASE_BIN, SAMPLE, median_rows  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="warpscope built without the FLOPs analysis")
    ap.add_argument("--bin", default=RELEASE_BIN)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--trace", default=SAMPLE)
    a = ap.parse_args()
    t = a.trace
    rows = [
        ("yardstick: gzip -dc", ["sh", "-c", f"gzip -dc {t!r} >/dev/null"], None),
        ("base analyze", [a.base, "analyze", t, "--format", "json"], None),
        ("flops analyze", [a.bin, "analyze", t, "--format", "json"], None),
        ("base summary", [a.base, "summary", t, "--format", "json"], None),
        ("flops summary", [a.bin, "summary", t, "--format", "json"], None),
    ]
    med = median_rows(rows, a.runs)
    print(f"{'row':<22} {'wall s':>8} {'cpu s':>8} {'peak MB':>8}   (medians of {a.runs})")
    for label, (wall, cpu, rss) in med.items():
        print(f"{label:<22} {wall:8.3f} {cpu:8.3f} {rss:8.1f}")
    for what in ("analyze", "summary"):
        b, f = med[f"base {what}"], med[f"flops {what}"]
        print(f"{what}: wall x{f[0] / b[0]:.3f}, cpu x{f[1] / b[1]:.3f}, peak memory x{f[2] / b[2]:.3f}")


if __name__ == "__main__":
    main()
