"""Shared fixtures: the repository, the samples, and the `warpscope` command to check against."""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "sample_profiles"
# ../shared/samples beside the repository, named by its relative path as the Rust tests do.
SHARED = REPO / ".." / "shared" / "samples"


def cli_binary() -> Path:
    """The CLI the answers are checked against: $WARPSCOPE_BIN, else target/debug/warpscope."""
    env = os.environ.get("WARPSCOPE_BIN")
    path = Path(env) if env else REPO / "target" / "debug" / "warpscope"
    if not path.exists():
        pytest.fail(f"{path} not found: build the CLI first (cargo build) or set WARPSCOPE_BIN")
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Runs the CLI from the repository root (paths relative to it read as in Python)."""
    return subprocess.run(
        [str(cli_binary()), *args], cwd=REPO, capture_output=True, text=True, check=False
    )


def cli_json(*args: str):
    """The CLI's `--format json` output of `args`, parsed; fails with its stderr."""
    done = run_cli(*args, "--format", "json")
    assert done.returncode == 0, f"warpscope {' '.join(args)} failed: {done.stderr}"
    return json.loads(done.stdout)


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    """Tests name files relative to the repository root, as the CLI is run there."""
    monkeypatch.chdir(REPO)
