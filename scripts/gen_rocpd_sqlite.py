#!/usr/bin/env python3
"""Writes a synthetic rocprofv3 database (rocpd schema 3) for import benchmarks and tests.

The layout follows docs/formats.md section 13.1: one session whose tables carry its GUID as a
suffix (rocpd_metadata_<uuid>, rocpd_string_<uuid>, rocpd_info_agent_<uuid>, ...,
rocpd_kernel_dispatch_<uuid>, rocpd_memory_copy_<uuid>, rocpd_region_<uuid>, rocpd_event_<uuid>,
rocpd_memory_allocate_<uuid>, rocpd_sample_<uuid>, rocpd_track_<uuid>), every row with the
session's `guid` text and `extdata` JSON as rocprofv3 writes them, plain-named views over the
tables, and no indexes. The workload is a made-up training loop on two MI300X GPUs: each step,
threads launch kernels through hipLaunchKernel (with the __hipPushCallConfiguration /
__hipPopCallConfiguration pair and hipPeekAtLastError around it, as HIP does), copy with
hipMemcpyAsync, and mark the step with a ROCTx range; every call's event `stack_id` is its
correlation id, shared with the dispatch or copy it launched.

    python3 scripts/gen_rocpd_sqlite.py --size-mb 1024 /tmp/synthetic_rocpd.db

The file is written under the given path (never commit it). Stops once the database reaches
roughly --size-mb. `--small` writes a few hundred rows (tests).
"""

import argparse
import json
import os
import random
import sqlite3
import sys

UUID = "0000aaaa_1111_7222_8333_444455556666"
GUID = UUID.replace("_", "-")


def table(name):
    return f"{name}_{UUID}"


def schema():
    s = lambda n: table(n)  # noqa: E731
    g = f'"guid" TEXT DEFAULT "{GUID}" NOT NULL'
    ext = '"extdata" JSONB DEFAULT "{}" NOT NULL'
    return f"""
CREATE TABLE "{s('rocpd_metadata')}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "tag" TEXT NOT NULL, "value" TEXT NOT NULL);
CREATE TABLE `{s('rocpd_string')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "string" TEXT NOT NULL UNIQUE ON CONFLICT ABORT);
CREATE TABLE `{s('rocpd_info_node')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "hash" BIGINT NOT NULL UNIQUE, "machine_id" TEXT NOT NULL UNIQUE, "system_name" TEXT,
    "hostname" TEXT, "release" TEXT, "version" TEXT, "hardware_name" TEXT, "domain_name" TEXT);
CREATE TABLE `{s('rocpd_info_process')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL, "init" BIGINT, "fini" BIGINT,
    "start" BIGINT, "end" BIGINT, "command" TEXT, "environment" JSONB DEFAULT "{{}}" NOT NULL,
    {ext});
CREATE TABLE `{s('rocpd_info_thread')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL,
    "name" TEXT, "start" BIGINT, "end" BIGINT, {ext});
CREATE TABLE `{s('rocpd_info_agent')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "type" TEXT CHECK ("type" IN ('CPU', 'GPU')),
    "absolute_index" INTEGER, "logical_index" INTEGER, "type_index" INTEGER, "uuid" INTEGER,
    "name" TEXT, "model_name" TEXT, "vendor_name" TEXT, "product_name" TEXT, "user_name" TEXT,
    {ext});
CREATE TABLE `{s('rocpd_info_queue')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT, {ext});
CREATE TABLE `{s('rocpd_info_stream')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT, {ext});
CREATE TABLE `{s('rocpd_info_kernel_symbol')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    {g}, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "code_object_id" INTEGER NOT NULL,
    "kernel_name" TEXT, "display_name" TEXT, "kernel_object" INTEGER,
    "kernarg_segment_size" INTEGER, "kernarg_segment_alignment" INTEGER,
    "group_segment_size" INTEGER, "private_segment_size" INTEGER, "sgpr_count" INTEGER,
    "arch_vgpr_count" INTEGER, "accum_vgpr_count" INTEGER, {ext});
CREATE TABLE `{s('rocpd_track')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "nid" INTEGER NOT NULL, "pid" INTEGER, "tid" INTEGER, "name_id" INTEGER, {ext});
CREATE TABLE `{s('rocpd_event')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "category_id" INTEGER, "stack_id" INTEGER, "parent_stack_id" INTEGER,
    "correlation_id" INTEGER, "call_stack" JSONB DEFAULT "{{}}" NOT NULL,
    "line_info" JSONB DEFAULT "{{}}" NOT NULL, {ext});
CREATE TABLE `{s('rocpd_region')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL,
    "start" BIGINT NOT NULL, "end" BIGINT NOT NULL, "name_id" INTEGER NOT NULL,
    "event_id" INTEGER, {ext});
CREATE TABLE `{s('rocpd_sample')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "track_id" INTEGER NOT NULL, "timestamp" BIGINT NOT NULL, "event_id" INTEGER, {ext});
CREATE TABLE `{s('rocpd_kernel_dispatch')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    {g}, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER,
    "agent_id" INTEGER NOT NULL, "kernel_id" INTEGER NOT NULL, "dispatch_id" INTEGER NOT NULL,
    "queue_id" INTEGER NOT NULL, "stream_id" INTEGER NOT NULL, "start" BIGINT NOT NULL,
    "end" BIGINT NOT NULL, "private_segment_size" INTEGER, "group_segment_size" INTEGER,
    "workgroup_size_x" INTEGER NOT NULL, "workgroup_size_y" INTEGER NOT NULL,
    "workgroup_size_z" INTEGER NOT NULL, "grid_size_x" INTEGER NOT NULL,
    "grid_size_y" INTEGER NOT NULL, "grid_size_z" INTEGER NOT NULL, "region_name_id" INTEGER,
    "event_id" INTEGER, {ext});
CREATE TABLE `{s('rocpd_memory_copy')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {g},
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER, "start" BIGINT NOT NULL,
    "end" BIGINT NOT NULL, "name_id" INTEGER NOT NULL, "dst_agent_id" INTEGER,
    "dst_address" INTEGER, "src_agent_id" INTEGER, "src_address" INTEGER,
    "size" INTEGER NOT NULL, "queue_id" INTEGER, "stream_id" INTEGER, "region_name_id" INTEGER,
    "event_id" INTEGER, {ext});
CREATE TABLE `{s('rocpd_memory_allocate')}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    {g}, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER, "agent_id" INTEGER,
    "type" TEXT CHECK ("type" IN ('ALLOC', 'FREE', 'REALLOC', 'RECLAIM')),
    "level" TEXT CHECK ("level" IN ('REAL', 'VIRTUAL', 'SCRATCH')), "start" BIGINT NOT NULL,
    "end" BIGINT NOT NULL, "address" INTEGER, "size" INTEGER NOT NULL, "queue_id" INTEGER,
    "stream_id" INTEGER, "event_id" INTEGER, {ext});
"""


VIEWS = [
    "rocpd_metadata", "rocpd_string", "rocpd_info_agent", "rocpd_info_process",
    "rocpd_info_thread", "rocpd_info_queue", "rocpd_info_stream", "rocpd_info_kernel_symbol",
    "rocpd_event", "rocpd_region", "rocpd_sample", "rocpd_track", "rocpd_kernel_dispatch",
    "rocpd_memory_copy", "rocpd_memory_allocate",
]

NODE = 1966562287
PID = 4242
THREADS = [PID, PID + 1, PID + 2]
# Agents: two CPUs, then two GPUs (HSA agent indices, CPUs first).
GPUS = [2, 3]
STREAMS = {0: "Default Stream", 1: "Stream 0", 2: "Stream 1"}
QUEUES = {0: "Default Queue", 16: "Queue 0", 17: "Queue 1", 18: "Queue 2"}

KERNELS = [
    # (display name, vgprs, agprs, sgprs, lds, workgroup, grid work-items)
    ("Cijk_Alik_Bljk_BBS_BH_MT256x256x64_MI16x16x16x1_SN_ISA942", 128, 128, 96, 65536, 256, 262144),
    ("Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_SN_ISA942", 96, 64, 80, 32768, 256, 131072),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 16, 0, 32, 0, 256, 1048576),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", 40, 0, 48, 4096, 512, 524288),
    ("void ck_tile::kentry<1, ck_tile::BatchedGemmKernel<ck_tile::TileGemmShape<>>>", 128, 256, 96, 65536, 256, 65536),
    ("my_layernorm_kernel(float*, float const*, int)", 168, 0, 64, 16384, 1024, 1048576),
    ("__amd_rocclr_fillBufferAligned", 12, 4, 32, 0, 256, 77824),
    ("void rocprim::detail::block_reduce_kernel<true, int>", 24, 0, 40, 2048, 256, 65536),
]


def agent_extdata(gpu):
    if not gpu:
        return json.dumps({"cu_count": 112, "wave_front_size": 0, "name": "Xeon"})
    return json.dumps({
        "cu_count": 304, "wave_front_size": 64, "simd_per_cu": 4, "max_waves_per_simd": 8,
        "lds_size_in_kb": 64, "num_xcc": 8, "max_engine_clk_fcompute": 2100,
        "gfx_target_version": 90402, "name": "gfx942", "vendor_name": "AMD",
        "product_name": "AMD Instinct MI300X",
        "mem_banks": [{"heap_type": 1, "size_in_bytes": 206141652992}],
    })


class Writer:
    def __init__(self, conn):
        self.conn = conn
        self.strings = {}
        self.event_id = 0
        self.rows = {k: [] for k in ("event", "region", "dispatch", "copy", "alloc", "sample")}

    def string(self, s):
        if s not in self.strings:
            self.strings[s] = len(self.strings) + 1
        return self.strings[s]

    def event(self, category, stack_id, parent, extdata="{}"):
        self.event_id += 1
        self.rows["event"].append(
            (self.event_id, GUID, self.string(category), stack_id, parent, 0, extdata))
        return self.event_id

    def flush(self):
        c = self.conn
        c.executemany(
            f"INSERT INTO {table('rocpd_event')} (id, guid, category_id, stack_id, "
            "parent_stack_id, correlation_id, extdata) VALUES (?,?,?,?,?,?,?)",
            self.rows["event"])
        c.executemany(
            f"INSERT INTO {table('rocpd_region')} (id, guid, nid, pid, tid, start, end, name_id, "
            "event_id) VALUES (?,?,?,?,?,?,?,?,?)", self.rows["region"])
        c.executemany(
            f"INSERT INTO {table('rocpd_kernel_dispatch')} (guid, nid, pid, tid, agent_id, "
            "kernel_id, dispatch_id, queue_id, stream_id, start, end, private_segment_size, "
            "group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z, "
            "grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", self.rows["dispatch"])
        c.executemany(
            f"INSERT INTO {table('rocpd_memory_copy')} (guid, nid, pid, tid, start, end, name_id, "
            "dst_agent_id, dst_address, src_agent_id, src_address, size, queue_id, stream_id, "
            "region_name_id, event_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            self.rows["copy"])
        c.executemany(
            f"INSERT INTO {table('rocpd_memory_allocate')} (guid, nid, pid, tid, agent_id, type, "
            "level, start, end, address, size, queue_id, stream_id, event_id) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", self.rows["alloc"])
        c.executemany(
            f"INSERT INTO {table('rocpd_sample')} (guid, track_id, timestamp, event_id) "
            "VALUES (?,?,?,?)", self.rows["sample"])
        for k in self.rows:
            self.rows[k] = []


def write_static(conn, w):
    c = conn
    c.executemany(f"INSERT INTO {table('rocpd_metadata')} (tag, value) VALUES (?, ?)",
                  [("schema_version", "3"), ("uuid", "_" + UUID), ("guid", GUID)])
    c.execute(f"INSERT INTO {table('rocpd_info_node')} (id, guid, hash, machine_id, system_name, "
              "hostname) VALUES (?,?,?,?,?,?)", (NODE, GUID, 1234, "synthetic", "Linux", "gen"))
    c.execute(f"INSERT INTO {table('rocpd_info_process')} (id, guid, nid, ppid, pid, command) "
              "VALUES (?,?,?,?,?,?)", (PID, GUID, NODE, 1, PID, "python3 train.py --synthetic"))
    for i, tid in enumerate(THREADS):
        c.execute(f"INSERT INTO {table('rocpd_info_thread')} (id, guid, nid, ppid, pid, tid, name) "
                  "VALUES (?,?,?,?,?,?,?)", (tid, GUID, NODE, 1, PID, tid,
                                             "python3" if i == 0 else f"worker{i}"))
    for idx in range(4):
        gpu = idx in GPUS
        c.execute(
            f"INSERT INTO {table('rocpd_info_agent')} (id, guid, nid, pid, type, absolute_index, "
            "logical_index, type_index, uuid, name, model_name, vendor_name, product_name, "
            "user_name, extdata) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (idx, GUID, NODE, PID, "GPU" if gpu else "CPU", idx, idx, idx - 2 if gpu else idx,
             0, "gfx942" if gpu else "Xeon", "ip discovery" if gpu else "",
             "AMD" if gpu else "CPU", "AMD Instinct MI300X" if gpu else "Xeon",
             "AMD Instinct MI300X" if gpu else "Xeon", agent_extdata(gpu)))
    for qid, name in QUEUES.items():
        c.execute(f"INSERT INTO {table('rocpd_info_queue')} (id, guid, nid, pid, name) "
                  "VALUES (?,?,?,?,?)", (qid, GUID, NODE, PID, name))
    for sid, name in STREAMS.items():
        c.execute(f"INSERT INTO {table('rocpd_info_stream')} (id, guid, nid, pid, name) "
                  "VALUES (?,?,?,?,?)", (sid, GUID, NODE, PID, name))
    for kid, (name, vgpr, agpr, sgpr, lds, _, _) in enumerate(KERNELS, start=1):
        c.execute(
            f"INSERT INTO {table('rocpd_info_kernel_symbol')} (id, guid, nid, pid, code_object_id, "
            "kernel_name, display_name, kernel_object, kernarg_segment_size, "
            "kernarg_segment_alignment, group_segment_size, private_segment_size, sgpr_count, "
            "arch_vgpr_count, accum_vgpr_count) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (kid, GUID, NODE, PID, 1, f"_Z{len(name)}kernel{kid}.kd", name, 1000 + kid, 64, 16,
             lds, 0, sgpr, vgpr, agpr))
    # The sample track of zero-length HIP calls (rocprofv3 names it after the category).
    c.execute(f"INSERT INTO {table('rocpd_track')} (id, guid, nid, pid, tid, name_id) "
              "VALUES (?,?,?,?,?,?)", (1, GUID, NODE, PID, THREADS[0], w.string("HIP_RUNTIME_API_EXT")))
    for v in VIEWS:
        c.execute(f"CREATE VIEW `{v}` AS SELECT * FROM `{table(v)}`")


def generate(path, size_mb, small, seed):
    random.seed(seed)
    if os.path.exists(path):
        os.remove(path)
    conn = sqlite3.connect(path)
    conn.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
    conn.executescript(schema())
    w = Writer(conn)
    write_static(conn, w)
    limit = size_mb * 1024 * 1024
    t = 1_071_420_000_000_000
    corr = 0
    region_id = 0
    dispatch_id = 0
    gpu_free = {g: t for g in GPUS}
    step = 0
    live = []
    while True:
        step += 1
        tid = THREADS[step % len(THREADS)]
        gpu = GPUS[step % len(GPUS)]
        stream = 1 + step % 2
        queue = 16 + step % 3
        step_start = t
        # A ROCTx range around the step (the message in its event's extdata).
        corr += 1
        region_id += 1
        step_region = (region_id, corr)
        launches = 4 if small else 40
        for i in range(launches):
            kid = 1 + random.randrange(len(KERNELS))
            _, _, _, _, lds, wg, grid = KERNELS[kid - 1]
            for call, dur in (("__hipPushCallConfiguration", 900), ("__hipPopCallConfiguration", 700)):
                corr += 1
                region_id += 1
                ev = w.event("HIP_COMPILER_API_EXT", corr, 0)
                w.rows["region"].append((region_id, GUID, NODE, PID, tid, t, t + dur,
                                         w.string(call), ev))
                t += dur + 300
            corr += 1
            region_id += 1
            launch_corr = corr
            dur = random.randint(4000, 9000)
            ev = w.event("HIP_RUNTIME_API_EXT", corr, 0)
            w.rows["region"].append((region_id, GUID, NODE, PID, tid, t, t + dur,
                                     w.string("hipLaunchKernel"), ev))
            start = max(t + dur + 2000, gpu_free[gpu])
            kdur = random.randint(5_000, 80_000)
            dispatch_id += 1
            ev = w.event("KERNEL_DISPATCH", launch_corr, launch_corr)
            w.rows["dispatch"].append((GUID, NODE, PID, tid, gpu, kid, dispatch_id, queue, stream,
                                       start, start + kdur, 0, lds, wg, 1, 1, grid, 1, 1,
                                       w.string(""), ev))
            gpu_free[gpu] = start + kdur + random.randint(500, 3000)
            t += dur + 400
            corr += 1
            region_id += 1
            ev = w.event("HIP_RUNTIME_API_EXT", corr, 0)
            w.rows["region"].append((region_id, GUID, NODE, PID, tid, t, t + 60,
                                     w.string("hipPeekAtLastError"), ev))
            t += 500
            if i % 10 == 0:
                corr += 1
                region_id += 1
                nbytes = random.choice([4096, 1 << 20, 16 << 20])
                dur = random.randint(3000, 6000)
                ev = w.event("HIP_RUNTIME_API_EXT", corr, 0)
                w.rows["region"].append((region_id, GUID, NODE, PID, tid, t, t + dur,
                                         w.string("hipMemcpyAsync"), ev))
                start = max(t + dur, gpu_free[gpu])
                cdur = 2000 + nbytes // 50_000
                h2d = random.random() < 0.6
                name = "MEMORY_COPY_HOST_TO_DEVICE" if h2d else "MEMORY_COPY_DEVICE_TO_HOST"
                ev = w.event("MEMORY_COPY", corr, corr)
                src, dst = (0, gpu) if h2d else (gpu, 0)
                w.rows["copy"].append((GUID, NODE, PID, tid, start, start + cdur, w.string(name),
                                       dst, 0x7f0000000000, src, 0x7e0000000000, nbytes, None,
                                       stream, None, ev))
                gpu_free[gpu] = start + cdur
                t += dur + 300
            if i % 20 == 0:
                # A zero-length call: a sample on the HIP track.
                corr += 1
                ev = w.event("HIP_RUNTIME_API_EXT", corr, 0)
                w.rows["sample"].append((GUID, 1, t, ev))
        if step % 50 == 1 or small:
            corr += 1
            ev = w.event("MEMORY_ALLOCATION", corr, 0)
            addr = 0x7f1000000000 + step * 0x100000
            size = random.choice([2 << 20, 64 << 20])
            w.rows["alloc"].append((GUID, NODE, PID, tid, gpu, "ALLOC", "REAL", t, t + 5000, addr,
                                    size, None, None, ev))
            live.append((addr, gpu))
            if len(live) > 4:
                addr, gpu_old = live.pop(0)
                corr += 1
                ev = w.event("MEMORY_ALLOCATION", corr, 0)
                w.rows["alloc"].append((GUID, NODE, PID, tid, None, "FREE", "REAL", t + 6000,
                                        t + 9000, addr, 0, None, None, ev))
        region_id_step, corr_step = step_region
        ev = w.event("MARKER_CORE_RANGE_API", corr_step, 0,
                     json.dumps({"message": f"step {step}"}))
        w.rows["region"].append((region_id_step, GUID, NODE, PID, tid, step_start, t,
                                 w.string("roctxRangePushA"), ev))
        t += random.randint(10_000, 50_000)
        if step % 20 == 0 or small:
            w.flush()
            conn.commit()
            if small or os.path.getsize(path) >= limit:
                break
    w.flush()
    conn.executemany(f"INSERT INTO {table('rocpd_string')} (id, guid, string) VALUES (?,?,?)",
                     [(i, GUID, s) for s, i in w.strings.items()])
    conn.commit()
    conn.close()
    return dispatch_id, region_id


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--small", action="store_true", help="a few hundred rows, for tests")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    dispatches, regions = generate(args.path, args.size_mb, args.small, args.seed)
    print(f"{args.path}: {os.path.getsize(args.path) / 1e6:.1f} MB, {dispatches} dispatches, "
          f"{regions} regions", file=sys.stderr)


if __name__ == "__main__":
    main()
