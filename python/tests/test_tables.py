"""Tables and reports from Python equal what the `warpscope` command prints."""

import warnings
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pytest

import warpscope
from conftest import REPO, SHARED, SHIPPED, cli_json, run_cli


def profiles_under(root: Path):
    """Every file under `root` but the notes, relative to the repository root."""
    if not root.is_dir():
        return []
    return sorted(
        str(p.relative_to(REPO)) for p in root.rglob("*") if p.is_file() and p.suffix != ".md"
    )


SAMPLES = profiles_under(SHIPPED) + profiles_under(SHARED)


def quiet_load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", warpscope.ProfileWarning)
        return warpscope.load(path)


def kernel_totals_from_cli(summary):
    """(calls, total_ns) per kernel name in `summary --format json`'s GPU activities."""
    return {
        row["name"]: (row["calls"], row["total_ns"])
        for row in summary["gpu_activities"]
        if row["kind"] == "kernel"
    }


def kernel_totals_from_table(table: pa.Table):
    totals = defaultdict(lambda: [0, 0])
    for name, dur in zip(table.column("name").to_pylist(), table.column("dur_ns").to_pylist()):
        totals[name][0] += 1
        totals[name][1] += dur
    return {k: tuple(v) for k, v in totals.items()}


def test_samples_are_found():
    assert len(profiles_under(SHIPPED)) >= 10
    assert SHARED.is_dir(), "../shared/samples is missing"
    assert len(SAMPLES) > 40


@pytest.mark.parametrize("path", SAMPLES)
def test_every_sample_matches_the_cli(path):
    done = run_cli("summary", path, "--format", "json")
    if done.returncode != 0:
        # The command refuses it (not a profile): Python refuses it too, naming the file.
        with pytest.raises(warpscope.LoadError) as err:
            warpscope.load(path)
        assert path in str(err.value)
        return
    import json

    expected = json.loads(done.stdout)
    p = quiet_load(path)
    assert p.summary() == expected
    kernels = p.kernels()
    if p.event_count == 0:
        # A summary file (nvprof's own tables, no events): the figures are its rows, in
        # summary(); there are no kernel executions to list.
        assert kernels.num_rows == 0
        return
    assert kernel_totals_from_table(kernels) == kernel_totals_from_cli(expected)
    assert kernels.num_rows == sum(c for c, _ in kernel_totals_from_cli(expected).values())


def test_types_are_the_parquet_exports():
    p = quiet_load("sample_profiles/alexnet_b8.pt.trace.json.gz")
    k = p.kernels()
    name = pa.dictionary(pa.int32(), pa.string())
    assert k.schema.field("start_ns").type == pa.int64()
    assert k.schema.field("dur_ns").type == pa.int64()
    assert k.schema.field("name").type == name
    assert k.schema.field("grid_x").type == pa.int32()
    assert k.schema.field("achieved_occupancy_pct").type == pa.float64()
    assert not k.schema.field("start_ns").nullable
    assert k.schema.field("rank").nullable
    assert k.column_names[:6] == ["run", "rank", "event", "start_ns", "dur_ns", "name"]
    ev = p.events()
    assert ev.column_names == [
        "run", "rank", "event", "start_ns", "dur_ns", "name", "kind", "track",
        "device", "stream", "process", "thread", "depth", "flops", "moved_bytes",
    ]
    # An operator's counted FLOPs (docs/flops.md): int64, null where unknown or not an operator.
    assert ev.schema.field("flops").type == pa.int64()
    assert k.schema.field("flops").type == pa.float64()
    assert ev.num_rows == p.event_count
    assert set(ev.column("kind").to_pylist()) >= {"kernel", "cpu_op", "runtime"}
    assert p.flows().column_names == ["run", "rank", "from_event", "to_event", "kind"]
    assert p.devices().column("name").to_pylist()[0].startswith("NVIDIA")


def test_tables_are_the_parquet_files(tmp_path):
    """Same columns, types (text decoded) and rows as `warpscope export`'s Parquet files."""
    import pyarrow.parquet as pq

    path = "sample_profiles/resnet50_b32_bf16_mem_flops.pt.trace.json.gz"
    done = run_cli("export", "--out", str(tmp_path), path)
    assert done.returncode == 0, done.stderr
    p = quiet_load(path)
    for name in warpscope.TABLES:
        if name == "cpu_ops":
            continue
        ours = p.table(name)
        theirs = pq.read_table(tmp_path / name / "run-00000.parquet")
        decoded = pa.schema(
            [f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in ours.schema]
        )
        assert ours.cast(decoded).equals(theirs.cast(decoded)), name
    assert p.memory_records().num_rows > 0


def test_pandas_top_kernels():
    pd = pytest.importorskip("pandas")
    p = quiet_load("sample_profiles/resnet50_b64_fp32.pt.trace.json.gz")
    df = p.kernels().to_pandas()
    assert isinstance(df["name"].dtype, pd.CategoricalDtype)
    top = df.groupby("name", observed=True)["dur_ns"].sum().sort_values(ascending=False)
    expected = p.summary()["gpu_activities"]
    first_kernel = next(r for r in expected if r["kind"] == "kernel")
    assert top.index[0] == first_kernel["name"]
    assert int(top.iloc[0]) == first_kernel["total_ns"]


def test_cpu_ops_is_the_summary_table():
    p = quiet_load("sample_profiles/alexnet_b8.pt.trace.json.gz")
    ops = p.cpu_ops().to_pylist()
    assert ops == [dict(r) for r in p.summary()["ops"]]


def test_analyze_memory_and_steps_equal_the_cli():
    path = "sample_profiles/resnet50_b32_fp32_mem_flops.pt.trace.json.gz"
    p = quiet_load(path)
    assert p.analyze() == cli_json("analyze", path)
    assert p.analyze(step=3, top=5) == cli_json("analyze", path, "--step", "3", "--top", "5")
    assert p.memory() == cli_json("memory", path)
    assert p.memory(top=0) == cli_json("memory", path, "--top", "0")
    snap = "sample_profiles/resnet50_b32_fp32_mem_flops.snapshot.pickle.gz"
    assert quiet_load(snap).memory() == cli_json("memory", snap)
    with pytest.raises(warpscope.WarpscopeError, match="no step 99: it has steps 2 to 3"):
        p.analyze(step=99)


def test_time_range_views():
    path = "sample_profiles/alexnet_b8.pt.trace.json.gz"
    p = quiet_load(path)
    start, end = p.extent
    mid = (start + end) // 2
    view = p.time_range(start, mid)
    assert view.range == (start, mid)
    assert p.range is None
    ev = view.events()
    starts = ev.column("start_ns").to_pylist()
    durs = ev.column("dur_ns").to_pylist()
    assert all(s < mid and (s + d > start or (d == 0 and s >= start)) for s, d in zip(starts, durs))
    assert 0 < ev.num_rows < p.event_count
    # Event numbers are the whole profile's.
    whole = p.events()
    by_number = dict(zip(whole.column("event").to_pylist(), whole.column("start_ns").to_pylist()))
    assert all(by_number[e] == s for e, s in zip(ev.column("event").to_pylist(), starts))
    # Flows join inside the view.
    kept = set(ev.column("event").to_pylist())
    flows = view.flows()
    assert all(a in kept and b in kept for a, b in zip(flows.column("from_event").to_pylist(), flows.column("to_event").to_pylist()))
    # Reports of a view are the CLI's over --range.
    r = f"{start}ns..{mid}ns"
    assert view.analyze() == cli_json("analyze", path, "--range", r)
    assert view.summary()["gpu_total_ns"] < p.summary()["gpu_total_ns"]
    with pytest.raises(ValueError):
        p.time_range(mid, start)


def test_compare_and_fleet_equal_the_cli(tmp_path):
    a = "sample_profiles/alexnet_b8.pt.trace.json.gz"
    b = "sample_profiles/alexnet_b32.pt.trace.json.gz"
    assert warpscope.compare([b, a]) == cli_json("compare", b, a)
    assert warpscope.compare([quiet_load(a), b], top=5, baseline=1) == cli_json(
        "compare", a, b, "--top", "5", "--baseline", "2"
    )
    job = SHARED / "chrome-kineto"
    ranks = ["hta_world128_sampled_rank-0.json.gz", "hta_world128_sampled_rank-1.json.gz"]
    files = [str(job / r) for r in ranks]
    assert warpscope.fleet(files) == cli_json("fleet", *files)


def test_warnings_are_issued_and_kept():
    bad = b'{"traceEvents": [{"ph": "X", "name": "k", "cat": "kernel", "ts": 10, "dur": -5, "pid": 0, "tid": 7, "args": {"device": 0, "stream": 7}}, {"ph": "X", "name": "k2", "cat": "kernel", "ts": 20, "dur": 5, "pid": 0, "tid": 7, "args": {"device": 0, "stream": 7}}]}'
    with pytest.warns(warpscope.ProfileWarning):
        p = warpscope.load(bad, name="neg.json")
    assert p.path == "neg.json"
    assert p.warnings and {"code", "message", "count"} <= set(p.warnings[0])
