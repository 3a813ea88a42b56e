"""A refused --strict run counts what its plan lines say (outside pass: valid documents held back were
plan lines `rejected` or `kept` that no count included, so seen != indexed + unchanged + rejected)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

from tests.corpus_builder import write_doc


def ingest(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ingest.cli", *map(str, args)], capture_output=True, text=True)


def test_the_counts_of_a_refused_strict_run_agree_with_its_plan_lines(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "a.md", "a-doc")
    edited = write_doc(corpus, "b.md", "b-doc", salt="zebracorn")
    assert ingest("run", corpus, "--quiet", *store_args).returncode == 0
    write_doc(corpus, "c.md", "c-doc")  # new
    edited.write_text(edited.read_text(encoding="utf-8").replace("access: public", "access: public\ntags: [x]"))
    (corpus / "documents" / "bad.md").write_text("---\ndoc_id: BAD\n---\nx\n", encoding="utf-8")

    done = ingest("run", corpus, "--strict", "--json", "--junit", tmp_path / "run.xml", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    counts = data["documents"]
    assert counts == {**counts, "seen": 4, "indexed": 0, "unchanged": 1, "rejected": 3, "removed": 0}
    lines = {(item["action"], item["document"]) for item in data["plan"]}
    assert lines == {("rejected", "b-doc@1"), ("rejected", "c-doc@1")}
    assert [p["source"] for p in data["problems"]] == ["documents/bad.md"]
    suite = ET.parse(tmp_path / "run.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("4", "3")

    plain = ingest("run", corpus, "--strict", *store_args)
    assert "documents: 4 seen, 0 indexed, 1 unchanged, 3 rejected, 0 removed" in plain.stdout
    assert "--strict: 1 document(s) rejected (and 2 valid one(s) not written); nothing written" in plain.stdout
    assert [line.split()[:2] for line in plain.stdout.splitlines() if line.startswith("  rejected")] == [
        ["rejected", "b-doc@1"],
        ["rejected", "c-doc@1"],
    ]
    search = ingest("search", "zebracorn", "--json", *store_args)  # the stored version of b stays
    assert {hit["doc_id"] for hit in json.loads(search.stdout)["hits"]} == {"b-doc"}


def test_a_strict_dry_run_shows_the_refusal_the_strict_run_would_make(tmp_path, store_args):
    """--strict --dry-run prints what --strict would do (it previewed the non-strict plan: "1 indexed")."""
    corpus = tmp_path / "corpus"
    write_doc(corpus, "a.md", "a-doc")
    assert ingest("run", corpus, "--quiet", *store_args).returncode == 0
    write_doc(corpus, "c.md", "c-doc", salt="zebracorn")  # new, valid
    (corpus / "documents" / "bad.md").write_text("---\ndoc_id: BAD\n---\nx\n", encoding="utf-8")

    preview = ingest("run", corpus, "--strict", "--dry-run", "--json", *store_args)
    refused = ingest("run", corpus, "--strict", "--json", *store_args)

    assert (preview.returncode, refused.returncode) == (1, 1), preview.stdout + preview.stderr
    would, did = json.loads(preview.stdout), json.loads(refused.stdout)
    assert would["dry_run"] is True
    assert would["documents"] == did["documents"]
    assert would["documents"]["indexed"] == 0 and would["documents"]["rejected"] == 2
    assert would["plan"] == did["plan"]
    assert would["strict"].startswith("would be refused")
    plain = ingest("run", corpus, "--strict", "--dry-run", *store_args)
    assert "nothing would be written" in plain.stdout
    assert json.loads(ingest("search", "zebracorn", "--json", *store_args).stdout)["hits"] == []
