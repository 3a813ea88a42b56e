"""--accept-edits over a withdrawn version is the same deliberate override as over a stored one: the
override line in plain output and in --json's `overrides`, and the plan line says why (outside pass: it
was reported as merely new)."""

from __future__ import annotations

import json
import subprocess
import sys

MEMO = '---\ndoc_id: memo\nversion: "1"\ntitle: Memo\naccess: {access}\n---\n# Memo\n\n{text}\n'
OTHER = '---\ndoc_id: other\nversion: "1"\ntitle: Other\naccess: public\n---\n# Other\n\nShipping schedule.\n'
OVERRIDE = "documents/memo.md: memo@1 replaced in place (--accept-edits)"


def ingest(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ingest.cli", *map(str, args)], capture_output=True, text=True)


def _memo_narrowed_after_a_run(tmp_path, store_args):
    """A corpus whose memo was indexed public, then edited to staff without a version bump."""
    corpus = tmp_path / "corpus"
    (corpus / "documents").mkdir(parents=True)
    memo = corpus / "documents" / "memo.md"
    memo.write_text(MEMO.format(access="public", text="Old text about layoffs."), encoding="utf-8")
    (corpus / "documents" / "other.md").write_text(OTHER, encoding="utf-8")
    assert ingest("run", corpus, "--quiet", *store_args).returncode == 0
    memo.write_text(MEMO.format(access="staff", text="New text about layoffs."), encoding="utf-8")
    return corpus


def test_accepting_the_edit_of_a_withdrawn_version_is_reported_as_an_override(tmp_path, store_args):
    corpus = _memo_narrowed_after_a_run(tmp_path, store_args)
    withdrawn = json.loads(ingest("run", corpus, "--json", *store_args).stdout)
    assert [item["action"] for item in withdrawn["plan"]] == ["rejected", "removed"]

    dry = json.loads(ingest("run", corpus, "--accept-edits", "--dry-run", "--json", *store_args).stdout)
    done = ingest("run", corpus, "--accept-edits", "--json", *store_args)

    assert done.returncode == 0, done.stdout + done.stderr
    for data in (dry, json.loads(done.stdout)):
        assert data["overrides"] == [OVERRIDE]
        [item] = data["plan"]
        assert (item["action"], item["document"]) == ("new", "memo@1")
        assert "--accept-edits" in item["reason"] and "withdrawn" in item["reason"]
    search = ingest("search", "layoffs", "--role", "staff", "--json", *store_args)
    assert [hit["text"] for hit in json.loads(search.stdout)["hits"]] == ["Memo\n\nNew text about layoffs."]


def test_the_plain_report_prints_the_override_line(tmp_path, store_args):
    corpus = _memo_narrowed_after_a_run(tmp_path, store_args)
    assert ingest("run", corpus, "--quiet", *store_args).returncode == 1

    done = ingest("run", corpus, "--accept-edits", *store_args)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"! override {OVERRIDE}" in done.stdout
