#!/usr/bin/env python3
"""Cuts small fuzzing seeds out of the sample profiles into fuzz/corpus/<target>/.

    python3 fuzz/make_seeds.py [SAMPLES_DIR] [CORPUS_DIR]

SAMPLES_DIR defaults to ../shared/samples (relative to the repository root), CORPUS_DIR to
fuzz/corpus. Most samples carry no license grant, so the seeds cut from them are never
committed: fuzz/corpus/ is git-ignored and scripts/fuzz.sh rebuilds it from the samples each
time. The committed inputs of fuzz/regressions/<target>/ (hand-written and minimised crashes)
seed each run too (scripts/fuzz.sh passes that directory to libFuzzer); files put in an
optional fuzz/seeds/<target>/ are copied into the corpus.

Per target:
  chrome_json   the top-level metadata of each Kineto/TensorFlow trace with a few events of
                every (ph, cat) kind and the flow partners of the chosen flow events; the first
                byte of each seed is the block size the target uses (see fuzz/src/replay.rs)
  nvprof_text   heads of the nvprof CSV and text files, and the section around the first
                "Profiling result" of longer logs
  nvprof_sqlite nvprof .nvvp databases reduced to their schema and the first rows of each table
  nsys_sqlite   the same for Nsight Systems exports
  rocpd_sqlite  the same for rocprofv3 databases, plus gen_rocpd_sqlite.py --small
  rpd_sqlite    the same for RPD and rocprof v1 databases
  detect        a mix of the above without the block byte, plain and gzip-compressed
  rocm_text     heads of the AMD text samples (rocm/*.csv, *.json), each behind the byte that picks
                its reader (see fuzz/src/replay.rs)
  snapshot      allocator snapshot pickles (*.snapshot.pickle*) cut to a few segments, trace
                entries and annotations, re-pickled with protocols 2 and 4 (the frame lists
                stay shared), one of them gzip-compressed
"""

import gzip
import hashlib
import io
import json
import pickle
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".." / "shared" / "samples"
CORPUS = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "fuzz" / "corpus"
TARGETS = ["chrome_json", "nvprof_text", "nvprof_sqlite", "nsys_sqlite", "detect", "snapshot",
           "rocm_text", "rocpd_sqlite", "rpd_sqlite"]

# Chrome seeds: at most this many events per (ph, cat), and a size budget per seed.
PER_KIND = 2
MAX_METADATA_EVENTS = 8
CHROME_BUDGET = 12 * 1024
# Samples bigger than this (compressed) are skipped: loading them only to keep 30 events is slow.
MAX_CHROME_FILE = 3 * 1024 * 1024
# SQLite seeds: rows kept per table, and the size to stay under.
SQL_ROWS = 6
SQL_BUDGET = 64 * 1024


def importer_names():
    """Table names the SQLite importers use (from the committed dictionaries)."""
    names = set()
    for t in ["nvprof_sqlite", "nsys_sqlite", "rocpd_sqlite", "rpd_sqlite"]:
        path = ROOT / "fuzz" / "dict" / f"{t}.dict"
        if path.exists():
            names.update(re.findall(r'^"([A-Za-z_][A-Za-z0-9_]*)"$', path.read_text(), re.M))
    return names


IMPORTER_NAMES = importer_names()


def write(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def open_json(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def chrome_seed(doc):
    """The metadata of a trace with a few events of each kind."""
    if isinstance(doc, list):
        meta, events = None, doc
    else:
        meta = {k: v for k, v in doc.items() if k != "traceEvents"}
        events = doc.get("traceEvents") or []
        if isinstance(meta.get("deviceProperties"), list):
            meta["deviceProperties"] = meta["deviceProperties"][:1]
    chosen, seen, n_meta = [], {}, 0
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            continue
        key = (e.get("ph"), e.get("cat"))
        if e.get("ph") == "M":
            if n_meta >= MAX_METADATA_EVENTS:
                continue
            n_meta += 1
        elif seen.get(key, 0) >= PER_KIND:
            continue
        seen[key] = seen.get(key, 0) + 1
        chosen.append(i)
    # Flow partners of the chosen flow events, so that some flows link.
    ids = {
        (events[i].get("cat"), events[i].get("id"))
        for i in chosen
        if events[i].get("ph") in ("s", "f", "t")
    }
    chosen_set = set(chosen)
    for i, e in enumerate(events):
        if isinstance(e, dict) and e.get("ph") in ("s", "f", "t") and i not in chosen_set:
            if (e.get("cat"), e.get("id")) in ids:
                chosen_set.add(i)
    picked = [events[i] for i in sorted(chosen_set)]
    while True:
        if meta is None:
            out = picked
        else:
            out = dict(meta)
            out["traceEvents"] = picked
            # Keep the original key order: metadata, then traceEvents, then trailing keys.
            order = list(doc.keys())
            out = {k: out[k] for k in order if k in out}
        text = json.dumps(out, separators=(",", ":")).encode()
        if len(text) <= CHROME_BUDGET or len(picked) <= 4:
            return text
        picked = picked[: len(picked) * 3 // 4]


def chrome_seeds():
    made = []
    for sub in ["kineto-h100", "chrome-kineto", "chrome-tensorflow"]:
        for path in sorted((SAMPLES / sub).glob("*")):
            if path.stat().st_size > MAX_CHROME_FILE:
                continue
            try:
                doc = open_json(path)
            except (ValueError, OSError) as e:
                print(f"make_seeds: skipping {path.name}: {e}", file=sys.stderr)
                continue
            text = chrome_seed(doc)
            stem = re.sub(r"\.(pt\.)?trace|\.json|\.gz|\.ctf", "", path.name)
            # Block sizes: 256 bytes, and a tiny one that cuts every token.
            write("chrome_json", f"{stem}_b256", b"\xff" + text)
            write("chrome_json", f"{stem}_b7", b"\x06" + text)
            made.append((stem, text))
    # A pretty-printed copy (whitespace everywhere) of one seed.
    if made:
        stem, text = made[0]
        pretty = json.dumps(json.loads(text), indent=2).encode()
        write("chrome_json", f"{stem}_pretty_b64", b"\x3f" + pretty)
    return made


def text_head(lines):
    """The first lines, and the section around the first result table of longer logs."""
    head = lines[:40]
    for i, line in enumerate(lines):
        if i >= 40 and re.match(r"^==\d+== .*(result|API calls)", line):
            head += lines[i : i + 40]
            break
    return head


def nvprof_seeds():
    made = []
    for sub in ["nvprof-csv", "nvprof-text"]:
        for path in sorted((SAMPLES / sub).glob("*")):
            raw = path.read_bytes()
            if len(raw) > 6 * 1024:
                lines = raw.decode("utf-8", "replace").splitlines(keepends=True)
                raw = "".join(text_head(lines)).encode()
            write("nvprof_text", path.stem, raw)
            made.append((path.stem, raw))
    return made


# The reader the rocm_text target gives its input to, by the first byte (fuzz/src/replay.rs).
ROCM_KIND = {"rocprof-csv": 0, "stats": 1, "rocprofv3-csv": 2, "rocprof-json": 3, "rpd-json": 4}


def rocm_seeds():
    made = []
    for path in sorted((SAMPLES / "rocm").glob("*")):
        name = path.name
        if name.endswith(".csv"):
            if "stats" in name:
                kind = "stats"
            elif name.startswith("rocprofv3"):
                kind = "rocprofv3-csv"
            else:
                kind = "rocprof-csv"
            raw = b"".join(path.read_bytes().splitlines(keepends=True)[:12])
        elif name.endswith(".json"):
            kind = "rpd-json" if name.startswith("rpd") else "rocprof-json"
            raw = path.read_bytes()[:8 * 1024]
        else:
            continue
        data = bytes([ROCM_KIND[kind]]) + raw
        write("rocm_text", path.stem, data)
        made.append((path.stem, raw))
    return made


def shrink_json(v):
    """A long JSON object text (a rocprofv3 agent's properties, a process's environment) cut
    to its scalar top-level keys; any other value as it is."""
    if not isinstance(v, str) or len(v) < 2048 or not v.startswith("{"):
        return v
    try:
        doc = json.loads(v)
    except ValueError:
        return v
    if not isinstance(doc, dict):
        return v
    return json.dumps({k: x for k, x in doc.items() if isinstance(x, (int, float, str))})


def reduce_sqlite(src, dst, rows=SQL_ROWS):
    """Copies the schema of `src` and the first `rows` rows of each table (and the strings they
    refer to) into a new database `dst`, vacuumed with small pages."""
    s = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    if dst.exists():
        dst.unlink()
    d = sqlite3.connect(dst)
    d.execute("PRAGMA page_size=512")
    d.execute("PRAGMA auto_vacuum=NONE")
    tables = s.execute(
        "SELECT name, sql FROM sqlite_master WHERE type='table' AND sql IS NOT NULL "
        "AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    string_tables = {"StringTable", "StringIds", "rocpd_string"}
    string_tables.update(n for n, _ in tables if n.startswith("rocpd_string_"))
    # rocprofv3 tables carry a session suffix; the AMD formats' tables are all read.
    amd = {"HIP", "HSA", "OPS", "COPY", "KERN"}
    refs = set()
    kept = []
    for name, sql in tables:
        count = s.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
        # Tables the importers never read only cost pages.
        read = (name in IMPORTER_NAMES or name in amd or name.startswith("rocpd_")
                or (count > 0 and name.startswith("CUPTI_ACTIVITY_KIND_")))
        if not read:
            continue
        d.execute(sql)
        kept.append((name, sql))
        if name in string_tables or count == 0:
            continue
        got = [tuple(shrink_json(v) for v in r)
               for r in s.execute(f'SELECT * FROM "{name}" LIMIT {rows}').fetchall()]
        cols = len(got[0])
        d.executemany(f'INSERT INTO "{name}" VALUES ({",".join("?" * cols)})', got)
        for row in got:
            refs.update(v for v in row if isinstance(v, int))
    for name, _ in kept:
        if name not in string_tables:
            continue
        cols = [c[1] for c in s.execute(f'PRAGMA table_info("{name}")')]
        idcol = "_id_" if "_id_" in cols else "id"
        got = s.execute(f'SELECT * FROM "{name}" ORDER BY "{idcol}"').fetchall()
        idx = cols.index(idcol)
        keep = [r for r in got if r[idx] in refs or r[idx] < 8]
        d.executemany(f'INSERT INTO "{name}" VALUES ({",".join("?" * len(cols))})', keep)
    d.commit()
    d.execute("VACUUM")
    d.close()
    s.close()
    return dst.stat().st_size


def sqlite_seeds():
    made = []
    tmp = Path(tempfile.mkdtemp(prefix="warpscope-seeds-"))
    try:
        for sub, target in [("nvprof-sqlite", "nvprof_sqlite"), ("nsys-sqlite", "nsys_sqlite"),
                            ("rocm", None)]:
            for path in sorted((SAMPLES / sub).glob("*")):
                if target is None:
                    # The rocm folder: its databases only, by their tables.
                    if path.read_bytes()[:16] != b"SQLite format 3\x00":
                        continue
                    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
                    names = [r[0] for r in c.execute("SELECT name FROM sqlite_master")]
                    c.close()
                    rocpd = any(n.startswith("rocpd_kernel_dispatch_") for n in names)
                    seed_target = "rocpd_sqlite" if rocpd else "rpd_sqlite"
                else:
                    seed_target = target
                out = tmp / (path.stem + ".sqlite")
                rows = SQL_ROWS
                size = reduce_sqlite(path, out, rows)
                while size > SQL_BUDGET and rows > 1:
                    rows //= 2
                    size = reduce_sqlite(path, out, rows)
                if size > SQL_BUDGET:
                    print(f"make_seeds: {path.name} reduces to {size} bytes (> budget)",
                          file=sys.stderr)
                data = out.read_bytes()
                write(seed_target, path.stem, data)
                made.append((path.stem, data))
        # A rocprofv3 database with copies, markers, samples and allocations (the real one has
        # none of them): the synthetic one of gen_rocpd_sqlite.py.
        small = tmp / "synthetic_rocpd.db"
        subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_rocpd_sqlite.py"), "--small",
                        str(small)], check=True, capture_output=True)
        write("rocpd_sqlite", "synthetic_rocpd", small.read_bytes())
    finally:
        shutil.rmtree(tmp)
    return made


# Snapshot seeds: what is kept of each snapshot.
SNAP_SEGMENTS = 3
SNAP_BLOCKS = 4
SNAP_ENTRIES = 24
SNAP_FRAMES = 6


def cut_snapshot(snap):
    """A few segments, blocks, trace entries and annotations of a snapshot, frames cut short.
    Lists shared by the snapshot stay shared (one cut per list object)."""
    cut_lists = {}

    def frames(f):
        if id(f) not in cut_lists:
            cut_lists[id(f)] = f[:SNAP_FRAMES]
        return cut_lists[id(f)]

    def with_frames(d):
        d = dict(d)
        if isinstance(d.get("frames"), list):
            d["frames"] = frames(d["frames"])
        return d

    out = dict(snap)
    segs = []
    for seg in snap.get("segments", [])[:SNAP_SEGMENTS]:
        seg = with_frames(seg)
        seg["blocks"] = [with_frames(b) for b in seg.get("blocks", [])[:SNAP_BLOCKS]]
        segs.append(seg)
    out["segments"] = segs
    out["device_traces"] = [[with_frames(e) for e in t[:SNAP_ENTRIES]]
                            for t in snap.get("device_traces", [])]
    out["external_annotations"] = snap.get("external_annotations", [])[:6]
    return out


class PlainData(pickle.Unpickler):
    """An unpickler that refuses every class and function (plain data only)."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"{module}.{name}: not plain data")


def snapshot_seeds():
    made = []
    for path in sorted(SAMPLES.glob("*/*.snapshot.pickle*")):
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        snap = PlainData(io.BytesIO(raw)).load()
        cut = cut_snapshot(snap)
        stem = path.name.split(".")[0]
        for proto in (2, 4):
            data = pickle.dumps(cut, protocol=proto)
            write("snapshot", f"{stem}_p{proto}", data)
            made.append((f"{stem}_p{proto}", data))
        write("snapshot", f"{stem}_p4.gz", gzip.compress(made[-1][1], 9, mtime=0))
    return made


def main():
    if not SAMPLES.is_dir():
        sys.exit(f"make_seeds: no samples at {SAMPLES}")
    for t in TARGETS:
        d = CORPUS / t
        d.mkdir(parents=True, exist_ok=True)
        seeds = ROOT / "fuzz" / "seeds" / t
        if seeds.is_dir():
            for f in seeds.iterdir():
                shutil.copy(f, d / f.name)
    chrome = chrome_seeds()
    nvprof = nvprof_seeds()
    sql = sqlite_seeds()
    snaps = snapshot_seeds()
    rocm = rocm_seeds()
    # detect: one of each family plain, and some gzip-compressed.
    for i, (stem, data) in enumerate(chrome[:3] + nvprof[:3] + sql[:1] + sql[-1:] + snaps[-1:] + rocm[:2]):
        write("detect", stem, data)
        if i % 2 == 0:
            write("detect", stem + ".gz", gzip.compress(data, 9, mtime=0))
    for t in TARGETS:
        files = list((CORPUS / t).iterdir())
        size = sum(f.stat().st_size for f in files)
        print(f"make_seeds: {t}: {len(files)} seeds, {size // 1024} KB")


if __name__ == "__main__":
    main()
