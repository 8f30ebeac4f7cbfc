#!/usr/bin/env python3
"""The Python module against HTA: whole processes, interleaved, medians (docs/python.md, Speed).

    python3 -m venv /work/venv-python && /work/venv-python/bin/pip install ./python pandas
    python3 -m venv /work/venv-hta && /work/venv-hta/bin/pip install HolisticTraceAnalysis==0.5.0
    python3 scripts/bench_python.py --warpscope-python /work/venv-python/bin/python \\
        --hta-python /work/venv-hta/bin/python [--runs 5] [--trace FILE]

Rows, each a whole Python process timed from start to exit (wall, user+system CPU and peak
resident memory from wait4, as scripts/bench.py measures), their runs interleaved so a busy
machine slows every row alike:

- warpscope: `import warpscope; warpscope.load(TRACE).kernels().to_pandas()`;
- HTA 0.5.0: `TraceAnalysis(trace_dir=DIR)` over a directory holding only TRACE (its load);
- the yardstick: Python's `json.load` of TRACE, as in the README's speed table.

TRACE is the 139 MB Kineto trace (../shared/samples/kineto-h100/resnet50_b32_60steps), written
uncompressed to --work once (HTA and warpscope both read the plain file).
"""

import argparse
import gzip
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(
    ROOT, "..", "shared", "samples", "kineto-h100", "resnet50_b32_60steps.pt.trace.json.gz"
)


def run(cmd):
    """(wall s, cpu s, peak MB, stdout) of one whole-process run of `cmd`: wall from start to
    exit, user+system CPU of the child (os.times), and its peak resident memory (VmHWM, which
    the command prints at its end: the children's ru_maxrss would be the largest so far)."""
    before = os.times()
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = os.times()
    out = proc.stdout.decode()
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr.decode(errors='replace')}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    peak_mb = next(
        (int(l.split()[1]) / 1024 for l in out.splitlines() if l.startswith("PEAK_KB ")), 0.0
    )
    return wall, cpu, peak_mb, out


# The process's peak resident memory, or its children's where larger: HTA parses each rank in a
# forked pool process (one for one trace), so its peak is the larger of the two (the sum would
# count the pool's copy-on-write pages twice; the larger is the favourable reading for HTA).
PEAK = (
    "\nimport resource\n"
    "self_kb = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
    "kids_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print('PEAK_KB', max(self_kb, kids_kb))\n"
)


def warpscope_cmd(python, trace):
    code = (
        "import warpscope\n"
        f"df = warpscope.load({trace!r}).kernels().to_pandas()\n"
        "print('ROWS', len(df))" + PEAK
    )
    return [python, "-c", code]


def hta_cmd(python, trace_dir):
    code = (
        "import logging; logging.disable(logging.CRITICAL)\n"
        "from hta.trace_analysis import TraceAnalysis\n"
        f"ta = TraceAnalysis(trace_dir={trace_dir!r})\n"
        "print('ROWS', sum(len(df) for df in ta.t.get_all_traces().values()))" + PEAK
    )
    return [python, "-c", code]


def json_cmd(python, trace):
    return [python, "-c", f"import json; json.load(open({trace!r}))" + PEAK]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warpscope-python", required=True)
    ap.add_argument("--hta-python", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--trace", default=SAMPLE)
    ap.add_argument("--work", default="/tmp/warpscope-bench-python")
    args = ap.parse_args()

    trace_dir = os.path.join(args.work, "trace")
    os.makedirs(trace_dir, exist_ok=True)
    trace = os.path.join(trace_dir, "rank0.pt.trace.json")
    if not os.path.exists(trace):
        opener = gzip.open if args.trace.endswith(".gz") else open
        with opener(args.trace, "rb") as src, open(trace, "wb") as dst:
            dst.write(src.read())
    rows = {
        "warpscope load + kernels().to_pandas()": warpscope_cmd(args.warpscope_python, trace),
        "HTA 0.5.0 TraceAnalysis(trace_dir)": hta_cmd(args.hta_python, trace_dir),
        "Python json.load (yardstick)": json_cmd(sys.executable, trace),
    }
    results = {name: [] for name in rows}
    printed = {}
    for i in range(args.runs):
        for name, cmd in rows.items():
            wall, cpu, peak, out = run(cmd)
            results[name].append((wall, cpu, peak))
            printed[name] = [l for l in out.splitlines() if l.startswith("ROWS")]
            print(f"run {i + 1} {name}: {wall:.3f} s, {peak:.0f} MB", file=sys.stderr)
    mb = os.path.getsize(trace) / 1e6
    print(f"{trace}: {mb:.0f} MB, {args.runs} interleaved runs each, medians\n")
    print("| what | wall | CPU | peak memory | rows |")
    print("|---|---|---|---|---|")
    med = {}
    for name, rs in results.items():
        wall = statistics.median(r[0] for r in rs)
        cpu = statistics.median(r[1] for r in rs)
        peak = statistics.median(r[2] for r in rs)
        med[name] = (wall, peak)
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {peak:.0f} MB | {' '.join(printed[name])} |")
    (ws_wall, ws_peak), (hta_wall, hta_peak) = list(med.values())[:2]
    print(
        f"\nwarpscope vs HTA: {hta_wall / ws_wall:.1f}x faster, peak memory "
        f"{ws_peak / hta_peak:.2f}x HTA's"
    )


if __name__ == "__main__":
    main()
