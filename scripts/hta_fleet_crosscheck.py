#!/usr/bin/env python3
"""Cross-check `warpscope fleet` against Holistic Trace Analysis on a job directory.

    python3 -m venv /tmp/hta-venv && /tmp/hta-venv/bin/pip install HolisticTraceAnalysis
    python3 scripts/gen_ranks.py /tmp/job --ranks 8
    /tmp/hta-venv/bin/python scripts/hta_fleet_crosscheck.py --bin target/debug/warpscope /tmp/job

Runs HTA's TraceAnalysis on the directory (one trace per rank, ranks from `distributedInfo`):
`get_temporal_breakdown` (per rank: window, idle, compute, non-compute; µs), and
`get_potential_stragglers` (its late-start metric on the most variable communication kernel),
once as installed and once with HTA_DISABLE_NS_ROUNDING=1; and `warpscope fleet --format json`.
Prints Markdown tables (µs) side by side; HTA's log goes to stderr.
"""

import argparse
import json
import os
import subprocess


def hta(trace_dir, no_rounding):
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1" if no_rounding else "0"
    from hta.trace_analysis import TraceAnalysis

    ta = TraceAnalysis(trace_dir=trace_dir)
    tb = ta.get_temporal_breakdown(visualize=False)
    per_rank = {}
    for _, row in tb.iterrows():
        per_rank[int(row["rank"])] = {
            "window": float(row["kernel_time(us)"]) if "kernel_time(us)" in row else float(row["kernel_time"]),
            "idle": float(row["idle_time(us)"]) if "idle_time(us)" in row else float(row["idle_time"]),
            "compute": float(row["compute_time(us)"]) if "compute_time(us)" in row else float(row["compute_time"]),
            "non_compute": float(row["non_compute_time(us)"]) if "non_compute_time(us)" in row else float(row["non_compute_time"]),
        }
    stragglers = {}
    for k in (1, 2):
        try:
            stragglers[k] = [int(s) for s in ta.get_potential_stragglers(num_candidates=k)]
        except ValueError as e:  # no communication kernel HTA recognises
            stragglers[k] = f"failed: {e}"
    return per_rank, stragglers


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/debug/warpscope")
    ap.add_argument("trace_dir")
    args = ap.parse_args()

    out = subprocess.run([args.bin, "fleet", args.trace_dir, "--format", "json"], check=True,
                         capture_output=True, text=True)
    ws = json.loads(out.stdout)
    rounded, s_rounded = hta(args.trace_dir, False)
    exact, s_exact = hta(args.trace_dir, True)

    import importlib.metadata
    print(f"HolisticTraceAnalysis {importlib.metadata.version('HolisticTraceAnalysis')}, "
          f"{len(ws['ranks'])} ranks in {args.trace_dir}\n")
    print("| rank | window: warpscope / HTA / HTA unrounded | idle | compute | non-compute |")
    print("|---|---|---|---|---|")
    for r in ws["ranks"]:
        k = r["rank"]
        w = {
            "window": r["window_ns"] / 1e3,
            "idle": r["idle_ns"] / 1e3,
            "compute": r["compute_ns"] / 1e3,
            "non_compute": (r["comm_ns"] + r["memory_ns"]) / 1e3,
        }
        cells = [f"{w[m]:.3f} / {rounded[k][m]:.0f} / {exact[k][m]:.3f}"
                 for m in ("window", "idle", "compute", "non_compute")]
        print(f"| {k} | " + " | ".join(cells) + " |")
    # HTA keeps the GPU work launched before the last ProfilerStep starts: warpscope over the
    # same steps (a range from 0 to the start of the last step, rank-local).
    print()
    print("Over the steps HTA keeps (warpscope analyze --range 0..START_OF_LAST_STEP, µs; "
          "warpscope / HTA unrounded):\n")
    print("| rank | window | idle | compute | non-compute |")
    print("|---|---|---|---|---|")
    last = max(ws["step_numbers"])
    for r in ws["ranks"]:
        k = r["rank"]
        cell = next(c for c in ws["step_cells"] if c["rank"] == k and c["step"] == last)
        end = cell["start_ns"] - r["shift_ns"]
        a = json.loads(subprocess.run([args.bin, "analyze", r["file"], "--format", "json",
                                       "--range", f"0..{end}"], check=True,
                                      capture_output=True, text=True).stdout)
        d = a["devices"][0]
        w = {"window": d["window_ns"] / 1e3, "idle": d["idle_ns"] / 1e3,
             "compute": d["compute_ns"] / 1e3,
             "non_compute": (d["comm_ns"] + d["memory_ns"]) / 1e3}
        cells = [f"{w[m]:.3f} / {exact[k][m]:.3f}" for m in ("window", "idle", "compute", "non_compute")]
        print(f"| {k} | " + " | ".join(cells) + " |")
    print()
    print(f"warpscope stragglers (by score): {[s['rank'] for s in ws['stragglers'][:2]]}")
    for k in (1, 2):
        print(f"HTA get_potential_stragglers(num_candidates={k}): {s_rounded[k]} "
              f"(unrounded: {s_exact[k]})")


if __name__ == "__main__":
    main()
