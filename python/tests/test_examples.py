"""The examples of docs/python.md are the files in python/examples, and they run."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

EXAMPLES = REPO / "python" / "examples"
DOC = (REPO / "docs" / "python.md").read_text()


@pytest.mark.parametrize("name", ["top_kernels.py", "sweep_plot.py", "job_futures.py", "job_spark.py"])
def test_example_is_in_the_docs(name):
    assert (EXAMPLES / name).read_text().strip() in DOC, f"docs/python.md does not hold {name} as it is"


def run(args, cwd=REPO):
    done = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_top_kernels_runs():
    out = run([EXAMPLES / "top_kernels.py"])
    assert "total_ns" in out and "share_pct" in out


def test_sweep_plot_runs(tmp_path):
    pytest.importorskip("matplotlib")
    files = [REPO / f"sample_profiles/alexnet_b{b}.pt.trace.json.gz" for b in (32, 8, 128, 16)]
    out = run([EXAMPLES / "sweep_plot.py", *files], cwd=tmp_path)
    assert [l.split(":")[0] for l in out.splitlines()] == [
        "batch     8", "batch    16", "batch    32", "batch   128"
    ]
    png = (tmp_path / "sweep.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_job_futures_runs(tmp_path):
    job = tmp_path / "job"
    subprocess.run(
        [sys.executable, REPO / "scripts" / "gen_ranks.py", job, "--ranks", "4"],
        check=True, capture_output=True,
    )
    out = run([EXAMPLES / "job_futures.py", job])
    lines = out.splitlines()
    assert lines[0].split() == ["kernels", "kernel_ns"]
    assert [l.split()[0] for l in lines[2:6]] == ["0", "1", "2", "3"]
    assert any("nccl" in l.lower() for l in lines[6:])
