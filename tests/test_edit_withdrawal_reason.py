"""A stored version withdrawn because an edit broke its file says the file changed: never the wording
for unchanged bytes a newer release's reader refuses (attack pass 12, 04)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import ingest_cli

MEMO = "---\ndoc_id: memo\nversion: 1\ntitle: Memo\naccess: staff\n---\n\n# Memo\n\nStaff only text.\n"


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text.replace("access: staff", "access: [staff"),  # front matter no longer YAML
        lambda text: text.replace("title: Memo", "title: Memo\n  bad: indent"),  # a line YAML refuses
    ],
    ids=["unclosed-list", "bad-indent"],
)
def test_a_broken_edit_is_withdrawn_as_changed(tmp_path: Path, edit) -> None:
    memo = tmp_path / "c" / "documents" / "memo.md"
    memo.parent.mkdir(parents=True)
    memo.write_text(MEMO)
    store = f"sqlite:///{tmp_path / 'i.sqlite'}"
    assert ingest_cli("run", tmp_path / "c", "--store", store, "-q").returncode == 0
    memo.write_text(edit(MEMO))
    done = ingest_cli("run", tmp_path / "c", "--store", store, "--json")
    text = json.dumps(json.loads(done.stdout))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "memo" in text and "withdrawn" in text, text
    assert "unchanged bytes" not in text and "this release's readers" not in text, text
    assert "its file changed" in text, text
