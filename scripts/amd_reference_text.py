#!/usr/bin/env python3
"""Independent reference for warpscope's AMD text importers, written from
docs/formats.md section 14 alone (standard library only).

For each file it prints the format it detected and, per the page's "What is counted": the
number of kernels, copies (and sets) and API calls and their summed durations in integer ns.

    python3 scripts/amd_reference_text.py FILE... > reference.json

Output: {"FILE": {"format": "...", "kernels": [n, ns], "copies": [n, ns], "api_calls": [n, ns]}}
"""

import csv
import gzip
import io
import json
import sys
from decimal import ROUND_HALF_UP, Decimal


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def us_to_ns(v):
    """µs as written (number or string, maybe with decimals) to integer ns, halves away from 0."""
    return int((Decimal(str(v).strip()) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def int_cell(v):
    v = str(v).strip()
    if v.startswith("0x"):
        return int(v, 16)
    return int(Decimal(v))


class Totals:
    def __init__(self, fmt):
        self.fmt = fmt
        self.t = {"kernels": [0, 0], "copies": [0, 0], "api_calls": [0, 0]}

    def add(self, what, ns, n=1):
        self.t[what][0] += n
        self.t[what][1] += ns

    def out(self):
        return {"format": self.fmt, **self.t}


def header_of(text):
    first = text.split("\n", 1)[0]
    return [h.strip().strip('"').strip() for h in first.rstrip("\r").split(",")]


def stats(path, text):
    t = Totals("rocprof-stats")
    name = path.rsplit("/", 1)[-1].lower()
    if "copy_stats" in name:
        by_file = "copies"
    elif "api_stats" in name or "hip_stats" in name or "hsa_stats" in name:
        by_file = "api_calls"
    elif "kernel_stats" in name or name.endswith(".stats.csv"):
        by_file = "kernels"
    else:
        by_file = None
    for row in csv.DictReader(io.StringIO(text)):
        n = row["Name"].strip()
        what = by_file
        if what is None:
            if n.startswith(("hip", "__hip", "hsa_")):
                what = "api_calls"
            elif n.startswith(("Copy", "MEMORY_COPY_")) or n == "FillBuffer":
                what = "copies"
            else:
                what = "kernels"
        t.add(what, int_cell(row["TotalDurationNs"]), int_cell(row["Calls"]))
    return t


def v1_kernels(text):
    t = Totals("rocprof-csv")
    for row in csv.DictReader(io.StringIO(text)):
        if not row.get("KernelName") or not row.get("BeginNs") or not row.get("EndNs"):
            continue
        t.add("kernels", int_cell(row["EndNs"]) - int_cell(row["BeginNs"]))
    return t


def v3_trace(text):
    t = Totals("rocprofv3-csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    cols = header_of(text)
    for row in rows:
        start, end = row.get("Start_Timestamp"), row.get("End_Timestamp")
        if not start or not end:
            continue
        ns = int_cell(end) - int_cell(start)
        if "Kernel_Name" in cols:
            if row.get("Kernel_Name"):
                t.add("kernels", ns)
        elif "Direction" in cols:
            if row.get("Direction"):
                t.add("copies", ns)
        elif "Function" in cols:
            domain = (row.get("Domain") or "").strip()
            if row.get("Function") and not domain.startswith(("MARKER", "ROCTX")):
                t.add("api_calls", ns)
    return t


COPY_OPS = {"CopyHostToDevice", "CopyDeviceToHost", "CopyDeviceToDevice", "CopyHostToHost",
            "CopyPeerToPeer", "CopyDeviceToPeer", "FillBuffer"}


def rocprof_json(doc):
    t = Totals("rocprof-json")
    events = doc["traceEvents"]
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[str(e.get("pid"))] = e["args"]["name"]
    for e in events:
        if e.get("ph") != "X":
            continue
        a = e.get("args", {})
        ns = int_cell(a["EndNs"]) - int_cell(a["BeginNs"])
        lane = names.get(str(e.get("pid")), "")
        if lane == "COPY":
            t.add("copies", ns)
        elif lane.startswith("GPU"):
            t.add("kernels", ns)
        elif "API" in lane:
            t.add("api_calls", ns)
    return t


def rpd_json(events):
    t = Totals("rpd-json")
    for e in events:
        if e.get("ph") != "X":
            continue
        desc = e.get("args", {}).get("desc", "")
        ns = us_to_ns(e.get("dur", 0))
        if desc == "KernelExecution":
            t.add("kernels", ns)
        elif desc in COPY_OPS:
            t.add("copies", ns)
        else:
            name = e.get("name", "")
            gpu_pid = any(m.get("ph") == "M" and m.get("name") == "process_name"
                          and str(m.get("pid")) == str(e.get("pid"))
                          and m["args"]["name"].startswith("GPU") for m in events)
            if not gpu_pid and name != "hcc_activity_callback" and not name.endswith("::writeRows"):
                t.add("api_calls", ns)
    return t


def kineto(doc):
    t = Totals("chrome-json")
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        ns = us_to_ns(e.get("dur", 0))
        if cat == "kernel":
            t.add("kernels", ns)
        elif cat in ("gpu_memcpy", "gpu_memset"):
            t.add("copies", ns)
        elif cat in ("cuda_runtime", "cuda_driver"):
            t.add("api_calls", ns)
    return t


def reference(path):
    text = read_text(path)
    head = text[:65536]
    first = text.lstrip()[:1]
    if first in ("{", "["):
        if '"BeginNs"' in head and '"DurationNs"' in head:
            return rocprof_json(json.loads(text))
        doc = json.loads(text)
        if isinstance(doc, list) and doc and doc[0] == {} and '"desc"' in head:
            return rpd_json(doc)
        return kineto(doc)
    cols = header_of(text)
    if {"Name", "Calls", "TotalDurationNs"} <= set(cols):
        return stats(path, text)
    if {"KernelName", "BeginNs", "EndNs"} <= set(cols):
        return v1_kernels(text)
    if {"Start_Timestamp", "End_Timestamp"} <= set(cols):
        return v3_trace(text)
    raise SystemExit(f"{path}: not an AMD text format this reference reads")


def main():
    out = {p: reference(p).out() for p in sys.argv[1:]}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
