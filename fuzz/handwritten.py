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


if __name__ == "__main__":
    for old in OUT.glob("*/hw_*"):
        old.unlink()
    chrome()
    nvprof()
    nvprof_sqlite()
    nsys_sqlite()
    detect()
    for t in sorted(OUT.iterdir()):
        files = list(t.iterdir())
        print(f"handwritten: {t.name}: {len(files)} files, {sum(f.stat().st_size for f in files)} bytes")
