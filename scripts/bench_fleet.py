#!/usr/bin/env python3
"""Time opening a job of many ranks against opening one rank, and the scaling with cores.

    python3 scripts/bench_fleet.py --bin target/release/warpscope --work /tmp/fleetbench \\
        [--ranks 64] [--mb 20] [--runs 5] [--cores 1,2,4,8,16]

1. Writes WORK/job/ (RANKS ranks of about MB MB each, scripts/gen_ranks.py --target-mb) and
   WORK/one/ (rank 0's file alone), unless they are there already.
2. Runs `BIN fleet DIR --format json` (every rank read, parsed and analysed; stdout discarded)
   on WORK/one and WORK/job, interleaved, RUNS times each, whole process under /usr/bin/time;
   prints the medians of wall time and peak RSS, and the ratio job / one.
3. For each core count C of --cores (up to the machine's): the same on WORK/job pinned to cores
   0..C-1 with `taskset` and WARPSCOPE_THREADS=C (how warpscope picks its thread count,
   crates/warpscope-core/src/parallel.rs); prints `C cores -> seconds`.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def timed(cmd, env=None):
    """(wall seconds, peak RSS MB) of one whole-process run: /usr/bin/time where it is
    installed, else the same figures from os.wait4 (wall clock around the child, its rusage)."""
    if os.path.exists("/usr/bin/time"):
        out = subprocess.run(["/usr/bin/time", "-f", "%e %M", *cmd], env=env, check=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall, rss_kb = out.stderr.strip().splitlines()[-1].split()
        return float(wall), int(rss_kb) / 1024
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{cmd} failed with status {status}")
    return wall, usage.ru_maxrss / 1024


def prepare(work, ranks, mb):
    job, one = os.path.join(work, "job"), os.path.join(work, "one")
    have = len([f for f in os.listdir(job)]) if os.path.isdir(job) else 0
    if have != ranks:
        shutil.rmtree(job, ignore_errors=True)
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run([sys.executable, os.path.join(here, "gen_ranks.py"), job,
                        "--ranks", str(ranks), "--target-mb", str(mb)],
                       check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(one, ignore_errors=True)
    os.makedirs(one)
    first = sorted(os.listdir(job))[0]
    shutil.copy(os.path.join(job, first), os.path.join(one, first))
    size = sum(os.path.getsize(os.path.join(job, f)) for f in os.listdir(job))
    return job, one, size


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--mb", type=float, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cores", default="1,2,4,8,16")
    args = ap.parse_args()

    job, one, size = prepare(args.work, args.ranks, args.mb)
    ncpu = os.cpu_count() or 1
    print(f"{args.ranks} ranks, {size / 1e6:.0f} MB in all; {ncpu} cores; {args.bin}")
    fleet = lambda d: [args.bin, "fleet", d, "--format", "json"]  # noqa: E731
    t_one, t_job = [], []
    for _ in range(args.runs):
        t_one.append(timed(fleet(one)))
        t_job.append(timed(fleet(job)))
    m_one = statistics.median(w for w, _ in t_one)
    m_job = statistics.median(w for w, _ in t_job)
    r_one = statistics.median(r for _, r in t_one)
    r_job = statistics.median(r for _, r in t_job)
    print(f"one rank:  {m_one:.3f} s, peak RSS {r_one:.0f} MB (median of {args.runs})")
    print(f"{args.ranks} ranks: {m_job:.3f} s, peak RSS {r_job:.0f} MB (median of {args.runs})")
    print(f"ratio {args.ranks} ranks / one: {m_job / m_one:.1f}x the time for {args.ranks}x the data")

    how = "taskset + WARPSCOPE_THREADS" if shutil.which("taskset") else "WARPSCOPE_THREADS only (no taskset)"
    print(f"cores -> seconds (WORK/job, {how}):")
    for c in (int(x) for x in args.cores.split(",")):
        if c > ncpu:
            continue
        env = dict(os.environ, WARPSCOPE_THREADS=str(c))
        pin = ["taskset", "-c", f"0-{c - 1}"] if shutil.which("taskset") else []
        walls = [timed([*pin, *fleet(job)], env=env)[0] for _ in range(args.runs)]
        print(f"  {c:>3} -> {statistics.median(walls):.3f}")


if __name__ == "__main__":
    main()
