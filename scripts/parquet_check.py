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
     devices), compared with `warpscope analyze --format json` (devices[].busy_ns).
Every figure must be equal to the nanosecond. Prints the tables and `ok`; exits 1 on a mismatch.
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


def run_json(binary, *args):
    out = subprocess.run([binary, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def duckdb_engine(out):
    import duckdb

    con = duckdb.connect()
    tables = {t: f"read_parquet('{out}/{t}/*.parquet')" for t in ("kernels", "events")}
    return lambda q: [tuple(r) for r in con.sql(q.format(**tables)).fetchall()]


def datafusion_engine(out):
    from datafusion import SessionContext

    ctx = SessionContext()
    for t in ("kernels", "events"):
        ctx.register_parquet(t, f"{out}/{t}/")
    tables = {t: t for t in ("kernels", "events")}

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
    for t in ("kernels", "events"):
        spark.read.parquet(f"{out}/{t}").createOrReplaceTempView(t)
    tables = {t: t for t in ("kernels", "events")}
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
    for f in files:
        s = run_json(args.bin, "summary", f, "--format", "json")
        for row in s["gpu_activities"]:
            if row["kind"] == "kernel":
                kernels[row["name"]][0] += row["calls"]
                kernels[row["name"]][1] += row["total_ns"]
        gpu_total.append(s["gpu_total_ns"])
        a = run_json(args.bin, "analyze", f, "--format", "json")
        busy.append(sum(d["busy_ns"] for d in a["devices"]))

    failed = False

    def check(title, got, want):
        nonlocal failed
        print(f"-- {title} ({args.engine})")
        for row in got:
            print("  ", *row)
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
    if failed:
        sys.exit(1)
    print(f"ok: {len(files)} files, {args.engine} gives warpscope's figures to the nanosecond")


if __name__ == "__main__":
    main()
