"""Errors name the file; tables outlive their profile; threads share the module."""

import concurrent.futures as cf
import gc
import gzip
import warnings

import pytest

import warpscope
from conftest import cli_json

TRACE = "sample_profiles/alexnet_b8.pt.trace.json.gz"


def test_missing_file():
    with pytest.raises(warpscope.LoadError, match="no/such/trace.json: cannot read file"):
        warpscope.load("no/such/trace.json")


def test_not_a_profile(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("these are my notes, not a profile\n")
    with pytest.raises(warpscope.LoadError, match="notes.txt: not a recognised profile"):
        warpscope.load(f)
    with pytest.raises(warpscope.LoadError, match="is a directory"):
        warpscope.load(tmp_path)
    with pytest.raises(TypeError):
        warpscope.load(42)
    with pytest.raises(ValueError, match="no table"):
        warpscope.load(TRACE).table("nope")


def test_truncated_trace(tmp_path):
    data = gzip.decompress(open(TRACE, "rb").read())
    cut = tmp_path / "cut.json"
    cut.write_bytes(data[: len(data) // 2])
    # Cut mid-array: read as far as it goes, with a warning that says so (as the CLI does).
    with pytest.warns(warpscope.ProfileWarning, match="cut.json"):
        p = warpscope.load(cut)
    assert any(w["code"] == "truncated" for w in p.warnings)
    assert 0 < p.kernels().num_rows < warpscope.load(TRACE).kernels().num_rows
    # Cut inside the header, before any event: an error naming the file.
    head = tmp_path / "head.json"
    head.write_bytes(data[:40])
    with pytest.raises(warpscope.LoadError, match="head.json"):
        warpscope.load(head)
    gz = tmp_path / "cut.json.gz"
    gz.write_bytes(open(TRACE, "rb").read()[:5000])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", warpscope.ProfileWarning)
        try:
            p = warpscope.load(gz)
        except warpscope.LoadError as e:
            assert "cut.json.gz" in str(e)
        else:
            assert any("cut.json.gz" in w["message"] or w["code"] for w in p.warnings)


def test_a_table_outlives_its_profile():
    p = warpscope.load(TRACE)
    k = p.kernels()
    expected = k.column("dur_ns").to_pylist()
    del p
    gc.collect()
    assert k.column("dur_ns").to_pylist() == expected
    assert k.to_pandas()["dur_ns"].sum() == sum(expected)


def test_bytes_and_paths_agree():
    from pathlib import Path

    a = warpscope.load(Path(TRACE))
    b = warpscope.load(open(TRACE, "rb").read(), name=TRACE)
    assert a.summary() == b.summary()


def test_threads_at_once():
    files = [
        "sample_profiles/alexnet_b8.pt.trace.json.gz",
        "sample_profiles/alexnet_b16.pt.trace.json.gz",
        "sample_profiles/alexnet_b32.pt.trace.json.gz",
        "sample_profiles/alexnet_b128.pt.trace.json.gz",
    ] * 2
    expected = {f: cli_json("summary", f)["gpu_total_ns"] for f in set(files)}

    def work(f):
        p = warpscope.load(f)
        return f, p.kernels().num_rows, p.summary()["gpu_total_ns"], p.analyze()["devices"]

    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(work, files))
    for f, rows, total, devices in results:
        assert total == expected[f]
        assert rows > 0 and devices
    # One profile shared by threads.
    p = warpscope.load(files[0])
    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        sums = list(pool.map(lambda _: p.kernels().column("dur_ns").to_pylist(), range(8)))
    assert all(s == sums[0] for s in sums)
