#!/usr/bin/env python3
"""Independent reference for the AMD SQLite formats, written from docs/formats.md section 13
alone (not from warpscope's code): counts the kernels, copies and API calls of a rocprofv3
(rocpd schema 3), rocmProfileData (RPD schema 2) or rocprof v1 database and sums their
durations, in integer nanoseconds.

    python3 scripts/amd_reference_db.py FILE...

Prints one JSON object per file: {"file", "format", "kernels", "kernel_ns", "copies",
"copy_ns", "copy_bytes", "api_calls", "api_ns"}. Standard library only. The text formats
(CSV, Chrome JSON) are not covered here.
"""

import json
import sqlite3
import sys

TIME_LIMIT = 1 << 62


def span(start, end, either_zero_uncollected=False):
    """(start, duration) of a row that can be placed, else None (docs/formats.md section 13)."""
    if not isinstance(start, int) or not isinstance(end, int):
        return None
    if start == 0 and end == 0:
        return None
    if either_zero_uncollected and (start == 0 or end == 0):
        return None
    if not (0 <= start < TIME_LIMIT and 0 <= end < TIME_LIMIT):
        return None
    return start, max(0, end - start)


def tables(conn):
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def columns(conn, table):
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def schema_version(conn, table):
    try:
        row = conn.execute(
            f'SELECT value FROM "{table}" WHERE tag = \'schema_version\' LIMIT 1').fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0]).strip()


def rocpd_sessions(conn, names):
    out = []
    for t in sorted(names):
        if not t.startswith("rocpd_metadata"):
            continue
        suffix = t[len("rocpd_metadata"):]
        if suffix and not suffix.startswith("_"):
            continue
        v = schema_version(conn, t)
        if v is not None and not (v == "3" or v.startswith("3.")):
            continue
        activity = ["rocpd_kernel_dispatch", "rocpd_memory_copy", "rocpd_region",
                    "rocpd_memory_allocate"]
        if any(a + suffix in names for a in activity):
            out.append(suffix)
    return out


def empty(fmt):
    return {"format": fmt, "kernels": 0, "kernel_ns": 0, "copies": 0, "copy_ns": 0,
            "copy_bytes": 0, "api_calls": 0, "api_ns": 0}


def is_api_family(family):
    up = (family or "").upper()
    if up.startswith("MARKER") or up.startswith("ROCTX"):
        return False
    return up.startswith("HIP") or up.startswith("HSA") or up.startswith("RCCL") or \
        up.startswith("ROC")


def read_rocpd(conn, names, sessions):
    r = empty("rocpd-sqlite")
    for s in sessions:
        strings = {}
        if "rocpd_string" + s in names:
            strings = dict(conn.execute(f'SELECT id, string FROM "rocpd_string{s}"'))
        agents = {}
        if "rocpd_info_agent" + s in names:
            for aid, typ in conn.execute(f'SELECT id, type FROM "rocpd_info_agent{s}"'):
                agents[aid] = (typ or "").upper() == "GPU"
        events = {}
        if "rocpd_event" + s in names:
            for eid, cat in conn.execute(f'SELECT id, category_id FROM "rocpd_event{s}"'):
                events[eid] = strings.get(cat)
        if "rocpd_kernel_dispatch" + s in names:
            for start, end in conn.execute(
                    f'SELECT start, "end" FROM "rocpd_kernel_dispatch{s}"'):
                p = span(start, end)
                if p:
                    r["kernels"] += 1
                    r["kernel_ns"] += p[1]
        if "rocpd_memory_copy" + s in names:
            for start, end, src, dst, size in conn.execute(
                    f'SELECT start, "end", src_agent_id, dst_agent_id, size '
                    f'FROM "rocpd_memory_copy{s}"'):
                p = span(start, end)
                if p and (agents.get(src) or agents.get(dst)):
                    r["copies"] += 1
                    r["copy_ns"] += p[1]
                    r["copy_bytes"] += size if isinstance(size, int) and size > 0 else 0
        if "rocpd_region" + s in names:
            for start, end, eid in conn.execute(
                    f'SELECT start, "end", event_id FROM "rocpd_region{s}"'):
                p = span(start, end)
                if p and is_api_family(events.get(eid)):
                    r["api_calls"] += 1
                    r["api_ns"] += p[1]
    return r


def read_rpd(conn, names):
    r = empty("rpd-sqlite")
    strings = dict(conn.execute("SELECT id, string FROM rocpd_string")) \
        if "rocpd_string" in names else {}
    api_of = {}
    if "rocpd_api_ops" in names:
        for api, op in conn.execute("SELECT api_id, op_id FROM rocpd_api_ops"):
            api_of.setdefault(op, api)
    sizes = {}
    if "rocpd_copyapi" in names:
        sizes = dict(conn.execute("SELECT api_ptr_id, size FROM rocpd_copyapi"))
    for oid, start, end, op_type in conn.execute(
            'SELECT id, start, "end", opType_id FROM rocpd_op'):
        p = span(start, end)
        if not p:
            continue
        t = strings.get(op_type, "")
        if t == "KernelExecution":
            r["kernels"] += 1
            r["kernel_ns"] += p[1]
        elif t.startswith("Copy"):
            r["copies"] += 1
            r["copy_ns"] += p[1]
            size = sizes.get(api_of.get(oid))
            r["copy_bytes"] += size if isinstance(size, int) and size > 0 else 0
    for start, end, name in conn.execute('SELECT start, "end", apiName_id FROM rocpd_api'):
        p = span(start, end)
        n = strings.get(name, "").lower()
        if p and (n.startswith("hip") or n.startswith("hsa")):
            r["api_calls"] += 1
            r["api_ns"] += p[1]
    return r


def read_rocprof(conn, names):
    r = empty("rocprof-sqlite")

    def timed(t):
        return t in names and {"BeginNs", "EndNs"} <= set(columns(conn, t))

    sizes = {}
    for t in ("HIP", "HSA"):
        if not timed(t):
            continue
        cols = columns(conn, t)
        has_args = "args" in cols and "Index" in cols
        extra = ', "Index", args' if has_args else ""
        sql = f'SELECT BeginNs, EndNs{extra} FROM "{t}"'
        for row in conn.execute(sql):
            p = span(row[0], row[1], either_zero_uncollected=True)
            if has_args and isinstance(row[3], str) and "sizeBytes(" in row[3]:
                digits = ""
                for ch in row[3].split("sizeBytes(", 1)[1]:
                    if not ch.isdigit():
                        break
                    digits += ch
                if digits:
                    sizes[row[2]] = int(digits)
            if p:
                r["api_calls"] += 1
                r["api_ns"] += p[1]
    kern_timed = timed("KERN")
    for t in ("OPS", "KERN"):
        if not timed(t) or (t == "KERN" and not kern_timed):
            continue
        name_col = "KernelName" if t == "KERN" else "Name"
        for start, end, name in conn.execute(f'SELECT BeginNs, EndNs, "{name_col}" FROM "{t}"'):
            p = span(start, end, either_zero_uncollected=True)
            name = name or ""
            kernel = name != "FillBuffer" and not name.startswith("Barrier") and \
                not name.startswith("Marker")
            if t == "OPS" and kern_timed:
                continue
            if p and kernel:
                r["kernels"] += 1
                r["kernel_ns"] += p[1]
    if timed("COPY"):
        for start, end, index in conn.execute('SELECT BeginNs, EndNs, "Index" FROM COPY'):
            p = span(start, end, either_zero_uncollected=True)
            if p:
                r["copies"] += 1
                r["copy_ns"] += p[1]
                r["copy_bytes"] += sizes.get(index, 0)
    return r


def reference(path):
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = tables(conn)
        sessions = rocpd_sessions(conn, names)
        if sessions:
            r = read_rocpd(conn, names, sessions)
        elif "rocpd_op" in names and "rocpd_api" in names and \
                schema_version(conn, "rocpd_metadata") in (None, "1", "2"):
            r = read_rpd(conn, names)
        else:
            r = read_rocprof(conn, names)
    finally:
        conn.close()
    r["file"] = path
    return r


def main():
    for path in sys.argv[1:]:
        print(json.dumps(reference(path), sort_keys=True))


if __name__ == "__main__":
    main()
