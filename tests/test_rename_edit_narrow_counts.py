"""A file renamed, edited without a version bump and narrowed at once: the stored version is withdrawn
and the old path is a removal, not a second rejected document (seen = indexed + unchanged + rejected),
in plain output, --json and --junit alike."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ingest.cli import app
from tests.corpus_builder import write_doc

runner = CliRunner()


def test_rename_edit_and_narrow_counts_one_rejected_document(tmp_path):
    corpus = tmp_path / "corpus"
    old = write_doc(corpus, "b.md", "b", access="public")
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    assert runner.invoke(app, ["run", str(corpus), "--store", store, "-q"]).exit_code == 0
    edited = old.read_text(encoding="utf-8").replace("access: public", "access: staff") + "\nEdited.\n"
    old.unlink()
    (corpus / "documents" / "b2.md").write_text(edited, encoding="utf-8")
    junit = tmp_path / "junit.xml"
    done = runner.invoke(app, ["run", str(corpus), "--store", store, "--json", "--junit", str(junit)])
    assert done.exit_code == 1, done.output
    data = json.loads(done.stdout)
    counts = data["documents"]
    assert (counts["seen"], counts["rejected"], counts["removed"]) == (1, 1, 1)
    assert counts["seen"] == counts["indexed"] + counts["unchanged"] + counts["rejected"]
    assert [p["source"] for p in data["problems"]] == ["documents/b2.md"]
    assert any("is withdrawn" in line for line in data["problems"][0]["problems"])
    assert junit.read_text(encoding="utf-8").count("<testcase ") == 1
    search = runner.invoke(app, ["search", "b", "--role", "public", "--store", store, "--json"])
    assert json.loads(search.stdout)["hits"] == []
