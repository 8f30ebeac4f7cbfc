#!/usr/bin/env python3
"""Cross-check scripts/analysis_reference.py against Holistic Trace Analysis (HTA).

    python3 -m venv /tmp/htavenv && /tmp/htavenv/bin/pip install HolisticTraceAnalysis
    /tmp/htavenv/bin/python scripts/hta_crosscheck.py [TRACE ...]   (default: the 7 kineto-h100 samples)

For each trace it runs three things on the same file:
  * HTA itself (temporal breakdown, idle time breakdown, comm/comp overlap, kernel launch stats);
  * MODEL: a small re-implementation of the HTA 0.5.0 rules (read from its source, see
    docs/crosscheck.md), checked to give exactly HTA's numbers;
  * the reference (docs/analysis.md rules) on the whole trace, and on the events HTA keeps
    (same GPU activities, rules and thresholds unchanged otherwise) to separate the effect of
    HTA's event selection from that of its rounding and rules.
Prints a Markdown table per topic on stdout; HTA's log goes to stderr.
"""
import glob
import gzip
import importlib.metadata
import json
import math
import os
import re
import statistics
import sys
import tempfile
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analysis_reference as ref  # noqa: E402

SAMPLES = "/work/shared/samples/kineto-h100/*.pt.trace.json.gz"
HTA_KERNEL_WAIT_US = 30  # get_idle_time_breakdown(consecutive_kernel_delay=30), trace units = µs
HTA_LAUNCH_NAMES = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync"}
NCCL_KERNEL_RE = re.compile(r"^nccl.*Kernel")
MEMORY_KERNEL_RE = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
NOT_COMPUTE_RE = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")  # sic, as in HTA


# ---------------------------------------------------------------- HTA itself
def run_hta(path, no_rounding=False):
    """HTA's figures; no_rounding sets HTA_DISABLE_NS_ROUNDING=1 (HTA then keeps float64 µs)."""
    from hta.trace_analysis import TraceAnalysis
    num = float if no_rounding else int
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1" if no_rounding else "0"
    with tempfile.TemporaryDirectory() as d:  # HTA wants a directory of per-rank traces
        os.symlink(path, os.path.join(d, os.path.basename(path)))
        ta = TraceAnalysis(trace_dir=d)  # no distributedInfo: HTA warns and uses rank 0
        tb = ta.get_temporal_breakdown(visualize=False).iloc[0]
        idle, _ = ta.get_idle_time_breakdown(visualize=False)  # consecutive_kernel_delay=30
        ov = ta.get_comm_comp_overlap(visualize=False).iloc[0]["comp_comm_overlap_pctg"]
        ls = ta.get_cuda_kernel_launch_stats(visualize=False)[0]
    return {
        "temporal": {k: num(tb[k + "(us)"]) for k in ("idle_time", "compute_time",
                                                      "non_compute_time", "kernel_time")},
        "idle": {(int(r.stream), r.idle_category): num(r.idle_time) for r in idle.itertuples()},
        "overlap_pct": None if math.isnan(ov) else float(ov),
        "launch": sorted((int(r.correlation), num(r.cpu_duration), num(r.gpu_duration),
                          num(r.launch_delay)) for r in ls.itertuples()),
    }


# ---------------------------------------------------------------- model of HTA's rules
def model_hta(path, rounding=True):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        events = json.loads(f.read())["traceEvents"]  # float64, like HTA's json backend
    rows = []
    for i, e in enumerate(events):
        if e.get("dur") is None or e.get("cat") is None or e["cat"] == "Trace":
            continue  # HTA drops events without dur or cat, and the "Trace" event
        args = e.get("args") or {}
        if rounding:
            ts = math.ceil(e["ts"])                              # start rounded UP to the µs
            dur = math.floor(e["ts"] + e["dur"]) - ts            # end rounded DOWN to the µs
        else:  # HTA_DISABLE_NS_ROUNDING=1: float64 µs as parsed
            ts, dur = e["ts"], e["dur"]
        rows.append(dict(i=i, name=e.get("name", ""), cat=e["cat"], ts=ts, dur=dur,
                         stream=int(args.get("stream", -1)), corr=args.get("correlation", -1)))
    min_ts = min(r["ts"] for r in rows)  # HTA aligns ts to the earliest event (exact in float64)
    for r in rows:
        r["ts"] -= min_ts
        r["end"] = r["ts"] + r["dur"]  # HTA recomputes end = ts + dur where it needs it
    is_gpu = lambda r: (r["stream"] >= 0 and r["corr"] >= 0) or r["name"] in ("Event Sync", "Context Sync")
    cpu = [r for r in rows if not is_gpu(r)]
    gpu = [r for r in rows if is_gpu(r)]
    # Keep CPU events starting before the last "ProfilerStep*" event start (CPU or GPU annotation)
    # and the GPU events whose correlation matches one of them (only with >= 2 ProfilerStep names).
    step_names = {r["name"] for r in rows if "ProfilerStep" in r["name"]}
    if len(step_names) >= 2:
        last = max(r["ts"] for r in cpu if r["name"] in step_names)
        cpu = [r for r in cpu if r["ts"] < last]
        mult = Counter(r["corr"] for r in cpu)
        gpu = [r for r in gpu for _ in range(mult[r["corr"]])]
    kept = gpu + cpu

    # Temporal breakdown: merge intervals (sorted by ts; a new group when ts > max end so far).
    def merge(rs):
        groups = []
        for r in sorted(rs, key=lambda r: r["ts"]):
            if groups and not r["ts"] > groups[-1][2]:
                groups[-1][1] = max(groups[-1][1], r["end"])
                groups[-1][2] = max(groups[-1][2], r["end"])
            else:
                cm = max(groups[-1][2], r["end"]) if groups else r["end"]
                groups.append([r["ts"], r["end"], cm])  # [ts, end, running max end]
        return groups
    on_gpu = [r for r in kept if r["stream"] != -1]
    g = merge(on_gpu)
    kernel_time = g[-1][1] - g[0][0]
    idle = kernel_time - sum(e - s for s, e, _ in g)
    ktype = lambda n: ("comm" if NCCL_KERNEL_RE.match(n) else "memory" if MEMORY_KERNEL_RE.match(n)
                       else "compute" if not NOT_COMPUTE_RE.match(n) else "other")
    compute = sum(e - s for s, e, _ in merge([r for r in on_gpu if ktype(r["name"]) == "compute"]))
    temporal = dict(idle_time=idle, compute_time=compute,
                    non_compute_time=kernel_time - compute - idle, kernel_time=kernel_time)

    # Idle time per stream: gap = ts - end of the previous event (in ts order) on the stream;
    # host wait if the launching runtime call started after that end (strict), else kernel wait
    # if gap < 30, else other. Negative gaps (overlapping events) are summed as they are.
    runtime_ts = {r["corr"]: r["ts"] for r in cpu if r["corr"] >= 0}
    kcats = {"kernel", "gpu_memset", "gpu_memcpy"}
    per_stream = defaultdict(list)
    for r in kept:
        if r["stream"] != -1 and r["cat"] in kcats:
            per_stream[r["stream"]].append(r)
    idle_b, idle_ge, ties, overlaps = {}, Counter(), 0, 0
    for st, rs in per_stream.items():
        rs.sort(key=lambda r: (r["ts"], r["i"]))
        cats = Counter()
        for prev, r in zip(rs, rs[1:]):
            gap = r["ts"] - prev["end"]
            rt = runtime_ts.get(r["corr"])
            c = ("host_wait" if rt is not None and rt > prev["end"]
                 else "kernel_wait" if gap < HTA_KERNEL_WAIT_US else "other")
            cats[c] += gap
            # Diagnostics: the same rule with ">=" (as docs/analysis.md), and the ties.
            ties += rt is not None and rt == prev["end"]
            overlaps += gap < 0
            idle_ge["host_wait" if rt is not None and rt >= prev["end"] else
                    "kernel_wait" if gap < HTA_KERNEL_WAIT_US else "other"] += gap
        cats["other"] += 0  # the first event's (NaN) gap is "other": the category always exists
        for c, v in cats.items():
            idle_b[(st, c)] = v

    # Launch stats: launch calls named cudaLaunchKernel(ExC)/cudaMemcpyAsync/cudaMemsetAsync,
    # delay = GPU ts - (CPU ts + CPU dur) on the rounded µs, clipped at 0.
    corrs = {r["corr"] for r in kept if r["name"] in HTA_LAUNCH_NAMES}
    cpu_l = [r for r in kept if r["stream"] == -1 and r["corr"] in corrs]
    gpu_l = defaultdict(list)
    for r in kept:
        if r["stream"] != -1 and r["corr"] in corrs:
            gpu_l[r["corr"]].append(r)
    launch = sorted((c["corr"], c["dur"], k["dur"], max(0, k["ts"] - c["ts"] - c["dur"]))
                    for c in cpu_l for k in gpu_l[c["corr"]])
    return dict(temporal=temporal, idle=idle_b, launch=launch, kept_corr={r["corr"] for r in gpu},
                diag=dict(kept=len(gpu), neg_groups=sum(e - s for s, e, _ in g if e < s),
                          zero=sum(1 for r in on_gpu if r["dur"] == 0),
                          neg=sum(1 for r in on_gpu if r["dur"] < 0), ties=ties,
                          overlaps=overlaps,
                          idle_ge=idle_ge))


# ---------------------------------------------------------------- reference
def run_ref(path, keep_corr=None, kernel_wait_ns=10_000, hta_rounding=False):
    events = ref.load(path)
    if keep_corr is not None:  # only the GPU activities HTA keeps
        events = [e for e in events if not (e.get("ph") == "X" and e.get("cat") in ref.GPU_CATS)
                  or (e.get("args") or {}).get("correlation") in keep_corr]
    if hta_rounding:  # HTA's times: float64 µs, start rounded up, end rounded down
        events = [dict(e, ts=math.ceil(float(e["ts"])),
                       dur=math.floor(float(e["ts"]) + float(e["dur"])) - math.ceil(float(e["ts"])))
                  if e.get("ph") == "X" and "dur" in e else e for e in events]
    a = ref.Analysis(events, None, kernel_wait_ns)
    out = a.run()
    delays = {}  # correlation -> exact launch delay (ns) for every activity with a launching call
    for act in a.acts:
        if act["call"] is not None:
            delays[act["call"]["corr"]] = act["start"] - act["call"]["end"]
    return out, delays


def us(ns):
    return f"{ns / 1000:.3f}"


def main():
    paths = sys.argv[1:] or sorted(glob.glob(SAMPLES))
    print(f"HTA {importlib.metadata.version('HolisticTraceAnalysis')}\n")
    t1, t2, t3, t4, checks = [], [], [], [], []
    for p in paths:
        name = os.path.basename(p).replace(".pt.trace.json.gz", "")
        h, m, hf = run_hta(p), model_hta(p), run_hta(p, no_rounding=True)
        mf = model_hta(p, rounding=False)
        same = {k: h[k] == m[k] for k in ("temporal", "idle", "launch")}
        # Unrounded: HTA rounds the idle times to 0.01 and sums in another order.
        close = lambda a, b: abs(a - b) <= 0.0051
        same_f = {"temporal": all(close(hf["temporal"][k], mf["temporal"][k]) for k in mf["temporal"]),
                  "idle": hf["idle"].keys() == mf["idle"].keys()
                  and all(close(hf["idle"][k], mf["idle"][k]) for k in mf["idle"]),
                  "launch": len(hf["launch"]) == len(mf["launch"])
                  and all(x[0] == y[0] and all(close(a, b) for a, b in zip(x[1:], y[1:]))
                          for x, y in zip(hf["launch"], mf["launch"]))}
        checks.append(f"| {name} | " + " | ".join("yes" if d[k] else "**NO**"
                                                  for d in (same, same_f) for k in d)
                      + f" | {h['overlap_pct']} |")
        full, dfull = run_ref(p)
        sel, _ = run_ref(p, m["kept_corr"])
        sel30, _ = run_ref(p, m["kept_corr"], HTA_KERNEL_WAIT_US * 1000)
        rnd, _ = run_ref(p, m["kept_corr"], HTA_KERNEL_WAIT_US * 1000, hta_rounding=True)
        T = h["temporal"]
        for label, r in (("reference, whole trace", full), ("reference, HTA's events", sel),
                         ("reference, HTA's events, HTA's µs", rnd)):
            d = r["devices"][0]
            t1.append(f"| {name} | {label} | {us(d['window_ns'])} | {us(d['busy_ns'])} | "
                      f"{us(d['idle_ns'])} | {us(d['compute_ns'])} | "
                      f"{us(d['comm_ns'] + d['memory_ns'])} |")
        t1.append(f"| {name} | HTA | {T['kernel_time']} | {T['kernel_time'] - T['idle_time']} | "
                  f"{T['idle_time']} | {T['compute_time']} | {T['non_compute_time']} |")
        F = hf["temporal"]
        t1.append(f"| {name} | HTA, `HTA_DISABLE_NS_ROUNDING=1` | {F['kernel_time']:.3f} | "
                  f"{F['kernel_time'] - F['idle_time']:.3f} | {F['idle_time']:.3f} | "
                  f"{F['compute_time']:.3f} | {F['non_compute_time']:.3f} |")
        for label, r in (("reference (10 µs), whole trace", full),
                         ("reference (10 µs), HTA's events", sel),
                         ("reference (30 µs), HTA's events", sel30),
                         ("reference (30 µs), HTA's events, HTA's µs", rnd)):
            for s in r["streams"]:
                b = s["idle_breakdown"]
                t2.append(f"| {name} | {s['stream']} | {label} | {us(b['host_wait_ns'])} | "
                          f"{us(b['kernel_wait_ns'])} | {us(b['other_ns'])} |")
        for st in sorted({k[0] for k in h["idle"]}):
            t2.append(f"| {name} | {st} | HTA (30) | {h['idle'].get((st, 'host_wait'), 0)} | "
                      f"{h['idle'].get((st, 'kernel_wait'), 0)} | {h['idle'].get((st, 'other'), 0)} |")
        for st in sorted({k[0] for k in hf["idle"]}):
            t2.append(f"| {name} | {st} | HTA (30), `HTA_DISABLE_NS_ROUNDING=1` | "
                      + " | ".join(f"{hf['idle'].get((st, c), 0):.2f}"
                                   for c in ("host_wait", "kernel_wait", "other")) + " |")
        D = m["diag"]
        nall = sum(1 for a in ref.Analysis(ref.load(p), None, 0).acts)
        t4.append(f"| {name} | {nall} | {D['kept']} | {D['zero']} / {D['neg']} | "
                  f"{D['neg_groups']} | {D['ties']} | {D['idle_ge']['host_wait']} / "
                  f"{D['idle_ge']['kernel_wait']} / {D['idle_ge']['other']} | "
                  f"{mf['diag']['overlaps']} | "
                  f"{sum(hf['idle'].values()) - sel['devices'][0]['idle_ns'] / 1000:.2f} |")
        # Launch delay over the rows HTA reports, vs the reference's exact delay of the same kernels.
        rows = h["launch"]
        hd = sorted(r[3] for r in rows)
        rd = sorted(dfull[r[0]] for r in rows)
        pick = lambda v, p: ref.nearest_rank(v, p, 100)
        short = sum(1 for r in rows if r[1] <= 50 and r[2] < r[1])
        L = full["launch"]
        fd = sorted(r[3] for r in hf["launch"])
        t3.append(f"| {name} | {len(rows)} | {pick(hd, 50)} / {pick(hd, 95)} | "
                  f"{pick(fd, 50):.3f} / {pick(fd, 95):.3f} | "
                  f"{us(pick(rd, 50))} / {us(pick(rd, 95))} | {sum(1 for v in rd if v < 0)} | "
                  f"{L['kernels_with_launch']} | {short} | {L['typical_launch_ns']} | "
                  f"{L['launch_bound_kernels']} |")
        print(f"done {name}", file=sys.stderr)
    print("### Model of HTA's rules vs HTA (rounded: exact equality; unrounded: within 0.005 µs)\n")
    print("| trace | temporal | idle breakdown | launch stats rows | unrounded: temporal | idle "
          "| launch | HTA comm/comp overlap % |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(checks))
    print("\n### Temporal breakdown, device 0 (µs)\n")
    print("| trace | source | window (HTA kernel_time) | busy | idle | compute | non-compute "
          "(comm + memory) |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(t1))
    print("\n### Idle breakdown per stream (µs; kernel-wait threshold in parentheses)\n")
    print("| trace | stream | source | host wait | kernel wait | other |")
    print("|---|---|---|---|---|---|")
    print("\n".join(t2))
    print("\n### What explains the differences\n")
    print("| trace | GPU activities | kept by HTA | made 0 µs / negative by HTA's rounding | "
          "Σ negative-length merge groups (µs) | HTA gaps with call start = previous end | "
          "HTA idle rule with ≥: host / kernel / other (µs) | unrounded: negative HTA gaps "
          "(overlaps) | unrounded: HTA Σ gaps − reference idle (µs) |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(t4))
    print("\n### Launch delay\n")
    print("| trace | HTA rows | HTA delay p50 / p95 (µs) | HTA unrounded p50 / p95 (µs) "
          "| reference delay, same kernels, p50 / p95 "
          "(µs) | reference negative delays | reference kernels with launch | HTA short kernels "
          "| reference typical launch (ns) | reference launch-bound |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(t3))


if __name__ == "__main__":
    main()
