#!/usr/bin/env python3
"""Writes the hand-written regression inputs into fuzz/regressions/<target>/.

    python3 fuzz/handwritten.py

Every file here is written from scratch (JSON, CSV and SQL typed below, SQLite databases built
with hand-written schemas), never cut from a sample, so all of them may be committed. They are
replayed by crates/warpscope-core/tests/fuzz_regressions.rs and copied into the fuzzing corpus
by scripts/fuzz.sh. Minimised fuzzer crashes are added to the same directories by fuzz.sh (with
other names); this script only (re)writes its own files, named `hw_*`. A name `hw_err_*` must
end in an error, `hw_warn_*` in an error or a load with a warning (see the test).

The chrome_json target reads its first byte as the block size (fuzz/src/replay.rs): b"\\xff" is
256-byte blocks, b"\\x00" one-byte blocks.
"""

import gzip
import os
import pickle
import sqlite3
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fuzz" / "regressions"
I64_MAX = 2**63 - 1
I64_MIN = -(2**63)


def put(target, name, data):
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"hw_{name}").write_bytes(data)


KERNEL = (
    '{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%s,"dur":%s,'
    '"args":{"device":0,"stream":7,"correlation":1}}'
)


def trace(*events, meta=""):
    return ('{%s"traceEvents":[%s]}' % (meta, ",".join(events))).encode()


def chrome():
    ok = trace(KERNEL % ("1.5", "2"), '{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":3}')
    # A trace cut inside its first event (issue 11: loaded as an empty profile).
    put("chrome_json", "err_cut_inside_first_event", b"\xff" + ok[: ok.index(b'"dur"') + 3])
    # The same trace read one byte per block: every token crosses a block boundary.
    put("chrome_json", "one_byte_blocks", b"\x00" + ok)
    put("chrome_json", "warn_huge_numbers", b"\xff" + trace(KERNEL % ("1e300", "1e300")))
    put("chrome_json", "warn_i64_extreme_ts", b"\x10" + trace(
        KERNEL % (str(I64_MAX), str(I64_MAX)),
        KERNEL % (str(I64_MIN), "1"),
        KERNEL % ("-9223372036854775.808", "9223372036854775.807"),
    ))
    put("chrome_json", "warn_negative_dur", b"\xff" + trace(KERNEL % ("10", "-5")))
    put("chrome_json", "deep_nesting", b"\xff" + trace(
        '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":%s}' % ("[" * 3000 + "]" * 3000)))
    put("chrome_json", "err_deep_nesting_unclosed", b"\x3f" + b'{"traceEvents":' + b"[" * 5000)
    keys = "".join('"k%d":%d,' % (i, i) for i in range(300))
    put("chrome_json", "many_top_level_keys", b"\x20" + trace(KERNEL % ("1", "1"), meta=keys))
    put("chrome_json", "warn_base_time_extreme", b"\xff" + trace(
        KERNEL % ("1", "1"), meta='"baseTimeNanoseconds":%d,' % I64_MAX))
    # Flow events far from the origin: the builder rebases flow times by plain subtraction.
    put("chrome_json", "warn_flow_extreme_ts", b"\xff" + trace(
        '{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":-1000,"dur":5}',
        '{"ph":"s","cat":"ac2g","name":"f","id":1,"pid":1,"tid":1,"ts":9223372036854775.807}',
        '{"ph":"f","cat":"ac2g","name":"f","id":1,"pid":1,"tid":1,"ts":-9223372036854775.808,"bp":"e"}',
        KERNEL % ("-999", "1")))
    # Two kernels whose durations fit i64 but whose sum does not (GPU total, per-name stats).
    put("chrome_json", "gpu_total_overflow", b"\xff" + trace(
        KERNEL % ("0", "5000000000000000"), KERNEL % ("1", "5000000000000000")))
    # Two copies whose byte counts fit u64 but whose sum does not (copies_by_kind).
    copy = ('{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,'
            '"tid":7,"ts":%d,"dur":1,"args":{"device":0,"stream":7,"bytes":629141e30056}}')
    put("chrome_json", "copy_bytes_overflow", b"\xff" + trace(copy % 1, copy % 2, copy % 3))
    put("chrome_json", "empty_event_list", b"\xff" + trace())
    # Operator shapes (docs/flops.md): negative, overflowing, fractional and missing sizes,
    # unknown types, a product that overflows u64, nested calls, each launching a kernel.
    def op(name, ts, dims, types, extra=""):
        return ('{"ph":"X","cat":"cpu_op","name":"%s","pid":1,"tid":1,"ts":%d,"dur":8,'
                '"args":{"Input type":%s,"Input Dims":%s%s}}' % (name, ts, types, dims, extra))

    def launch(ts, corr):
        return ('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,'
                '"ts":%d,"dur":1,"args":{"correlation":%d}}' % (ts, corr))

    def kernel(ts, corr):
        return ('{"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16","pid":0,"tid":7,'
                '"ts":%d,"dur":2,"args":{"device":0,"stream":7,"correlation":%d}}' % (ts, corr))

    shapes = [
        ("aten::mm", "[[-3, 4], [4, 5]]", '["float", "float"]'),
        ("aten::mm", "[[%d, 2], [2, 2]]" % I64_MAX, '["float", "float"]'),
        ("aten::bmm", "[[4294967296, 4294967296, 4294967296], [4294967296, 4294967296, 2]]",
         '["c10::BFloat16", "c10::BFloat16"]'),
        ("aten::mm", "[[2, 2], [2, 2]]", '["c10::Mystery", "float"]'),
        ("aten::addmm", "[[1.5, 2], [2], \"x\"]", "7"),
        ("aten::add", "[[2, 2], [3, 3]]", "[]"),
        ("aten::conv2d", "[[1, 3, 8, 8], [4, 3, 3, 3]]", '["float", "float"]',
         ',"Concrete Inputs":["", "", "", "[0, 0]", "[-9, 1]", "[1]", "0"]'),
        ("aten::convolution_backward", "[[1, 4, 6, 6], [1, 3, 8, 8], [4, 3, 3, 3]]",
         '["float", "float", "float"]', ',"Concrete Inputs":["", "", "", "", "", "", "", "[x]"]'),
        ("aten::_scaled_dot_product_flash_attention", "[[2, 2], [2, 2, 2, 2], []]",
         '["c10::Half", "c10::Half", "c10::Half"]'),
        ("aten::linear", "[[]]", '["float"]'),
    ]
    events = []
    for i, shape in enumerate(shapes):
        ts = 100 * (i + 1)
        events += [op(shape[0], ts, *shape[1:]),
                   op("aten::relu_", ts + 1, "[[2, 2]]", '["float"]'),
                   launch(ts + 2, i + 1), kernel(ts + 50, i + 1)]
    put("chrome_json", "warn_flops_hostile_shapes", b"\xff" + trace(*events))
    put("chrome_json", "warn_flops_hostile_shapes_small_blocks", b"\x07" + trace(*events))
    put("chrome_json", "bare_array_cut", b"\x05" + b'[{"ph":"B","name":"x","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"ti')


CSV_HEAD = (
    "==1== NVPROF is profiling process 1, command: ./a\n"
    "==1== Profiling application: ./a\n"
    "==1== Profiling result:\n"
    '"Start","Duration","Device","Context","Stream","Name","Correlation_ID"\n'
    "s,ms,,,,,\n"
)


def csv_row(start, dur, name="k(int)", corr=1):
    return f'{start},{dur},"Dev (0)","1","7","{name}",{corr}\n'


def nvprof():
    put("nvprof_text", "warn_csv_duration_1e300", (CSV_HEAD + csv_row("1.0", "1e300")).encode())
    put("nvprof_text", "warn_csv_i64_extremes", (
        CSV_HEAD + csv_row("9223372036.854775807", "9223372036854.775807")
        + csv_row("-9223372036.854775808", "0.001", corr=2)
        + csv_row("99999999999999999999", "1", corr=3)).encode())
    put("nvprof_text", "warn_csv_negative_duration", (CSV_HEAD + csv_row("1.0", "-0.5")).encode())
    put("nvprof_text", "csv_gpu_total_overflow", (
        CSV_HEAD + csv_row("1.0", "5000000000000", corr=1) + csv_row("2.0", "5000000000000", corr=2)).encode())
    # Summary mode: negative times in the recorded rows (found by the fuzzer as `-06ns`).
    put("nvprof_text", "warn_summary_negative_times", (
        "==1== Profiling result:\n"
        "Time(%)      Time     Calls       Avg       Min       Max  Name\n"
        "100.00%  1.0000us         1  1.0000us    -5ns  1.0000us  k\n\n"
        "==1== API calls:\n"
        "Time(%)      Time     Calls       Avg       Min       Max  Name\n"
        "100.00%  -2.0000us         1  2.0000us    -06ns  2.0000us  cudaMalloc\n").encode())
    put("nvprof_text", "csv_header_only", CSV_HEAD.encode())
    unknown = ",".join(f'"Unknown column {i}"' for i in range(400))
    put("nvprof_text", "csv_many_unknown_columns", (
        "==1== Profiling result:\n" + f'"Start","Duration",{unknown},"Name"\n'
        + "s,ms," + "," * 400 + "\n" + "1.0,0.5," + "," * 400 + '"k"\n').encode())
    put("nvprof_text", "csv_repeated_headers", (
        "==1== Profiling result:\n" + '"Start","Duration","Name"\ns,ms,\n' * 500).encode())
    put("nvprof_text", "text_result_line_only", b"==1== Profiling result:\n")
    put("nvprof_text", "warn_text_trace_extremes", (
        "==1== Profiling result:\n"
        "   Start  Duration  Name\n"
        "9223372036854775807s  9223372036854775807s  k [1]\n"
        "-9223372036854775808s  1.0000us  k [2]\n").encode())
    put("nvprof_text", "warn_text_summary_extremes", (
        "==1== Profiling result:\n"
        "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
        " GPU activities:  100.00%  9223372036854775807s  9223372036854775807  1.0000us  -5.0000us  1e300s  k\n").encode())


def sqlite_db(sql, rows=()):
    """A database built from hand-written SQL, as bytes."""
    fd, path = tempfile.mkstemp(suffix=".sqlite")
    os.close(fd)
    os.unlink(path)
    try:
        c = sqlite3.connect(path)
        c.execute("PRAGMA page_size=512")
        c.executescript(sql)
        for stmt, values in rows:
            c.executemany(stmt, values)
        c.commit()
        c.execute("VACUUM")
        c.close()
        return Path(path).read_bytes()
    finally:
        if os.path.exists(path):
            os.unlink(path)


NVPROF_SCHEMA = """
CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE Version(version INTEGER);
INSERT INTO Version VALUES (12);
INSERT INTO StringTable VALUES (1, 'k(int)'), (2, 'other');
CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,
    contextId INTEGER, streamId INTEGER, name INTEGER, correlationId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end INTEGER, cbid INTEGER,
    processId INTEGER, threadId INTEGER, correlationId INTEGER);
"""


def nvprof_sqlite():
    put("nvprof_sqlite", "sqlite_header_only", b"SQLite format 3\x00" + b"\x02\x00\x01\x01" + b"\x00" * 80)
    put("nvprof_sqlite", "magic_only", b"SQLite format 3\x00")
    put("nvprof_sqlite", "no_tables", sqlite_db("CREATE TABLE t(x); INSERT INTO t VALUES (1);"))
    kernel = "INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL VALUES (?,?,0,1,7,1,?)"
    runtime = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,211,10,11,?)"
    # Issue 11: a start near i64::MIN and an end near i64::MAX overflow `end - start`.
    put("nvprof_sqlite", "warn_i64_extreme_times", sqlite_db(NVPROF_SCHEMA, [
        (kernel, [(I64_MIN + 5, I64_MAX - 5, 1), (1000, 2000, 2)]),
        (runtime, [(I64_MIN, I64_MAX, 1), (900, 950, 2)]),
    ]))
    put("nvprof_sqlite", "warn_reversed_and_huge_times", sqlite_db(NVPROF_SCHEMA, [
        (kernel, [(I64_MAX, I64_MIN, 1), (2000, 1000, 2), (1e300, -1e300, 3)]),
        (runtime, [("text", b"blob", 1)]),
    ]))
    # Two kernels whose durations fit i64 but whose sum does not (analysis/mod.rs gpu_total_ns).
    put("nvprof_sqlite", "gpu_total_overflow", sqlite_db(NVPROF_SCHEMA, [
        (kernel, [(0, 5 * 10**18, 1), (1, 5 * 10**18 + 1, 2)]),
    ]))
    # NVTX-style markers: a start near i64::MIN and its end near i64::MAX (flags 2 and 4).
    obj = (10).to_bytes(4, "little") + (11).to_bytes(4, "little") + bytes(4)
    put("nvprof_sqlite", "warn_marker_extreme_range", sqlite_db(
        NVPROF_SCHEMA + "CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER(flags INTEGER, timestamp INTEGER,"
        " id INTEGER, objectKind INTEGER, objectId BLOB, name INTEGER, domain INTEGER);", [
            ("INSERT INTO CUPTI_ACTIVITY_KIND_MARKER VALUES (?,?,?,2,?,?,0)",
             [(2, I64_MIN, 1, obj, 2), (4, I64_MAX, 1, obj, 0), (1, I64_MAX, 2, obj, 2)]),
            (kernel, [(1000, 2000, 1)]),
        ]))
    put("nvprof_sqlite", "only_strings", sqlite_db(
        "CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY, value TEXT); CREATE TABLE Version(version INTEGER);"))


NSYS_SCHEMA = """
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'k(int)'), (2, 'cudaLaunchKernel_v7000'), (3, 'range');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,
    contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
    demangledName INTEGER, shortName INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end INTEGER, eventClass INTEGER,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
CREATE TABLE NVTX_EVENTS(start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
    globalTid INTEGER, textId INTEGER, domainId INTEGER);
"""


def nsys_sqlite():
    put("nsys_sqlite", "sqlite_header_only", b"SQLite format 3\x00" + b"\x02\x00\x01\x01" + b"\x00" * 80)
    put("nsys_sqlite", "truncated_db", sqlite_db(NSYS_SCHEMA)[:700])
    tid = (1 << 48) | (100 << 24) | 101
    kernel = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,0,1,7,?,?,1,1)"
    runtime = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,2)"
    nvtx = "INSERT INTO NVTX_EVENTS VALUES (?,?,?,NULL,?,3,0)"
    pid = (1 << 48) | (100 << 24)
    put("nsys_sqlite", "warn_i64_extreme_times", sqlite_db(NSYS_SCHEMA, [
        (kernel, [(I64_MIN + 5, I64_MAX - 5, 1, pid), (1000, 2000, 2, pid)]),
        (runtime, [(I64_MIN, I64_MAX, tid, 1), (900, 950, tid, 2)]),
        # NVTX push/pop (59) and start/end (60) ranges across the whole i64 range.
        (nvtx, [(I64_MIN, I64_MAX, 59, tid), (I64_MIN + 1, I64_MAX, 60, tid)]),
    ]))
    put("nsys_sqlite", "warn_nvtx_extreme_instants", sqlite_db(NSYS_SCHEMA, [
        (nvtx, [(I64_MAX, None, 34, tid), (I64_MIN, None, 34, tid), (I64_MAX, I64_MIN, 59, tid)]),
        (kernel, [(10, 20, 1, pid)]),
    ]))
    put("nsys_sqlite", "gpu_total_overflow", sqlite_db(NSYS_SCHEMA, [
        (kernel, [(0, 5 * 10**18, 1, pid), (1, 5 * 10**18 + 1, 2, pid)]),
    ]))
    put("nsys_sqlite", "strings_only", sqlite_db(
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT); CREATE TABLE TARGET_INFO_GPU(x);"))


S = "_0000aaaa_1111"
ROCPD_SCHEMA = f"""
CREATE TABLE rocpd_metadata{S}(id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
INSERT INTO rocpd_metadata{S} VALUES (1, 'schema_version', '3');
CREATE TABLE rocpd_string{S}(id INTEGER PRIMARY KEY, string TEXT);
INSERT INTO rocpd_string{S} VALUES (1, 'HIP_RUNTIME_API_EXT'), (2, 'hipLaunchKernel'),
    (3, 'MEMORY_COPY_HOST_TO_DEVICE'), (4, 'MARKER_CORE_RANGE_API'), (5, 'roctxRangePushA');
CREATE TABLE rocpd_info_agent{S}(id INTEGER PRIMARY KEY, type TEXT, absolute_index INTEGER,
    name TEXT, product_name TEXT, extdata TEXT);
INSERT INTO rocpd_info_agent{S} VALUES (0, 'CPU', 0, 'cpu', 'cpu', '{{}}'),
    (2, 'GPU', 2, 'gfx942', 'AMD Instinct MI300X', '{{"cu_count": 304, "wave_front_size": 64}}');
CREATE TABLE rocpd_info_kernel_symbol{S}(id INTEGER PRIMARY KEY, display_name TEXT,
    kernel_name TEXT, arch_vgpr_count INTEGER, accum_vgpr_count INTEGER, sgpr_count INTEGER,
    group_segment_size INTEGER);
INSERT INTO rocpd_info_kernel_symbol{S} VALUES (1, 'k', 'k.kd', 128, 384, 112, 65536);
CREATE TABLE rocpd_event{S}(id INTEGER PRIMARY KEY, category_id INTEGER, stack_id INTEGER,
    correlation_id INTEGER, extdata TEXT);
CREATE TABLE rocpd_region{S}(id INTEGER PRIMARY KEY, pid INTEGER, tid INTEGER, start INTEGER,
    end INTEGER, name_id INTEGER, event_id INTEGER);
CREATE TABLE rocpd_kernel_dispatch{S}(id INTEGER PRIMARY KEY, agent_id INTEGER,
    kernel_id INTEGER, queue_id INTEGER, stream_id INTEGER, start INTEGER, end INTEGER,
    grid_size_x INTEGER, grid_size_y INTEGER, grid_size_z INTEGER, workgroup_size_x INTEGER,
    workgroup_size_y INTEGER, workgroup_size_z INTEGER, group_segment_size INTEGER,
    event_id INTEGER);
CREATE TABLE rocpd_memory_copy{S}(id INTEGER PRIMARY KEY, start INTEGER, end INTEGER,
    name_id INTEGER, src_agent_id INTEGER, dst_agent_id INTEGER, size INTEGER,
    stream_id INTEGER, event_id INTEGER);
CREATE TABLE rocpd_memory_allocate{S}(id INTEGER PRIMARY KEY, pid INTEGER, tid INTEGER,
    agent_id INTEGER, type TEXT, level TEXT, start INTEGER, end INTEGER, address INTEGER,
    size INTEGER);
"""


def rocpd_sqlite():
    put("rocpd_sqlite", "sqlite_header_only", b"SQLite format 3\x00" + b"\x02\x00\x01\x01" + b"\x00" * 80)
    put("rocpd_sqlite", "truncated_db", sqlite_db(ROCPD_SCHEMA)[:900])
    ev = f"INSERT INTO rocpd_event{S} VALUES (?,?,?,0,?)"
    region = f"INSERT INTO rocpd_region{S} VALUES (?,7,7,?,?,?,?)"
    dispatch = f"INSERT INTO rocpd_kernel_dispatch{S} VALUES (?,2,1,0,0,?,?,?,?,?,?,?,?,?,?)"
    copy = f"INSERT INTO rocpd_memory_copy{S} VALUES (?,?,?,3,0,2,?,0,?)"
    alloc = f"INSERT INTO rocpd_memory_allocate{S} VALUES (?,7,7,?,?,?,?,?,?,?)"
    put("rocpd_sqlite", "warn_i64_extreme_times", sqlite_db(ROCPD_SCHEMA, [
        (ev, [(1, 1, 5, "{}"), (2, 1, I64_MAX, "{}"), (3, 4, 6, '{"message": "step"}')]),
        (region, [(1, I64_MIN, I64_MAX, 2, 1), (2, 100, 200, 2, 2), (3, I64_MAX, I64_MIN, 5, 3)]),
        (dispatch, [(1, I64_MIN + 5, I64_MAX - 5, 1, 1, 1, 256, 1, 1, 0, 1),
                    (2, 300, 400, 2**32, 2**31, 7, 0, 0, 0, 1 << 40, 2)]),
        (copy, [(1, 0, I64_MAX, -5, 1), (2, 500, 400, 2**63 - 1, 2)]),
    ]))
    put("rocpd_sqlite", "gpu_total_overflow", sqlite_db(ROCPD_SCHEMA, [
        (dispatch, [(1, 0, 5 * 10**18, 1, 1, 1, 64, 1, 1, 0, None),
                    (2, 1, 5 * 10**18 + 1, 1, 1, 1, 64, 1, 1, 0, None)]),
    ]))
    # Frees of addresses never allocated, a free without an agent, sizes out of range,
    # unknown types and levels, times at the extremes.
    put("rocpd_sqlite", "warn_memory_oddities", sqlite_db(ROCPD_SCHEMA, [
        (alloc, [(1, 2, "ALLOC", "REAL", 10, 20, 0x1000, 2**62), (2, None, "FREE", "REAL", 30, 40, 0x2000, 0),
                 (3, 2, "ALLOC", "VIRTUAL", 50, 60, 0x3000, 64), (4, 2, "REALLOC", "REAL", 70, 80, 0x1000, 8),
                 (5, 99, "ALLOC", "REAL", 90, 95, 0x4000, 64), (6, 2, "ALLOC", "REAL", I64_MAX, 0, 0x5000, -1),
                 (7, 2, "ALLOC", "REAL", 100, 110, 0x6000, 2**50), (8, None, "FREE", "REAL", 120, 130, 0x6000, 0)]),
    ]))
    # Schema version 3 with no activity table but the metadata: not rocprofv3.
    put("rocpd_sqlite", "err_metadata_only", sqlite_db(
        f"CREATE TABLE rocpd_metadata{S}(id INTEGER PRIMARY KEY, tag TEXT, value TEXT);"
        f"INSERT INTO rocpd_metadata{S} VALUES (1, 'schema_version', '3');"))
    # Agents' properties that are not JSON, or JSON of the wrong shapes.
    put("rocpd_sqlite", "odd_agent_extdata", sqlite_db(ROCPD_SCHEMA + f"""
        INSERT INTO rocpd_info_agent{S} VALUES (3, 'GPU', 3, 'gfx90a', 'x', '{{"cu_count": -1, "mem_banks": 5}}'),
            (4, 'GPU', 4, 'gfx', 'y', '[1, 2'), (5, 'GPU', 4294967296, 'gfx908', NULL, NULL);""", [
        (dispatch, [(1, 10, 20, 64, 1, 1, 64, 1, 1, 0, None)]),
    ]))


RPD_SCHEMA = """
CREATE TABLE rocpd_metadata(id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
INSERT INTO rocpd_metadata VALUES (1, 'schema_version', '2');
CREATE TABLE rocpd_string(id INTEGER PRIMARY KEY, string TEXT);
INSERT INTO rocpd_string VALUES (1, ''), (2, 'hipLaunchKernel'), (3, 'KernelExecution'),
    (4, 'CopyHostToDevice'), (5, 'Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_ISA90a'),
    (6, 'UserMarker');
CREATE TABLE rocpd_op(id INTEGER PRIMARY KEY, gpuId INTEGER, queueId INTEGER, start INTEGER,
    end INTEGER, description_id INTEGER, opType_id INTEGER);
CREATE TABLE rocpd_api(id INTEGER PRIMARY KEY, pid INTEGER, tid INTEGER, start INTEGER,
    end INTEGER, apiName_id INTEGER, args_id INTEGER);
CREATE TABLE rocpd_api_ops(id INTEGER PRIMARY KEY, api_id INTEGER, op_id INTEGER);
CREATE TABLE rocpd_kernelapi(api_ptr_id INTEGER PRIMARY KEY, gridX INTEGER, gridY INTEGER,
    gridZ INTEGER, workgroupX INTEGER, workgroupY INTEGER, workgroupZ INTEGER,
    groupSegmentSize INTEGER, privateSegmentSize INTEGER, codeObject_id INTEGER,
    kernelName_id INTEGER);
CREATE TABLE rocpd_copyapi(api_ptr_id INTEGER PRIMARY KEY, size INTEGER);
"""


def rpd_sqlite():
    put("rpd_sqlite", "truncated_db", sqlite_db(RPD_SCHEMA)[:700])
    op = "INSERT INTO rocpd_op VALUES (?,?,0,?,?,?,?)"
    api = "INSERT INTO rocpd_api VALUES (?,7,7,?,?,?,1)"
    put("rpd_sqlite", "warn_i64_extreme_times", sqlite_db(RPD_SCHEMA, [
        (op, [(1, 2, I64_MIN, I64_MAX, 5, 3), (2, -1, 100, 200, 1, 4), (3, 2**40, 300, 250, 99, 3)]),
        (api, [(1, I64_MIN, I64_MAX, 2), (2, 50, 60, 6)]),
        ("INSERT INTO rocpd_api_ops VALUES (?,?,?)", [(1, 1, 1), (2, 2, 2), (3, 99, 3)]),
        ("INSERT INTO rocpd_kernelapi VALUES (?,?,?,?,?,?,?,?,?,?,?)",
         [(1, 2**32, 1, 1, 0, 1, 1, -1, I64_MAX, 7, 5)]),
        ("INSERT INTO rocpd_copyapi VALUES (?,?)", [(2, -5)]),
    ]))
    put("rpd_sqlite", "gpu_total_overflow", sqlite_db(RPD_SCHEMA, [
        (op, [(1, 2, 0, 5 * 10**18, 5, 3), (2, 2, 1, 5 * 10**18 + 1, 5, 3)]),
    ]))
    # rocprof v1: times of 0, a sizeBytes( that never ends, a KERN without times.
    put("rpd_sqlite", "warn_rocprof_v1", sqlite_db(
        'CREATE TABLE HIP ("BeginNs" INTEGER, "EndNs" INTEGER, pid INTEGER, tid INTEGER, Name TEXT,'
        ' args TEXT, "Index" INTEGER);'
        'CREATE TABLE COPY ("BeginNs" INTEGER, "EndNs" INTEGER, "dev-id" INTEGER, "queue-id" INTEGER,'
        ' Name TEXT, "stream-id" INTEGER, "Index" INTEGER);'
        'CREATE TABLE OPS ("BeginNs" INTEGER, "EndNs" INTEGER, "dev-id" INTEGER, "queue-id" INTEGER,'
        ' Name TEXT, "stream-id" INTEGER, "Index" INTEGER);'
        'CREATE TABLE KERN ("Index" INTEGER, KernelName TEXT);', [
            ('INSERT INTO HIP VALUES (?,?,1,1,?,?,?)', [
                (0, 10, "hipMemcpy", "( sizeBytes(99999999999999999999999", 1),
                (5, I64_MAX, "hipMemcpy", "sizeBytes(12)", 2)]),
            ('INSERT INTO COPY VALUES (?,?,?,0,?,?,?)', [
                (20, 30, 4, "CopyHostToDevice", -1, 1), (40, 0, 2**40, "CopyNowhere", 1, 2)]),
            ('INSERT INTO OPS VALUES (?,?,?,0,?,?,?)', [
                (50, 60, 4, "FillBuffer", 0, 3), (70, 80, -4, "kernel", None, None)]),
        ]))


def detect():
    cut = trace(KERNEL % ("1", "2"))
    cut = cut[: cut.index(b'"dur"') + 2]
    put("detect", "err_cut_chrome.gz", gzip.compress(cut, mtime=0))
    put("detect", "gzip_magic_only", b"\x1f\x8b")
    put("detect", "gzip_truncated", gzip.compress(CSV_HEAD.encode(), mtime=0)[:30])
    put("detect", "bom_brace", b"\xef\xbb\xbf{")
    put("detect", "nvprof_marker_only", b"==1== ")
    put("detect", "ncu_marker", b"==PROF== Connected to process 1\n")
    put("detect", "warn_csv_1e300.gz", gzip.compress((CSV_HEAD + csv_row("1.0", "1e300")).encode(), mtime=0))
    put("detect", "gzip_in_gzip", gzip.compress(gzip.compress(trace(KERNEL % ("1", "2")), mtime=0), mtime=0))
    put("detect", "sqlite_magic.gz", gzip.compress(b"SQLite format 3\x00" + b"\x00" * 84, mtime=0))


def snap(entries, segments=None, annotations=()):
    """A small allocator snapshot dict (torch.cuda.memory._dump_snapshot's shape)."""
    return {
        "segments": segments if segments is not None else [{
            "device": 0, "address": 4096, "total_size": 2 << 20, "allocated_size": 512,
            "stream": 0, "segment_type": "small", "is_expandable": False,
            "blocks": [
                {"address": 4096, "size": 512, "requested_size": 500,
                 "state": "active_allocated", "frames": FRAMES},
                {"address": 4608, "size": (2 << 20) - 512, "requested_size": 0,
                 "state": "inactive", "frames": []},
            ],
        }],
        "device_traces": [entries],
        "allocator_settings": {"max_split_size": -1, "roundup": {"1": 0}},
        "external_annotations": list(annotations),
    }


FRAMES = [{"name": "f", "filename": "a.py", "line": 3}, {"name": "g", "filename": "??", "line": 0}]


def entry(action, addr, size, t, frames=FRAMES):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t,
            "compile_context": "N/A", "user_metadata": "", "frames": frames}


def snapshot():
    t = 1_700_000_000_000_000
    ok = snap([entry("segment_alloc", 4096, 2 << 20, t, []), entry("alloc", 4096, 512, t + 1)],
              annotations=[{"stage": "START", "name": "ProfilerStep#0", "device": 0, "time_us": t},
                           {"stage": "END", "name": "ProfilerStep#0", "device": 0, "time_us": t + 9}])
    put("snapshot", "small_p4", pickle.dumps(ok, protocol=4))
    put("snapshot", "small_p2", pickle.dumps(ok, protocol=2))
    put("snapshot", "small_p5.gz", gzip.compress(pickle.dumps(ok, protocol=5), mtime=0))
    body = pickle.dumps(ok, protocol=4)
    put("snapshot", "err_cut", body[: len(body) // 2])
    put("snapshot", "err_cpu_only", pickle.dumps(snap([], segments=[]), protocol=4))
    put("snapshot", "err_list", pickle.dumps([1, 2, 3], protocol=4))
    # GLOBAL builtins.eval and REDUCE: a pickle that would run code.
    put("snapshot", "err_global_reduce", b"\x80\x02cbuiltins\neval\nX\x01\x00\x00\x001\x85R.")
    put("snapshot", "err_stack_global", b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93.")
    put("snapshot", "err_huge_length", b"\x80\x04\x8d" + b"\xff" * 8 + b".")
    put("snapshot", "err_long4_huge", b"\x80\x04\x8b\xff\xff\xff\x7f.")
    put("snapshot", "err_memo_missing", b"\x80\x04j\xfe\xff\xff\xff.")
    put("snapshot", "err_deep_marks", b"\x80\x04" + b"(" * 5000)
    # Unknown action and state, times going back, an END without START, a cycle in frames.
    cyc = []
    cyc.append(cyc)
    odd = snap([entry("alloc", 4096, 512, t + 5), entry("workspace_snapshot", 0, 0, t + 6),
                entry("free_completed", 4096, 512, t + 1, cyc), 7],
               annotations=[{"stage": "END", "name": "x", "device": 0, "time_us": t}])
    odd["segments"][0]["blocks"][1]["state"] = "weird"
    put("snapshot", "warn_odd_entries", pickle.dumps(odd, protocol=4))
    # One trace list shared by 64 devices: read once.
    shared = [entry("alloc", 4096 + 512 * i, 512, t + i) for i in range(8)]
    put("snapshot", "warn_shared_trace_lists",
        pickle.dumps({"segments": [], "device_traces": [shared] * 64}, protocol=4))
    # Extreme numbers: a 2^64 address, a negative size, time_us near i64::MAX.
    ext = snap([entry("alloc", 2**64 - 1, 2**70, 2**63 - 1), entry("alloc", 1, -5, -(2**63)),
                entry("alloc", 2, 3, t)])
    put("snapshot", "warn_extreme_numbers", pickle.dumps(ext, protocol=4))


V1_HEAD = '"Index","KernelName","gpu-id","queue-id","grd","wgr","lds","scr","arch_vgpr","accum_vgpr","sgpr","wave_size","BeginNs","EndNs","CompleteNs"\n'
V3_KERNELS = '"Kind","Agent_Id","Queue_Id","Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp","Workgroup_Size_X","Grid_Size_X"\n'


def rocm_text():
    """The first byte picks the reader: 0 rocprof v1 CSV, 1 stats, 2 rocprofv3 CSV, 3 rocprof v1
    JSON, 4 RPD JSON."""
    put("rocm_text", "warn_v1_extremes", b"\x00" + (V1_HEAD + (
        f'0,"k.kd",{2**40},-1,{2**33},0,-5,{2**70},x,,1e9,0,{I64_MAX},{I64_MIN},0\n'
        f'1,"k.kd",2,0,7,0,0,0,1,1,1,64,{I64_MIN},{I64_MAX},0\n'
        '2,"",2,0,1,1,0,0,1,1,1,64,1,2,3\n')).encode())
    put("rocm_text", "v1_header_only", b"\x00" + V1_HEAD.encode())
    put("rocm_text", "err_stats_bad_row", b"\x01" + b'"Name","Calls","TotalDurationNs"\n"k",x,1\n')
    put("rocm_text", "warn_stats_extremes", b"\x01" + (
        '"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs"\n'
        f'"hipFree",{I64_MAX},{I64_MAX},1e400,NaN,{I64_MIN},{I64_MAX}\n'
        f'"CopyHostToDevice",1,{I64_MIN},0.5,-1,0,0').encode())
    put("rocm_text", "warn_v3_kernels_extremes", b"\x02" + (V3_KERNELS + (
        f'"KERNEL_DISPATCH","Agent 9",{2**64},"k",0,{I64_MAX},{I64_MIN},0,{2**32}\n'
        '"KERNEL_DISPATCH",1,1,"k",5,10,20,0,0\n'
        '"KERNEL_DISPATCH",1,1,,5,,\n')).encode())
    put("rocm_text", "v3_unknown_table", b"\x02" + b'"Kind","Size","Start_Timestamp","End_Timestamp"\n"ALLOC",5,1,2')
    put("rocm_text", "v3_copies_odd", b"\x02" + (
        '"Kind","Direction","Source_Agent_Id","Destination_Agent_Id","Correlation_Id","Start_Timestamp","End_Timestamp"\n'
        '"MEMORY_COPY","MEMORY_COPY_SIDEWAYS",-1,x,0,5,1\n'
        '"MEMORY_COPY","MEMORY_COPY_DEVICE_TO_DEVICE",3,4,9,1,5').encode())
    put("rocm_text", "v3_calls_quotes", b"\x02" + (
        '"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"\n'
        '"HIP_RUNTIME_API","hip""Malloc",1,1,1,1,2\n"MARKER_CORE_API","open quote,1,1,0,1').encode())
    put("rocm_text", "warn_v1_json_cut", b"\x03" + (
        '{ "traceEvents":[{}\n,{"args":{"name":"GPU0"},"ph":"M","pid":6,"name":"process_name"}\n'
        ',{"ph":"X","name":"k","pid":"6","tid":"1","ts":"1","dur":"2","args":{"BeginNs":"1000",'
        '"EndNs":"3500","dev-id":"99999999999"}}\n,{"ph":"X","na').encode())
    put("rocm_text", "v1_json_flows_without_lanes", b"\x03" + (
        '{"traceEvents":[{"ph":"s","cat":"DataFlow","id":0,"pid":2,"tid":1,"ts":1},'
        '{"ph":"t","cat":"DataFlow","id":0,"pid":1,"tid":0,"ts":"x"},'
        '{"ph":"X","name":"hipMemcpy","pid":"2","tid":"1","ts":"1","dur":"1","args":{"BeginNs":"5",'
        f'"EndNs":"{I64_MIN}","args":"sizeBytes(99999999999999999999)"}}}}],'
        '"otherData":{"Agent0.Name":"gfx942","Agent4294967297.DeviceType":"GPU","Agent2.ComputeUnit":"-1"}}').encode())
    put("rocm_text", "err_rpd_not_json", b"\x04" + b"[ {}, nope")
    put("rocm_text", "rpd_extremes", b"\x04" + (
        '[ {}\n,{"name":"process_name","ph":"M","pid":"2","args":{"name":"GPU2"}}\n'
        f',{{"pid":"2","tid":"0","name":"k","ts":"{I64_MAX}","dur":"1","ph":"X","args":{{"desc":"KernelExecution"}}}}\n'
        ',{"pid":"2","tid":"0","name":"c","ts":"1.5","dur":"-3","ph":"X","args":{"desc":"FillBuffer"}}\n'
        ',{"pid":"9","tid":"9","name":"hipMemcpy","ts":"1","dur":"2","ph":"X","args":{"desc":"size=0xffffffffffffffffff"}}\n'
        ',{"pid":"2","name":"sclk","ph":"C","ts":1e300,"args":{"sclk":1e400}}\n'
        ',{"pid":"9","tid":"9","cat":"api_op","name":"api_op","ts":"1","id":"1","ph":"s"}\n'
        ',{"pid":"2","tid":"0","cat":"api_op","name":"api_op","ts":"1","id":"1","ph":"f","bp":"e"}]').encode())


if __name__ == "__main__":
    for old in OUT.glob("*/hw_*"):
        old.unlink()
    chrome()
    nvprof()
    nvprof_sqlite()
    nsys_sqlite()
    rocpd_sqlite()
    rpd_sqlite()
    detect()
    snapshot()
    rocm_text()
    for t in sorted(OUT.iterdir()):
        files = list(t.iterdir())
        print(f"handwritten: {t.name}: {len(files)} files, {sum(f.stat().st_size for f in files)} bytes")
