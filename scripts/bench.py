#!/usr/bin/env python3
"""Whole-process import benchmark: the README's speed table, with its yardstick in the same run.

    cargo build --release
    python3 scripts/bench.py [--runs 5] [--big] [--scaling] [--others [--gb]]

Every figure is the median of --runs runs of the release binary as a user runs it
(`warpscope summary FILE --format json`), timed from start to exit (wall), with the user+system
CPU and peak resident memory the kernel reports for the process (as /usr/bin/time does, to the
microsecond). The runs of every row are interleaved, so a busy machine slows all rows alike.

- default: the 139 MB Kineto trace (resnet50_b32_60steps, from ../shared/samples or --trace),
  plain and gzip, against Python's json.load of the same file (the yardstick);
- --big: the 1.4 GB trace made by scripts/gen_kineto_trace.py (ten copies of the 139 MB one);
- --scaling: the 1.4 GB trace on 1, 2, 4, ... cores (taskset, WARPSCOPE_THREADS): cores -> GB/s;
- --others: a 200 MB Nsight Systems export (and one where every launch has its own registers,
  grid and shared memory, the worst case for the kernel table) and a 500 MB nvprof CSV, from
  the generators; with --gb also a 1 GB export and a 1 GB CSV.
- --amd: a 1 GB rocprofv3 database (scripts/gen_rocpd_sqlite.py) against its yardstick, the
  1 GB Nsight Systems export, interleaved; --no-json leaves out the Kineto rows.

Generated files go to --work (default /tmp/warpscope-bench) and are reused.
"""

import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(
    ROOT, "..", "shared", "samples", "kineto-h100", "resnet50_b32_60steps.pt.trace.json.gz"
)
RELEASE_BIN = os.path.join(ROOT, "target", "release", "warpscope")


def timed(cmd, env=None):
    """(wall s, cpu s, peak MB) of one run of `cmd`: the wall clock from start to exit, and the
    process's user+system CPU and peak resident memory as the kernel reports them (wait4), to
    the microsecond (/usr/bin/time rounds to 10 ms, 6% of a 0.16 s run)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err.decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def python_load(path):
    return [sys.executable, "-c", f"import json; json.load(open({path!r}))"]


def summary(binary, path):
    # The core's `load` example imports and summarises as `warpscope summary` does, without the
    # GUI crates (a quicker build to measure an importer with).
    if os.path.basename(binary) == "load":
        return [binary, path]
    return [binary, "summary", path, "--format", "json"]


def median_rows(rows, runs):
    """Runs every row's command `runs` times, interleaved; returns medians per label."""
    results = {label: [] for label, *_ in rows}
    for _ in range(runs):
        for label, cmd, env, *_ in rows:
            results[label].append(timed(cmd, env))
    return {
        label: tuple(statistics.median(r[i] for r in res) for i in range(3))
        for label, res in results.items()
    }


def ensure(path, make):
    if not os.path.exists(path):
        print(f"making {path} ...", flush=True)
        make()
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--trace", default=SAMPLE, help="the 139 MB trace (.json or .json.gz)")
    ap.add_argument("--work", default="/tmp/warpscope-bench")
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--scaling", action="store_true")
    ap.add_argument("--others", action="store_true",
                    help="also nsys SQLite (200 MB, and 200 MB with every launch distinct) and "
                         "nvprof CSV (500 MB), generated once")
    ap.add_argument("--gb", action="store_true",
                    help="with --others: also a 1 GB nsys export and a 1 GB nvprof CSV")
    ap.add_argument("--amd", action="store_true",
                    help="a 1 GB rocprofv3 database against the 1 GB nsys export")
    ap.add_argument("--no-json", action="store_true", help="leave out the Kineto rows")
    ap.add_argument("--bin", help="the warpscope binary (default: the release build), or the "
                                  "core's examples/load")
    args = ap.parse_args()
    binary = args.bin or RELEASE_BIN
    if not os.path.exists(binary):
        sys.exit("build the release binary first: cargo build --release")
    os.makedirs(args.work, exist_ok=True)
    plain = os.path.join(args.work, "r60.json")
    packed = os.path.join(args.work, "r60.json.gz")

    def unpack():
        opener = gzip.open if args.trace.endswith(".gz") else open
        with opener(args.trace, "rb") as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst)

    if not args.no_json:
        ensure(plain, unpack)
        ensure(packed,
               lambda: subprocess.run(["sh", "-c", f"gzip -c {plain} > {packed}"], check=True))
    big = os.path.join(args.work, "big10.json")
    if args.big or args.scaling:
        gen = os.path.join(ROOT, "scripts", "gen_kineto_trace.py")
        ensure(big, lambda: subprocess.run([sys.executable, gen, plain, big], check=True))

    # (label, command, environment, bytes of JSON or of the file, compared with Python)
    json_bytes = 0 if args.no_json else os.path.getsize(plain)
    rows = [] if args.no_json else [
        ("python json.load, 139 MB", python_load(plain), None, json_bytes, True),
        ("warpscope, 139 MB", summary(binary, plain), None, json_bytes, True),
        ("warpscope, 139 MB gzip", summary(binary, packed), None, json_bytes, True),
    ]
    if args.big:
        rows.append(("warpscope, 1.4 GB", summary(binary, big), None, os.path.getsize(big), False))
    if args.others:
        nsys = os.path.join(args.work, "nsys200.sqlite")
        nvprof = os.path.join(args.work, "nvprof500.csv")
        gen_nsys = os.path.join(ROOT, "scripts", "gen_nsys_sqlite.py")
        gen_nvprof = os.path.join(ROOT, "scripts", "gen_nvprof_csv.py")
        distinct = os.path.join(args.work, "nsys200_distinct.sqlite")
        nsys_gb = os.path.join(args.work, "nsys1000.sqlite")
        nvprof_gb = os.path.join(args.work, "nvprof1000.csv")
        # (label, file, the generator's command line)
        others = [("nsys SQLite 200 MB", nsys, [gen_nsys, "--size-mb", "200", nsys]),
                  ("nsys 200 MB, distinct launches", distinct,
                   [gen_nsys, "--size-mb", "200", "--distinct-launches", distinct]),
                  ("nvprof CSV 500 MB", nvprof, [gen_nvprof, nvprof, "500"])]
        if args.gb:
            others += [("nsys SQLite 1 GB", nsys_gb, [gen_nsys, "--size-mb", "1000", nsys_gb]),
                       ("nvprof CSV 1 GB", nvprof_gb, [gen_nvprof, nvprof_gb, "1000"])]
        for label, path, gen in others:
            ensure(path, lambda: subprocess.run([sys.executable, *gen], check=True))
            rows.append((f"warpscope, {label}", summary(binary, path), None,
                         os.path.getsize(path), False))

    if args.amd:
        gen_nsys = os.path.join(ROOT, "scripts", "gen_nsys_sqlite.py")
        gen_rocpd = os.path.join(ROOT, "scripts", "gen_rocpd_sqlite.py")
        nsys_gb = os.path.join(args.work, "nsys1000.sqlite")
        rocpd_gb = os.path.join(args.work, "rocpd1000_results.db")
        for label, path, gen in [
                ("nsys SQLite 1 GB (yardstick)", nsys_gb, [gen_nsys, "--size-mb", "1000", nsys_gb]),
                ("rocpd SQLite 1 GB", rocpd_gb, [gen_rocpd, "--size-mb", "1000", rocpd_gb])]:
            ensure(path, lambda: subprocess.run([sys.executable, *gen], check=True))
            rows.append((f"warpscope, {label}", summary(binary, path), None,
                         os.path.getsize(path), False))

    print(f"{os.cpu_count()} cores; medians of {args.runs} interleaved runs", flush=True)
    med = median_rows(rows, args.runs)
    yard = med["python json.load, 139 MB"][0] if not args.no_json else 1.0
    print(f"{'':34} {'wall s':>7} {'CPU s':>7} {'peak MB':>8} {'MB/s':>7} {'peak/file':>9} {'vs Python':>9}")
    for label, _, _, size, compared in rows:
        wall, cpu, peak = med[label]
        mb = size / 1e6
        versus = f"{yard / wall:8.1f}x" if compared else ""
        print(f"{label:34} {wall:7.3f} {cpu:7.3f} {peak:8.0f} {mb / wall:7.0f} "
              f"{peak / mb:9.2f} {versus:>9}")
    plain, packed = med.get("warpscope, 139 MB"), med.get("warpscope, 139 MB gzip")
    if plain and packed:
        print(f"gzip input at {plain[0] / packed[0]:.0%} of the plain file's speed (wall)")

    if args.scaling:
        cores = [c for c in (1, 2, 4, 8, 16, 32, 64) if c <= (os.cpu_count() or 1)]
        srows = []
        for c in cores:
            env = dict(os.environ, WARPSCOPE_THREADS=str(c))
            taskset = ["taskset", "-c", f"0-{c - 1}"]
            srows.append((f"{c} cores", taskset + summary(binary, big), env))
        smed = median_rows(srows, max(3, args.runs // 2))
        gb = os.path.getsize(big) / 1e9
        print(f"\n1.4 GB trace by cores (taskset, WARPSCOPE_THREADS)")
        print(f"{'cores':>5} {'wall s':>7} {'CPU s':>7} {'GB/s':>6}")
        for c, (label, *_) in zip(cores, srows):
            wall, cpu, _ = smed[label]
            print(f"{c:5} {wall:7.3f} {cpu:7.3f} {gb / wall:6.2f}")


if __name__ == "__main__":
    main()
