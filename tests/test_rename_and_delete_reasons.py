"""pol1.md renamed while pol2.md (the version it says supersedes it) is deleted in the same run: the renamed
file is rejected and keeps its stored version, and pol@2 leaves because its file is gone. Every way of
running says that cause: an incremental run, `--full` (not "not in the rebuilt index") and a refused
`--strict` run (not "withdrawn")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CONNECTION_ENV
from tests.corpus_builder import write_doc

ROOT = Path(__file__).resolve().parents[1]
MODES = {"incremental": [], "--full": ["--full"], "--strict": ["--strict"]}


def ingest(*args: object, as_json: bool = True) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    done = subprocess.run(
        [sys.executable, "-m", "ingest.cli", *map(str, args), *(["--json"] if as_json else [])],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )  # fmt: skip
    return done.returncode, done.stdout


@pytest.mark.parametrize("mode", MODES, ids=list(MODES))
def test_a_deleted_version_is_reported_as_gone_while_its_predecessor_is_renamed(mode, tmp_path, store_args):
    corpus = tmp_path / "corpus"
    old = {"status": "superseded", "superseded_by": "pol@2", "effective_to": "2026-01-31"}
    write_doc(corpus, "pol1.md", "pol", version="1", salt="okapi", **old)
    write_doc(corpus, "pol2.md", "pol", version="2", salt="okapi", effective_from="2026-02-01")
    assert ingest("run", corpus, *store_args)[0] == 0
    (corpus / "documents/pol1.md").rename(corpus / "documents/policy-one.md")
    (corpus / "documents/pol2.md").unlink()

    code, out = ingest("run", corpus, *store_args, *MODES[mode])
    data = json.loads(out)
    assert code == 1
    items = {i["document"]: i for i in data["plan"]}
    assert items["pol@2"]["action"] == "removed"
    assert items["pol@2"]["reason"] == "version 2 no longer in the folder"
    if mode != "--strict":
        assert items["pol@1"]["action"] == "kept"
        assert items["pol@1"]["reason"].startswith("documents/policy-one.md (its file, moved from documents/pol1.md)")
    assert [p["source"] for p in data["problems"]] == ["documents/policy-one.md"]
    if mode == "--strict":
        write_doc(corpus, "pol2.md", "pol", version="2", salt="okapi", effective_from="2026-02-01")
        assert ingest("run", corpus, *store_args)[0] == 0
        (corpus / "documents/pol2.md").unlink()
        code, plain = ingest("run", corpus, *store_args, "--strict", as_json=False)
        assert code == 1
        assert "nothing written but 1 removed (no longer in the folder)" in plain, plain
        assert "withdrawn" not in plain
