#!/usr/bin/env python3
"""Independent reference for docs/analysis.md, sections 1-4, in standard-library Python.

Written from the text of docs/analysis.md alone (no Rust code read), for Kineto / PyTorch-profiler
Chrome traces (.json or .json.gz).

    scripts/analysis_reference.py FILE [--range START_NS..END_NS] [--kernel-wait-us 10]
    (a negative START needs the form --range=-5000..100000)

Prints one JSON object (integer nanoseconds) on stdout; see docs/crosscheck.md.

Choices made where the page leaves room (the most literal reading):
  * Times: `ts`/`dur` are parsed as decimal text and converted exactly to integer ns
    (floor of Decimal * 1000; a value with more than 3 decimals is reported on stderr).
    Output times (`start_ns` of gaps) are relative to the ORIGIN = the smallest `ts` of any
    `ph: X` event; `--range` is given in the same relative nanoseconds. Without `--range` the
    range is unbounded (every activity belongs to it).
  * An event's end = ns(ts) + ns(dur) (each converted on its own).
  * Zero-length activities belong to the range (if start < range.end and end > range.start),
    count as calls, may start the window / be "next work", but add nothing to any union.
  * "Kernels" (kernel table, launch delays, typical launch cost, launch-bound) are events of
    `cat: kernel` only; copies and sets are not kernels.
  * A kernel's launch delay uses its raw (unclipped) start; launch-bound compares the raw duration.
  * Launch-bound candidates are all kernels in the range (also those without a launching call
    and those launched by a CUDA graph).
  * CPU operators for a gap's "operator" are all those of the launching thread (not limited to the
    range), except step and profiler annotations (`ProfilerStep#N`, `train_step_N` and the like,
    `[pytorch|profiler|...]`, `PyTorch Profiler (...)`). Among several launching calls starting
    at L, the one that ends first (then the smallest correlation id) is "the" launching call.
  * A host-wait gap's "sync" is the blocking synchronisation API call (section 3's list, any
    `_vNNNN` suffix removed) of the launching thread with start <= gap start < end; of several,
    the latest starting (then the shortest).
  * Idle rules are applied in the order 1, 2, 3: a short gap whose next work has no launching
    call is "kernel wait" (rule 2 comes before rule 3).
"""
import argparse
import bisect
import decimal
import gzip
import json
import math
import sys

# Kineto's category names; the 2021 traces used `Kernel`, `Memcpy`, `Memset`, `Runtime` and
# `Operator` (docs/formats.md, "Legacy (2021) names").
GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "memory", "gpu_memset": "memory",
            "Kernel": "kernel", "Memcpy": "memory", "Memset": "memory"}
API_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}
CPU_OP_CATS = {"cpu_op", "user_annotation", "python_function", "Operator"}
GRAPH_PREFIXES = ("cudaGraphLaunch", "cuGraphLaunch")
BLOCKING_SYNCS = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                  "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cuCtxSynchronize",
                  "cuStreamSynchronize", "cuEventSynchronize", "cuMemcpyDtoH", "cuMemcpyHtoD"}


def strip_version(name):
    """`cudaMemcpy_v3020` -> `cudaMemcpy`: a `_v` followed by 4 or 5 digits at the end."""
    head, sep, digits = name.rpartition("_v")
    if sep and 4 <= len(digits) <= 5 and digits.isdigit() and digits.isascii():
        return head
    return name


def is_step_or_profiler_annotation(name):
    """Training-step ranges and the profiler's own annotations: never "the" CPU operator."""
    if name.startswith(("ProfilerStep#", "[pytorch|profiler", "PyTorch Profiler")):
        return True
    lower = name.strip().lower()
    rest = lower[len("train"):].lstrip("_- ") if lower.startswith("train") else lower
    for word in ("iteration", "iter", "step"):
        if rest.startswith(word):
            number = rest[len(word):].lstrip("_- #:=")
            return all(c in "0123456789" for c in number)
    return False

_more_than_3_decimals = set()  # the ts/dur texts that had more than 3 decimals


def to_ns(v):
    """Exact µs (Decimal or int) -> integer ns, flooring anything below 1 ns."""
    if isinstance(v, int):
        return v * 1000
    d = decimal.Decimal(v)
    if d.as_tuple().exponent < -3:
        _more_than_3_decimals.add(str(d))
    with decimal.localcontext() as ctx:
        ctx.prec = 200
        return math.floor(d * 1000)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.loads(f.read(), parse_float=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


# ---------------------------------------------------------------- interval arithmetic
# A "set" is a sorted list of disjoint, non-touching [start, end) pairs.

def union(intervals):
    out = []
    for s, e in sorted(i for i in intervals if i[1] > i[0]):  # zero-length adds nothing
        if out and s <= out[-1][1]:  # overlapping or touching: merge
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(i) for i in out]


def measure(u):
    return sum(e - s for s, e in u)


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def gaps_of(u, ws, we):
    """Maximal sub-intervals of the window [ws, we] not covered by the union u."""
    out, cur = [], ws
    for s, e in u:
        if s > cur:
            out.append((cur, s))
        cur = max(cur, e)
    if we > cur:
        out.append((cur, we))
    return out


def nearest_rank(sorted_vals, p_num, p_den):
    """Value at index ceil(p*n) - 1 with p = p_num/p_den (exact integer arithmetic)."""
    n = len(sorted_vals)
    if n == 0:
        return None
    return sorted_vals[max(0, -(-p_num * n // p_den) - 1)]


# ---------------------------------------------------------------- analysis
class Analysis:
    def __init__(self, events, rng, kernel_wait_ns):
        self.kernel_wait_ns = kernel_wait_ns
        xs = [e for e in events if e.get("ph") == "X" and "ts" in e]
        self.origin = min(to_ns(e["ts"]) for e in xs)
        lo = hi = None
        if rng is not None:
            lo, hi = self.origin + rng[0], self.origin + rng[1]

        # Launching calls, keyed by correlation id (unique per trace for API calls), and
        # CPU operators per thread (pid, tid). First pass, so that file order does not matter.
        self.calls, self.cpu_ops, self.duplicate_correlations = {}, {}, 0
        self.syncs = {}  # (pid, tid) -> blocking sync calls (start, end, name)
        for e in xs:
            cat, args = e.get("cat"), e.get("args") or {}
            if cat in API_CATS and strip_version(e.get("name", "")) in BLOCKING_SYNCS:
                s = to_ns(e["ts"])
                self.syncs.setdefault((e.get("pid"), e.get("tid")), []).append(
                    (s, s + to_ns(e.get("dur", 0)), e.get("name", "")))
            if cat in API_CATS and "correlation" in args:
                c = args["correlation"]
                if c in self.calls:
                    self.duplicate_correlations += 1  # keep the first one
                    continue
                s = to_ns(e["ts"])
                self.calls[c] = dict(name=e.get("name", ""), start=s, end=s + to_ns(e.get("dur", 0)),
                                     thread=(e.get("pid"), e.get("tid")), corr=c)
            elif cat in CPU_OP_CATS and not is_step_or_profiler_annotation(e.get("name", "")):
                s = to_ns(e["ts"])
                self.cpu_ops.setdefault((e.get("pid"), e.get("tid")), []).append(
                    (s, s + to_ns(e.get("dur", 0)), e.get("name", "")))

        for k, ops in self.cpu_ops.items():
            ops.sort(key=lambda o: (o[0], -(o[1] - o[0])))
            self.cpu_ops[k] = (ops, [o[0] for o in ops])

        # GPU activities that belong to the range (overlap it), clipped to it.
        self.acts = []
        for e in xs:
            cat, args = e.get("cat"), e.get("args") or {}
            if cat not in GPU_CATS:
                continue
            s = to_ns(e["ts"])
            en = s + to_ns(e.get("dur", 0))
            if (hi is not None and not s < hi) or (lo is not None and not en > lo):
                continue
            # Section 1: an activity with no positive length inside the range is left out.
            if (en if hi is None else min(en, hi)) <= (s if lo is None else max(s, lo)):
                continue
            name, kind = e.get("name", ""), GPU_CATS[cat]
            comm = kind == "kernel" and ("nccl" in name.lower() or "rccl" in name.lower())
            self.acts.append(dict(
                kind=kind, comm=comm, name=name, device=args.get("device"),
                stream=args.get("stream"), start=s, end=en,
                cs=s if lo is None else max(s, lo), ce=en if hi is None else min(en, hi),
                call=self.calls.get(args.get("correlation"))))

    # ---- section 3: gaps and their causes
    def classify(self, gap, by_start):
        gs, ge = gap
        nxt = by_start.get(ge, [])  # the next work: activities starting exactly at the gap's end
        launched = [a["call"] for a in nxt if a["call"] is not None]
        call = min(launched, key=lambda c: (c["start"], c["end"], c["corr"])) if launched else None
        if call is not None and call["start"] >= gs:
            cause = "host_wait"
        elif ge - gs < self.kernel_wait_ns:
            cause = "kernel_wait"
        else:
            cause = "other"
        return cause, call

    def operator(self, call, gs):
        """Innermost CPU operator on the launching thread containing the gap start, else the call start."""
        if call is None:
            return None
        ops, starts = self.cpu_ops.get(call["thread"], ([], []))
        for t in (gs, call["start"]):
            # ops are sorted by (start, -duration): walking back from the last op starting at or
            # before t, the first one that contains t starts last, then is the shortest.
            for i in range(bisect.bisect_right(starts, t) - 1, -1, -1):
                if t < ops[i][1]:
                    return ops[i][2]
        return None

    def sync(self, call, cause, gs):
        """The blocking sync the launching thread of a host-wait gap was in when it began."""
        if call is None or cause != "host_wait":
            return None
        inside = [c for c in self.syncs.get(call["thread"], []) if c[0] <= gs < c[1]]
        return max(inside, key=lambda c: (c[0], -(c[1] - c[0])))[2] if inside else None

    def scope(self, scope_acts, with_gaps):
        ws = min(a["cs"] for a in scope_acts)
        we = max(a["ce"] for a in scope_acts)
        u = union((a["cs"], a["ce"]) for a in scope_acts)
        by_start = {}
        for a in scope_acts:
            by_start.setdefault(a["cs"], []).append(a)
        busy = measure(u)
        breakdown = {"host_wait_ns": 0, "kernel_wait_ns": 0, "other_ns": 0}
        gaps = []
        for g in gaps_of(u, ws, we):
            cause, call = self.classify(g, by_start)
            breakdown[cause + "_ns"] += g[1] - g[0]
            if with_gaps:
                gaps.append((g, cause, self.operator(call, g[0]), self.sync(call, cause, g[0])))
        row = {"window_ns": we - ws, "busy_ns": busy, "idle_ns": we - ws - busy,
               "idle_breakdown": breakdown}
        return row, u, gaps

    def run(self):
        out = {"devices": [], "streams": [], "kernels": [], "launch": None, "gaps": [],
               "host_wait_ops": []}
        host_ops = {}
        devices = sorted({a["device"] for a in self.acts}, key=lambda d: (d is None, d))
        for dev in devices:
            da = [a for a in self.acts if a["device"] == dev]
            row, u, gaps = self.scope(da, True)
            # Exclusive categories by priority compute > comm > memory.
            comp = union((a["cs"], a["ce"]) for a in da if a["kind"] == "kernel" and not a["comm"])
            comm = union((a["cs"], a["ce"]) for a in da if a["comm"])
            mem = union((a["cs"], a["ce"]) for a in da if a["kind"] == "memory")
            ov_cc = measure(intersect(comm, comp))
            ov_mc = measure(intersect(mem, comp))
            compute_ns = measure(comp)
            comm_ns = measure(comm) - ov_cc
            memory_ns = measure(mem) - measure(intersect(mem, union(comp + comm)))
            assert compute_ns + comm_ns + memory_ns == row["busy_ns"]
            assert sum(row["idle_breakdown"].values()) == row["idle_ns"]
            out["devices"].append(dict(
                device=dev, window_ns=row["window_ns"], busy_ns=row["busy_ns"],
                idle_ns=row["idle_ns"], compute_ns=compute_ns, comm_ns=comm_ns,
                memory_ns=memory_ns, overlap_comm_compute_ns=ov_cc,
                overlap_copy_compute_ns=ov_mc, idle_breakdown=row["idle_breakdown"]))
            for (gs, ge), cause, op, sync in gaps:
                out["gaps"].append(dict(device=dev, start_ns=gs - self.origin, dur_ns=ge - gs,
                                        cause=cause, operator=op, sync=sync))
                if cause == "host_wait":
                    host_ops[op] = host_ops.get(op, 0) + ge - gs
        out["gaps"].sort(key=lambda g: (-g["dur_ns"], g["start_ns"], g["device"]))
        out["host_wait_ops"] = [dict(operator=k, time_ns=v) for k, v in
                                sorted(host_ops.items(), key=lambda kv: (-kv[1], kv[0] or ""))]

        streams = sorted({(a["device"], a["stream"]) for a in self.acts},
                         key=lambda k: tuple((x is None, x) for x in k))
        for dev, st in streams:
            row, _, _ = self.scope([a for a in self.acts if (a["device"], a["stream"]) == (dev, st)],
                                   False)
            out["streams"].append(dict(device=dev, stream=st, **row))

        # ---- section 4: kernels, launch delay, launch cost
        kernels = [a for a in self.acts if a["kind"] == "kernel"]
        per_name = {}
        for k in kernels:
            p = per_name.setdefault(k["name"], {"calls": 0, "total_ns": 0, "delays": []})
            p["calls"] += 1
            p["total_ns"] += k["ce"] - k["cs"]
            if k["call"] is not None:
                p["delays"].append(k["start"] - k["call"]["end"])
        for name, p in sorted(per_name.items(), key=lambda kv: (-kv[1]["total_ns"], kv[0])):
            d = sorted(p["delays"])
            out["kernels"].append(dict(name=name, calls=p["calls"], total_ns=p["total_ns"],
                                       launch_delay_median_ns=nearest_rank(d, 1, 2),
                                       launch_delay_p95_ns=nearest_rank(d, 95, 100)))
        launch_calls = {k["call"]["corr"]: k["call"] for k in kernels if k["call"] is not None}
        typical = nearest_rank(sorted(c["end"] - c["start"] for c in launch_calls.values()), 1, 2)
        bound = [k for k in kernels if typical is not None and k["end"] - k["start"] < typical]
        is_graph = lambda c: c is not None and c["name"].startswith(GRAPH_PREFIXES)
        out["launch"] = dict(
            typical_launch_ns=typical,
            kernels_with_launch=sum(1 for k in kernels if k["call"] is not None),
            launch_bound_kernels=len(bound),
            launch_bound_ns=sum(k["ce"] - k["cs"] for k in bound),
            kernel_ns=sum(k["ce"] - k["cs"] for k in kernels),
            graph_launches=sum(1 for c in launch_calls.values() if is_graph(c)),
            graph_kernels=sum(1 for k in kernels if is_graph(k["call"])))
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--range", help="START_NS..END_NS, relative to the trace origin")
    ap.add_argument("--kernel-wait-us", type=decimal.Decimal, default=decimal.Decimal(10))
    a = ap.parse_args()
    rng = None
    if a.range:
        s, e = a.range.split("..")
        rng = (int(s), int(e))
    analysis = Analysis(load(a.file), rng, to_ns(a.kernel_wait_us))
    res = analysis.run()
    if analysis.duplicate_correlations:
        print(f"warning: {analysis.duplicate_correlations} API calls repeat a correlation id "
              "(the first one is kept)", file=sys.stderr)
    if _more_than_3_decimals:
        print(f"warning: {len(_more_than_3_decimals)} distinct ts/dur values had more than 3 decimals "
              "(floored to the ns)", file=sys.stderr)
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
