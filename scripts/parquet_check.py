#!/usr/bin/env python3
"""Run the queries of docs/export.md on a `warpscope export` and check them against warpscope.

    python3 -m venv /tmp/pqvenv && /tmp/pqvenv/bin/pip install duckdb   # datafusion, pyspark: optional
    /tmp/pqvenv/bin/python scripts/parquet_check.py --bin target/debug/warpscope \\
        --out /tmp/pq [--engine duckdb|datafusion|spark] FILE_OR_DIR...

Exports FILE_OR_DIR... with `warpscope export --format parquet --out OUT`, then runs on OUT:
  1. top kernels across all ranks (calls, total ns), compared with the kernel rows of
     `warpscope summary --format json` of every file, summed by name;
  2. per-rank GPU time (sum of kernel, copy and set durations), compared with the summaries'
     `gpu_total_ns`;
  3. per-rank busy time (the union of a device's kernels, copies and sets, summed over its
     devices), compared with `warpscope analyze --format json` (devices[].busy_ns);
  4. memory per run and device (peak allocated, peak reserved, allocations, frees), compared
     with `warpscope memory --format json --top 0` (devices[]);
  5. bytes allocated per operator (the allocations whose innermost operator it is, every run),
     compared with the memory reports' operators[].self_alloc_count and self_alloc_bytes,
     summed by name.
Every figure must be equal to the nanosecond (and the byte). Prints the tables and `ok`; exits 1
on a mismatch.
"""

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict

# The queries of docs/export.md. {t} is replaced by each engine's name for a table.
TOP_KERNELS = """
SELECT name, count(*) AS calls, sum(dur_ns) AS total_ns
FROM {kernels}
GROUP BY name
ORDER BY total_ns DESC, name
LIMIT 10
"""

GPU_TIME_PER_RANK = """
SELECT rank, run, sum(dur_ns) AS gpu_ns
FROM {events}
WHERE device IS NOT NULL AND kind IN ('kernel', 'memcpy', 'memset')
GROUP BY rank, run
ORDER BY run
"""

BUSY_PER_RANK = """
WITH work AS (
  SELECT run, rank, device, start_ns AS s, start_ns + dur_ns AS e
  FROM {events}
  WHERE device IS NOT NULL AND kind IN ('kernel', 'memcpy', 'memset') AND dur_ns > 0
), ordered AS (
  SELECT *, max(e) OVER (PARTITION BY run, device ORDER BY s, e
                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
  FROM work
), islands AS (
  SELECT *, sum(CASE WHEN reach IS NULL OR s > reach THEN 1 ELSE 0 END)
              OVER (PARTITION BY run, device ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
  FROM ordered
), spans AS (
  SELECT run, rank, device, island, min(s) AS s, max(e) AS e
  FROM islands GROUP BY run, rank, device, island
)
SELECT rank, run, sum(e - s) AS busy_ns FROM spans GROUP BY rank, run ORDER BY run
"""

MEMORY_PER_DEVICE = """
WITH m AS (
  SELECT *, row_number() OVER (PARTITION BY run, device ORDER BY record) AS k
  FROM {memory}
)
SELECT run, rank, device,
       max(CASE WHEN k = 1 AND action = 'free' THEN allocated_bytes + bytes
                WHEN k = 1 OR action NOT IN ('oom', 'snapshot') THEN allocated_bytes
           END) AS peak_allocated_bytes,
       max(CASE WHEN k = 1 OR action NOT IN ('oom', 'snapshot') THEN reserved_bytes
           END) AS peak_reserved_bytes,
       sum(CASE WHEN action = 'alloc' THEN 1 ELSE 0 END) AS allocations,
       sum(CASE WHEN action = 'free' THEN 1 ELSE 0 END) AS frees
FROM m
GROUP BY run, rank, device
ORDER BY run, device
"""

BYTES_PER_OPERATOR = """
SELECT operator, count(*) AS allocations, sum(bytes) AS bytes
FROM {memory}
WHERE action = 'alloc'
GROUP BY operator
ORDER BY bytes DESC, operator
"""


# The tables the queries read.
TABLES = ("kernels", "events", "memory")


def run_json(binary, *args):
    out = subprocess.run([binary, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def duckdb_engine(out):
    import duckdb

    con = duckdb.connect()
    tables = {t: f"read_parquet('{out}/{t}/*.parquet')" for t in TABLES}
    return lambda q: [tuple(r) for r in con.sql(q.format(**tables)).fetchall()]


def datafusion_engine(out):
    from datafusion import SessionContext

    ctx = SessionContext()
    for t in TABLES:
        ctx.register_parquet(t, f"{out}/{t}/")
    tables = {t: t for t in TABLES}

    def query(q):
        batches = ctx.sql(q.format(**tables)).collect()
        rows = []
        for b in batches:
            cols = [c.to_pylist() for c in b.columns]
            rows.extend(zip(*cols))
        return rows

    return query


def spark_engine(out):
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master("local[2]").appName("warpscope").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for t in TABLES:
        spark.read.parquet(f"{out}/{t}").createOrReplaceTempView(t)
    tables = {t: t for t in TABLES}
    return lambda q: [tuple(r) for r in spark.sql(q.format(**tables)).collect()]


def files_of(args):
    files = []
    for a in args:
        if os.path.isdir(a):
            files += sorted(
                os.path.join(a, f) for f in os.listdir(a)
                if not f.startswith(".") and f.lower().endswith((".json", ".gz", ".sqlite", ".sqlite3", ".db", ".nvvp"))
            )
        else:
            files.append(a)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/debug/warpscope")
    ap.add_argument("--out", required=True)
    ap.add_argument("--engine", default="duckdb", choices=["duckdb", "datafusion", "spark"])
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()

    subprocess.run([args.bin, "export", "--format", "parquet", "--out", args.out, *args.paths],
                   check=True)
    query = {"duckdb": duckdb_engine, "datafusion": datafusion_engine,
             "spark": spark_engine}[args.engine](args.out)

    files = files_of(args.paths)
    kernels = defaultdict(lambda: [0, 0])
    gpu_total, busy = [], []
    # Per (run, device): peak allocated, peak reserved, allocations, frees; per operator: self
    # allocations and bytes.
    memory, operators = [], defaultdict(lambda: [0, 0])
    for run, f in enumerate(files):
        s = run_json(args.bin, "summary", f, "--format", "json")
        for row in s["gpu_activities"]:
            if row["kind"] == "kernel":
                kernels[row["name"]][0] += row["calls"]
                kernels[row["name"]][1] += row["total_ns"]
        gpu_total.append(s["gpu_total_ns"])
        a = run_json(args.bin, "analyze", f, "--format", "json")
        busy.append(sum(d["busy_ns"] for d in a["devices"]))
        m = run_json(args.bin, "memory", f, "--format", "json", "--top", "0")
        for d in m["devices"]:
            device = None if d["device"] == "cpu" else d["device"]
            memory.append((run, device, d["peak_allocated_bytes"], d["peak_reserved_bytes"],
                           d["allocations"], d["frees"]))
        for o in m["operators"]:
            if o["self_alloc_count"] > 0:
                operators[o["name"]][0] += o["self_alloc_count"]
                operators[o["name"]][1] += o["self_alloc_bytes"]

    failed = False

    def check(title, got, want, show=None):
        nonlocal failed
        print(f"-- {title} ({args.engine})")
        for row in got[:show]:
            print("  ", *row)
        if show is not None and len(got) > show:
            print(f"   ... {len(got) - show} more rows")
        if got != want:
            failed = True
            print(f"MISMATCH: warpscope says {want}", file=sys.stderr)

    want_top = sorted(((n, c, t) for n, (c, t) in kernels.items()), key=lambda r: (-r[2], r[0]))[:10]
    got_top = [(n, int(c), int(t)) for n, c, t in query(TOP_KERNELS)]
    check("top kernels across all ranks", got_top, want_top)
    gpu = [int(r[2]) for r in query(GPU_TIME_PER_RANK)]
    check("GPU time per rank (ns)", [(g,) for g in gpu], [(g,) for g in gpu_total if g > 0])
    got_busy = [int(r[2]) for r in query(BUSY_PER_RANK)]
    check("busy time per rank (ns)", [(b,) for b in got_busy], [(b,) for b in busy if b > 0])
    # The CPU's rows (device null) first in every engine.
    by_device = lambda r: (r[0], -1 if r[1] is None else r[1])
    got_mem = sorted(((int(r[0]), None if r[2] is None else int(r[2]), *map(int, r[3:]))
                      for r in query(MEMORY_PER_DEVICE)), key=by_device)
    check("memory per run and device (run, device, peak allocated, peak reserved, allocations, "
          "frees)", got_mem, sorted(memory, key=by_device))
    want_ops = sorted(((n, c, b) for n, (c, b) in operators.items()), key=lambda r: (-r[2], r[0]))
    got_ops = [(n, int(c), int(b)) for n, c, b in query(BYTES_PER_OPERATOR)]
    check("bytes allocated per operator (self)", got_ops, want_ops, show=10)
    if failed:
        sys.exit(1)
    print(f"ok: {len(files)} files, {args.engine} gives warpscope's figures to the nanosecond")


if __name__ == "__main__":
    main()
