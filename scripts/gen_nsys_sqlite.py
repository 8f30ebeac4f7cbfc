#!/usr/bin/env python3
"""Writes a synthetic Nsight Systems SQLite export (schema 3.24-style) for import benchmarks.

The layout follows docs/formats.md section 5: CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY /
_MEMSET / _RUNTIME / _SYNCHRONIZATION, NVTX_EVENTS, StringIds, TARGET_INFO_GPU,
TARGET_INFO_SESSION_START_TIME, PROCESSES, ThreadNames and META_DATA_EXPORT, with no indexes
and rows in no particular time order across tables (as nsys writes them). The workload is a
made-up training loop: several threads launch kernels on several streams of two GPUs, with
copies, sets, synchronisation and NVTX ranges around every step.

    python3 scripts/gen_nsys_sqlite.py --size-mb 200 /tmp/synthetic_nsys.sqlite

The file is written under the given path (never commit it). Stops once the database reaches
roughly --size-mb.
"""

import argparse
import os
import random
import sqlite3
import sys

SCHEMA = """
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
    busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER,
    memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT,
    luid INTEGER, chipName TEXT, cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER NOT NULL, pid INTEGER NOT NULL,
    uuid TEXT, numMultiprocessors INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
    shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
    registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
    gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
    blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
    dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
    localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
    graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER,
    qmdPreexitDone INTEGER, qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER,
    clusterY INTEGER, clusterZ INTEGER, clusterSchedulingPolicy INTEGER,
    maxPotentialClusterSize INTEGER, maxActiveClusters INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
    deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,
    srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
    graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER,
    memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, deprecatedSyncType INTEGER,
    syncType INTEGER NOT NULL, eventId INTEGER NOT NULL, eventSyncId INTEGER);
CREATE TABLE NVTX_EVENTS (
    start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
    category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
    textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
    doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL,
    jsonTextId INTEGER, jsonText TEXT);
"""

PID = 43210
THREADS = [PID, PID + 7, PID + 8, PID + 9]
DEVICES = [0, 1]
STREAMS = [7, 13, 14, 15, 16, 17, 18, 19]


def gid(pid, tid=0, vm=1):
    return (vm << 48) | (pid << 24) | tid


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--size-mb", type=float, default=200.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--distinct-launches", action="store_true",
                    help="give every launch its own registers, grid and shared memory (the worst "
                         "case for storage; no real program does this: registers and static "
                         "shared memory belong to the compiled kernel)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if os.path.exists(args.out):
        os.remove(args.out)
    db = sqlite3.connect(args.out)
    db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=4096;")
    db.executescript(SCHEMA)

    strings = {}

    def sid(text):
        if text not in strings:
            strings[text] = len(strings) + 1
        return strings[text]

    api = {n: sid(n) for n in ["cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020",
                               "cudaMemsetAsync_v3020", "cudaStreamSynchronize_v3020",
                               "cudaEventRecord_v3020"]}
    cu_launch = sid("cuLaunchKernel")
    kernels = []
    for i in range(400):
        short = f"kernel_{i}"
        dem = (f"void at::native::{short}<float, {i % 7}, {i % 3 == 0}>"
               f"(at::TensorIteratorBase &, const float *, float *, int)")
        mangled = f"_ZN2at6native{len(short)}{short}IfLi{i % 7}ELb{int(i % 3 == 0)}EEvRNS_18TensorIteratorBaseEPKfPfi"
        # Registers and static shared memory are properties of the compiled kernel; its grid
        # follows the tensor shapes, a few per kernel in a training loop.
        registers = 16 + (i * 37) % 239
        static_smem = (i * 997) % 48_000 // 16 * 16
        grids = [1 + (i * 131 + j * 1021) % 4096 for j in range(4)]
        kernels.append((sid(dem), sid(short), sid(mangled), registers, static_smem, grids))
    step_names = [sid(f"step {i}") for i in range(1000)]
    layer_names = [sid(f"layer{i}.forward") for i in range(64)]

    db.executemany("INSERT INTO META_DATA_EXPORT VALUES (?, ?)", [
        ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
        ("EXPORT_PRODUCT_VERSION", "2025.5.2.266"),
        ("EXPORT_SCHEMA_VERSION", "3.24.0"),
        ("EXPORT_TIME_UTC", "2026-01-01T00:00:00"),
        ("EXPORT_PARAM_INPUT_FILE", "synthetic.nsys-rep"),
    ])
    db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES "
               "(1767225600000000000, '2026-01-01T00:00:00', '2026-01-01T00:00:00')")
    for d in DEVICES:
        db.execute("INSERT INTO TARGET_INFO_GPU VALUES (?, ?, 'NVIDIA H100 80GB HBM3', ?, 1, "
                   "52428800, 85045379072, 3352320000000, 1980000000, 132, ?, ?, 0, 'GH100', ?, "
                   "9, 0)", (1 << 48, d, f"0000:{d + 1:02x}:00.0", d, f"GPU-{d}", d))
        db.execute("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (?, ?, ?, ?, 132)",
                   (d, d, PID, f"GPU-{d}"))
    procs = [(gid(p), p, f"proc{p}") for p in range(1000, 1400)] + [(gid(PID), PID, "python")]
    db.executemany("INSERT INTO PROCESSES VALUES (?, ?, ?)", procs)
    db.executemany("INSERT INTO ThreadNames VALUES (?, 20, ?)",
                   [(sid("python" if t == PID else f"pt_worker_{t}"), gid(PID, t))
                    for t in THREADS])

    target = args.size_mb * 1e6
    t = 1_000_000_000
    corr = 0
    step = 0
    batch = {k: [] for k in ["k", "m", "s", "r", "y", "n"]}

    def flush():
        db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + ",".join("?" * 38) + ")",
                       batch["k"])
        db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (" + ",".join("?" * 21) + ")",
                       batch["m"])
        db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (" + ",".join("?" * 11) + ")",
                       batch["s"])
        db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)",
                       batch["r"])
        db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES "
                       "(?,?,?,?,?,?,?,?,?,?,?,?)", batch["y"])
        db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, "
                       "color, domainId) VALUES (?,?,?,?,?,?,?)", batch["n"])
        for v in batch.values():
            v.clear()
        db.commit()

    gpid = gid(PID)
    while True:
        step += 1
        step_start = t
        tid = THREADS[step % len(THREADS)]
        gtid = gid(PID, tid)
        for layer in range(64):
            layer_start = t
            for _ in range(8):
                corr += 1
                dev = DEVICES[rng.randrange(len(DEVICES))]
                stream = STREAMS[rng.randrange(len(STREAMS))]
                r = rng.random()
                dur_api = rng.randrange(2_000, 9_000)
                if r < 0.88:
                    driver = rng.random() < 0.1
                    batch["r"].append((t, t + dur_api, 1 if driver else 0, gtid, corr,
                                       cu_launch if driver else api["cudaLaunchKernel_v7000"],
                                       0, None))
                    dem, short, mangled, registers, static_smem, grids = \
                        kernels[rng.randrange(len(kernels))]
                    grid = grids[rng.randrange(len(grids))]
                    if args.distinct_launches:
                        registers = rng.randrange(16, 255)
                        grid = rng.randrange(1, 4096)
                        static_smem = rng.randrange(0, 48_000)
                    ks = t + rng.randrange(5_000, 50_000)
                    kd = rng.randrange(1_000, 400_000)
                    batch["k"].append((ks, ks + kd, dev, 1, None, stream, corr, gpid, dem, short,
                                       mangled, 1, 0, registers,
                                       grid, 1, 1, 256, 1, 1,
                                       static_smem, 0, 0, 0, corr, 0, None, 0,
                                       None, None, None, None, 0, 0, 0, 0, 0, 0))
                elif r < 0.96:
                    batch["r"].append((t, t + dur_api, 0, gtid, corr,
                                       api["cudaMemcpyAsync_v3020"], 0, None))
                    ms = t + rng.randrange(5_000, 50_000)
                    kind = rng.choice([1, 2, 8])
                    src, dst = {1: (1, 2), 2: (2, 1), 8: (2, 2)}[kind]
                    batch["m"].append((ms, ms + rng.randrange(1_000, 200_000), dev, 1, None,
                                       stream, corr, gpid, rng.randrange(4, 1 << 24), kind, None,
                                       src, dst, dev, 1, dev, 1, 0, None, None, 1))
                elif r < 0.98:
                    batch["r"].append((t, t + dur_api, 0, gtid, corr,
                                       api["cudaMemsetAsync_v3020"], 0, None))
                    ms = t + rng.randrange(5_000, 50_000)
                    batch["s"].append((ms, ms + rng.randrange(1_000, 20_000), dev, 1, stream,
                                       corr, gpid, 0, rng.randrange(4, 1 << 20), None, 2))
                else:
                    se = t + rng.randrange(10_000, 500_000)
                    batch["r"].append((t, se, 0, gtid, corr,
                                       api["cudaStreamSynchronize_v3020"], 0, None))
                    batch["y"].append((t + 1_000, se - 500, dev, 1, None, stream, corr, gpid,
                                       None, 3, 4294967295, None))
                t += dur_api + rng.randrange(100, 3_000)
            batch["n"].append((layer_start, t, 59, layer_names[layer], gtid, -10496, 0))
        batch["n"].append((step_start, t, 59, step_names[step % len(step_names)], gtid, -2987746,
                           0))
        t += rng.randrange(10_000, 100_000)
        if step % 50 == 0:
            flush()
            size = os.path.getsize(args.out)
            if size >= target:
                break
    flush()
    db.executemany("INSERT INTO StringIds VALUES (?, ?)",
                   [(i, s) for s, i in strings.items()])
    db.commit()
    db.close()
    size = os.path.getsize(args.out)
    print(f"{args.out}: {size / 1e6:.1f} MB, {step} steps, {corr} correlation ids",
          file=sys.stderr)


if __name__ == "__main__":
    main()
