"""--quiet and --verbose together are contradictory: a usage error (exit 2) on every command that takes
both, said as such (also as the one JSON object with --json), before any store is touched (outside pass:
`ingest search -q -v` picked one silently)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "validate": ["validate", "corpus"],
    "run": ["run", "corpus", "--dry-run"],
    "search": ["search", "warranty"],
    "verify": ["verify", "corpus"],
    "eval": ["eval", "corpus/questions.yaml"],
    "stats": ["stats"],
    "layout": ["layout", "corpus"],
}
STORELESS = {"validate"}


def ingest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ingest.cli", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("command", COMMANDS)
def test_quiet_and_verbose_together_are_a_usage_error(command, store_args):
    args = COMMANDS[command] + ([] if command in STORELESS else store_args)
    plain = ingest(*args, "-q", "-v")
    assert plain.returncode == 2, (plain.stdout, plain.stderr)
    assert "--quiet and --verbose cannot be used together" in plain.stderr
    assert plain.stdout == ""
    as_json = ingest(*args, "--verbose", "--json", "--quiet")
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout) == {"error": "--quiet and --verbose cannot be used together", "exit_code": 2}


def test_either_alone_still_works(tmp_path):
    store = ["--store", f"sqlite:///{tmp_path / 'i.sqlite'}"]
    assert ingest("run", "corpus", "--quiet", *store).returncode == 0
    for flag in ("-q", "-v"):
        assert ingest("search", "warranty", flag, *store).returncode == 0
        assert ingest("stats", flag, *store).returncode == 0
