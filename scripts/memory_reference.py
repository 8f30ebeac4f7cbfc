#!/usr/bin/env python3
"""An independent reference of `warpscope memory` for PyTorch profiler traces and CUDA allocator
snapshots, written from docs/memory.md alone (standard library only).

    python3 scripts/memory_reference.py TRACE.json[.gz]|SNAPSHOT.pickle[.gz] [--top N]

A snapshot is read with Python's own pickle module: only open snapshots you trust with it.

Prints JSON: per device the peaks, start/low/end values, allocation and free counts, what is
live at the peak (by operator and by size class), never-freed allocations and frees of older
blocks; and the allocating operators. Times are not printed: they depend on the profile's
time zero, which is warpscope's own choice. crates/warpscope-core/tests/memory.rs compares this
with `warpscope memory --format json --top N`.
"""
import argparse
import bisect
import decimal
import gzip
import json
import pickle
import sys

BEFORE = "(allocated before the recording)"
UNMATCHED = "(not matched: the trace has no addresses)"
NO_OP = "(no operator)"
SIZE_CLASSES = [
    (1 << 20, "< 1 MiB (small pool)"),
    (10 << 20, "1-10 MiB"),
    (100 << 20, "10-100 MiB"),
    (1 << 30, "100 MiB-1 GiB"),
]


def size_class(n):
    for upper, name in SIZE_CLASSES:
        if n < upper:
            return name
    return ">= 1 GiB"


def to_ns(v):
    """Microseconds as written (a number) to integer nanoseconds, rounding halves away from 0."""
    d = decimal.Decimal(str(v)) * 1000
    return int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))


def integer(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else None
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            return None
    return None


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        data = f.read()
    if data[:1] == b"\x80":
        return pickle.loads(data)
    return json.loads(data, parse_float=decimal.Decimal)


SNAPSHOT_ACTIONS = {
    "alloc": "alloc",
    "free_completed": "free",
    "free_requested": "free_requested",
    "segment_alloc": "segment_alloc",
    "segment_map": "segment_alloc",
    "segment_free": "segment_free",
    "segment_unmap": "segment_free",
    "oom": "oom",
    "snapshot": "snapshot",
}


def snapshot_operator(frames):
    """The outermost `at::_ops::NAME::call` frame as aten::NAME, else the innermost Python frame."""
    for f in reversed(frames):
        name = f.get("name", "")
        if name.startswith("at::_ops::"):
            rest = name[len("at::_ops::"):]
            if rest.endswith("::call"):
                return "aten::" + rest[: -len("::call")]
            if "::call(" in rest:
                return "aten::" + rest[: rest.index("::call(")]
    for f in frames:
        if str(f.get("filename", "")).endswith(".py"):
            base = f["filename"].rsplit("/", 1)[-1]
            return f"{f.get('name', '')} ({base}:{f.get('line', 0)})"
    return NO_OP


def read_snapshot(snap):
    """Records of a snapshot, the totals replayed per device and anchored on the end state."""
    records, ops = [], {}
    order = 0
    for device, trace in enumerate(snap.get("device_traces", [])):
        segs = [s for s in snap.get("segments", []) if s.get("device") == device]
        end_alloc = sum(b["size"] for s in segs for b in s.get("blocks", [])
                        if b.get("state") in ("active_allocated", "active_pending_free"))
        end_res = sum(s["total_size"] for s in segs)
        rows = []
        for e in trace:
            action = SNAPSHOT_ACTIONS.get(e.get("action"))
            if action is None:
                continue
            size = e.get("size", 0)
            da = size if action == "alloc" else -size if action == "free" else 0
            dr = size if action == "segment_alloc" else -size if action == "segment_free" else 0
            rows.append((e, action, da, dr))
        base_alloc = end_alloc - sum(r[2] for r in rows)
        base_res = end_res - sum(r[3] for r in rows)
        a, rs = base_alloc, base_res
        for e, action, da, dr in rows:
            a += da
            rs += dr
            rec = (e["time_us"] * 1000, order, device, action, e.get("addr", 0), e.get("size", 0), a, rs, None)
            ops[order] = snapshot_operator(e.get("frames", []))
            order += 1
            records.append(rec)
    records.sort(key=lambda r: (r[0], r[1]))
    return records, ops


ROCM_KEYS = ("roctracer_version", "hip_runtime_version", "hip_driver_version")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")


def rocm_devices(trace, events, records):
    """docs/memory.md: on a trace recorded on ROCm whose GPU events are numbered by HSA agent
    (an event device with no deviceProperties entry, or a memory device with no GPU events), the
    memory of HIP device i (the i-th deviceProperties id) is the i-th GPU of the events."""
    if not isinstance(trace, dict):
        return records
    props = sorted({p.get("id", 0) for p in trace.get("deviceProperties") or []})
    rocm = any(k in trace for k in ROCM_KEYS) or any(
        str(p.get("name", "")).startswith("AMD") for p in trace.get("deviceProperties") or [])
    if not rocm or not props:
        return records
    gpus = set()
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X" and str(e.get("cat", "")).lower() in GPU_CATS:
            d = (e.get("args") or {}).get("device", e.get("pid"))
            if isinstance(d, int):
                gpus.add(d)
    gpus = sorted(gpus)
    mem = {r[2] for r in records if r[2] != "cpu"}
    if not gpus or not (any(g not in props for g in gpus) or any(m not in gpus for m in mem)):
        return records
    join = dict(zip(props, gpus))
    return [r[:2] + (join.get(r[2], r[2]) if r[2] != "cpu" else "cpu",) + r[3:] for r in records]


def read(trace):
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    ops = {}  # (pid, tid) -> list of (start_ns, end_ns, name)
    records = []  # (time_ns, order, device, action, addr, bytes, allocated, reserved, thread)
    for order, e in enumerate(events):
        if not isinstance(e, dict):
            continue
        name, ph = e.get("name"), e.get("ph")
        thread = (str(e.get("pid")), str(e.get("tid")))
        cat = str(e.get("cat", "")).lower()
        if ph == "X" and cat in ("cpu_op", "operator", "hpu_op") and not str(name).startswith("ProfilerStep#"):
            start = to_ns(e["ts"])
            ops.setdefault(thread, []).append((start, start + to_ns(e.get("dur", 0)), name))
        elif ph in ("i", "I") and name in ("[memory]", "[OutOfMemory]") and e.get("s", "t") not in ("g", "p"):
            a = e.get("args") or {}
            dtype, size = integer(a.get("Device Type")), integer(a.get("Bytes"))
            alloc, res = integer(a.get("Total Allocated")), integer(a.get("Total Reserved"))
            if dtype is None or size is None or (alloc is None) != (res is None):
                continue
            if alloc is not None and (alloc < 0 or res < 0):
                continue
            if dtype == 0:
                device = "cpu"
            else:
                did = integer(a.get("Device Id"))
                if did is None or did < 0:
                    continue
                device = did
            if name == "[OutOfMemory]":
                action = "oom"
            else:
                action = "free" if size < 0 else "alloc"
            addr = integer(a.get("Addr")) or 0
            records.append((to_ns(e["ts"]), order, device, action, addr, abs(size), alloc, res, thread))
    records = rocm_devices(trace, events, records)
    records.sort(key=lambda r: (r[0], r[1]))
    # Devices with a record without totals: replayed from the sizes, lowest point 0, reserved
    # taken equal to allocated.
    for dev in {r[2] for r in records if r[6] is None}:
        total, lowest, sums = 0, 0, []
        for r in records:
            if r[2] == dev:
                total += r[5] if r[3] == "alloc" else -r[5] if r[3] == "free" else 0
                lowest = min(lowest, total)
                sums.append(total)
        it = iter(sums)
        for k, r in enumerate(records):
            if r[2] == dev:
                t = next(it) - lowest
                records[k] = r[:6] + (t, t) + r[8:]
    for lst in ops.values():
        lst.sort()
    return records, ops


def operator_stack(ops, thread, t):
    """Every cpu_op of the thread containing t, innermost (latest start, then shortest) first."""
    lst = ops.get(thread, [])
    upto = bisect.bisect_right(lst, (t, float("inf"), "\uffff"))
    containing = [o for o in lst[:upto] if o[0] <= t <= o[1]]
    containing.sort(key=lambda o: (o[0], -(o[1] - o[0])))
    return [o[2] for o in reversed(containing)] or [NO_OP]


def group(blocks, total, key, rest):
    groups = {}
    known = 0
    for r in blocks:
        known += r[5]
        g = groups.setdefault(key(r), [0, 0])
        g[0] += r[5]
        g[1] += 1
    out = [{"operator": k, "bytes": v[0], "count": v[1]} for k, v in groups.items()]
    if total > known:
        out.append({"operator": rest, "bytes": total - known, "count": 0})
    out.sort(key=lambda g: (-g["bytes"], g["operator"]))
    return out


def delta(r):
    return r[5] if r[3] == "alloc" else -r[5] if r[3] == "free" else 0


def device_report(recs, stack, top):
    changing = [r for r in recs if r[3] not in ("oom", "snapshot")]
    first = changing[0]
    value = max(first[6] - delta(first), 0)
    d = {
        "peak_allocated_bytes": value,
        "peak_reserved_bytes": first[7],
        "start_allocated_bytes": value,
        "low_allocated_bytes": value,
        "end_allocated_bytes": value,
        "end_reserved_bytes": first[7],
        "allocations": 0,
        "frees": 0,
        "allocated_total_bytes": 0,
    }
    peak_record = None
    for r in changing:
        if r[3] == "alloc":
            d["allocations"] += 1
            d["allocated_total_bytes"] += r[5]
        elif r[3] == "free":
            d["frees"] += 1
        if r[6] > d["peak_allocated_bytes"]:
            d["peak_allocated_bytes"] = r[6]
            d["reserved_at_peak_bytes"] = r[7]
            peak_record = r
        d["peak_reserved_bytes"] = max(d["peak_reserved_bytes"], r[7])
        d["low_allocated_bytes"] = min(d["low_allocated_bytes"], r[6])
        d["end_allocated_bytes"], d["end_reserved_bytes"] = r[6], r[7]
    d.setdefault("reserved_at_peak_bytes", first[7])
    d["fragmentation_at_peak_bytes"] = max(d["reserved_at_peak_bytes"] - d["peak_allocated_bytes"], 0)
    live, at_peak = {}, [] if peak_record is None else None
    older = [0, 0]
    unmatched = False
    for r in recs:
        if r[3] in ("alloc", "free") and r[4] == 0:
            unmatched = True  # no address: cannot be matched
        elif r[3] == "alloc":
            live[r[4]] = r
        elif r[3] == "free":
            if live.pop(r[4], None) is None:
                older[0] += 1
                older[1] += r[5]
        if r is peak_record:
            at_peak = list(live.values())
    rest = UNMATCHED if unmatched else BEFORE
    d["live_at_peak"] = group(at_peak, d["peak_allocated_bytes"], lambda r: stack(r)[0], rest)[: top or None]
    d["live_at_peak_by_size"] = group(at_peak, d["peak_allocated_bytes"], lambda r: size_class(r[5]), rest)
    d["never_freed"] = {"count": len(live), "bytes": sum(r[5] for r in live.values())}
    d["frees_without_allocation"] = {"count": older[0], "bytes": older[1]}
    return d


def report(path, top):
    data = load(path)
    cache = {}
    if isinstance(data, dict) and "segments" in data and "device_traces" in data:
        records, snap_ops = read_snapshot(data)

        def stack(r):
            return [snap_ops[r[1]]]
    else:
        records, ops = read(data)

        def stack(r):
            key = (r[8], r[0])
            if key not in cache:
                cache[key] = operator_stack(ops, r[8], r[0])
            return cache[key]

    devices = []
    keys = sorted({r[2] for r in records}, key=lambda d: (-1, 0) if d == "cpu" else (0, d))
    for dev in keys:
        recs = [r for r in records if r[2] == dev]
        if not any(r[3] not in ("oom", "snapshot") for r in recs):
            continue
        d = {"device": dev}
        d.update(device_report(recs, stack, top))
        devices.append(d)
    rows = {}
    for r in records:
        if r[3] != "alloc":
            continue
        chain = stack(r)
        seen = set()
        for depth, name in enumerate(chain):
            row = rows.setdefault(name, {"name": name, "alloc_count": 0, "alloc_bytes": 0,
                                         "self_alloc_count": 0, "self_alloc_bytes": 0})
            if depth == 0:
                row["self_alloc_count"] += 1
                row["self_alloc_bytes"] += r[5]
            if name not in seen:
                seen.add(name)
                row["alloc_count"] += 1
                row["alloc_bytes"] += r[5]
    operators = sorted(rows.values(), key=lambda o: (-o["alloc_bytes"], -o["self_alloc_bytes"], o["name"]))
    return {"devices": devices, "operators": operators[: top or None]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    json.dump(report(args.trace, args.top), sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
