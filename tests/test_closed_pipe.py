"""A reader that stops reading (`ingest … | head -1`) is not an error of ingest: the command finishes its
work and exits with its own code, and nothing is printed about a broken pipe."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers import ingest_cli

ROOT = Path(__file__).resolve().parents[1]


def piped_to_head(*args: str) -> subprocess.CompletedProcess[str]:
    """``ingest ARGS | head -c 1`` under pipefail: the reader goes after one byte, long before the end."""
    command = " ".join(f"'{a}'" for a in [sys.executable, "-m", "ingest.cli", *args])
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command} | head -c 1 > /dev/null"],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip


def test_a_run_whose_reader_leaves_still_writes_everything_and_exits_0(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus", corpus)
    done = piped_to_head("run", str(corpus), *store_args, "--verbose")
    assert done.returncode == 0, done.stderr
    assert "Broken pipe" not in done.stderr and "Error" not in done.stderr, done.stderr
    counts = ingest_cli("stats", "--json", *store_args)
    assert '"documents": 33' in counts.stdout and '"chunks": 183' in counts.stdout, counts.stdout


def test_reading_commands_piped_to_head_exit_0(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus", corpus)
    assert ingest_cli("run", str(corpus), *store_args, "-q").returncode == 0
    for args in (["search", "warranty", "--top", "20"], ["stats", "-v"], ["chunks", "warranty-policy"], ["--help"]):
        done = piped_to_head(*args, *(store_args if args != ["--help"] else []))
        assert done.returncode == 0, (args, done.stderr)
        assert "Broken pipe" not in done.stderr, done.stderr
