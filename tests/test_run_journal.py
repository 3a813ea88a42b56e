"""The run journal and the no-op fast path: repair reads only what a killed run wrote down,
and an unchanged re-run reads neither every chunk key nor any file's metadata."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ingest import file_check, pipeline
from ingest.settings import load_settings
from ingest.store.sqlite import SQLiteStore
from tests.corpus_builder import make_corpus, write_doc
from tests.test_pipeline_sync import _cli, assert_equals_clean_build, run, target  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]


def _orphans(store) -> set[str]:
    listed = {cid for r in store.documents() for cid in r.chunk_ids}
    return {cid for cid, _, _ in store.chunk_keys()} - listed


def test_a_killed_run_leaves_a_journal_of_what_it_touched_and_the_next_run_repairs_and_clears_it(tmp_path, target):
    corpus = make_corpus(tmp_path / "corpus", n=12)
    subprocess.run(_cli("run", str(corpus), *target.args(), "--json"), check=True, capture_output=True)
    for i in range(0, 12, 2):
        write_doc(corpus, f"folder{i % 2}/doc{i}.md", f"doc-{i}", version="2", salt="new text")
    killed = subprocess.run(
        [sys.executable, "-m", "tests.crash_run", "3", "run", str(corpus), *target.args(), "--json"],
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "INGEST_WRITE_BATCH_CHUNKS": "1"},
    )
    assert killed.returncode == -signal.SIGKILL
    store = target.open(corpus)
    if target.prefix:  # make the killed run's last writes visible to this test's searches at once
        store.es.indices.refresh(index=f"{target.prefix}-*")
    try:
        journal = pipeline.read_journal(store.get_meta())
        assert journal and all(version == "2" for _, version in journal)
        # Whatever the killed run left unlisted belongs to a version its journal names: repair needs nothing else.
        keys = {(doc_id, version) for _, doc_id, version in store.chunk_keys()}
        orphans = _orphans(store)
        assert keys & journal and {(d, v) for cid, d, v in store.chunk_keys() if cid in orphans} <= journal
    finally:
        store.close()
    done = subprocess.run(_cli("run", str(corpus), *target.args(), "--json"), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    store = target.open(corpus)
    try:
        assert pipeline.read_journal(store.get_meta()) == set()
        assert_equals_clean_build(corpus, store, tmp_path)
        assert pipeline.verify(corpus, store, load_settings(corpus)).ok
    finally:
        store.close()


@pytest.mark.parametrize("counted", ["write_chunks", "put_documents"], ids=["chunks-only", "a-record-too"])
def test_a_killed_first_build_is_reported_as_repaired_by_the_next_run(tmp_path, target, counted):
    """A first build killed after its first chunk write (or its first record too) leaves no finished
    build; the next run builds again, says why and what it threw away, with `repaired` in the shape
    of every other run."""
    import json

    corpus = make_corpus(tmp_path / "corpus", n=12)
    killed = subprocess.run(
        [sys.executable, "-m", "tests.crash_run", "1", "run", str(corpus), *target.args(), "--json"],
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "INGEST_WRITE_BATCH_CHUNKS": "1", "INGEST_TEST_CRASH_COUNTS": counted},
    )
    assert killed.returncode == -signal.SIGKILL
    done = subprocess.run(_cli("run", str(corpus), *target.args(), "--json"), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    if counted == "write_chunks":  # killed between a batch's chunks and its records: they are unlisted
        assert report["repaired"]["orphan_chunks"] >= 1
    else:  # a batch's records follow its chunks: the killed run left nothing no record lists
        assert report["repaired"]["orphan_chunks"] == 0
    assert report["repaired"]["incomplete_documents"] == 0
    assert {item["reason"] for item in report["plan"]} == {"an earlier first build was interrupted; building again"}
    plain = subprocess.run(_cli("run", str(corpus), *target.args()), capture_output=True, text=True)
    assert json.loads(
        subprocess.run(_cli("run", str(corpus), *target.args(), "--json"), capture_output=True, text=True).stdout
    )["repaired"] == {"orphan_chunks": 0, "incomplete_documents": 0}
    assert "repaired" not in plain.stdout
    store = target.open(corpus)
    try:
        assert_equals_clean_build(corpus, store, tmp_path)
        assert pipeline.verify(corpus, store, load_settings(corpus)).ok
    finally:
        store.close()


class _NoChunkScan(SQLiteStore):
    """A real SQLite store that refuses to list every chunk key (what repair used to do each run)."""

    def chunk_keys(self):
        raise AssertionError("an unchanged run listed every chunk key")


def test_an_unchanged_run_lists_no_chunk_keys_and_reads_no_metadata(tmp_path, monkeypatch):
    corpus = make_corpus(tmp_path / "corpus", n=8)
    store = SQLiteStore(tmp_path / "index.sqlite")
    first = run(corpus, store, workers=1)
    assert first.ok
    store.close()
    guarded = _NoChunkScan(tmp_path / "index.sqlite")

    def refuse(*args, **kwargs):
        raise AssertionError("an unchanged file was read for its metadata")

    monkeypatch.setattr(file_check, "read_metadata", refuse)
    monkeypatch.setattr(file_check, "parse_bytes", refuse)
    again = run(corpus, guarded, workers=1)
    assert again.ok and again.to_json()["documents"]["unchanged"] == 8
    assert again.total == first.total and again.repaired == {"orphan_chunks": 0, "incomplete_documents": 0}
    guarded.close()


def test_a_changed_inventory_is_read_again_though_no_file_changed(tmp_path):
    corpus = make_corpus(tmp_path / "corpus", n=4)
    store = SQLiteStore(tmp_path / "index.sqlite")
    assert run(corpus, store, workers=1).ok
    (corpus / "inventory.yaml").write_text("folder0/doc0.md:\n  tags: [from-inventory]\n", encoding="utf-8")
    result = run(corpus, store, workers=1)
    assert result.ok, result.to_json()["problems"]
    assert {i.key: i.action for i in result.plan.items if i.action != "unchanged"} == {"doc-0@1": "changed"}
    assert "tags" in next(i.reason for i in result.plan.items if i.key == "doc-0@1")
    assert pipeline.verify(corpus, store, load_settings(corpus)).ok
    store.close()


def test_a_rejected_file_is_reported_again_without_being_parsed_again(tmp_path, monkeypatch):
    corpus = make_corpus(tmp_path / "corpus", n=4)
    (corpus / "documents/bad.md").write_text("---\ntitle: no doc_id or version\n---\n\nBody.\n", encoding="utf-8")
    store = SQLiteStore(tmp_path / "index.sqlite")
    first = run(corpus, store, workers=1)
    assert not first.ok and [p.source for p in first.plan.problems] == ["documents/bad.md"]

    def refuse(*args, **kwargs):
        raise AssertionError("a file whose bytes did not change was parsed again")

    monkeypatch.setattr(file_check, "read_metadata", refuse)
    monkeypatch.setattr(file_check, "parse_bytes", refuse)
    again = run(corpus, store, workers=1)
    assert [p.to_json() for p in again.plan.problems] == [p.to_json() for p in first.plan.problems]
    monkeypatch.undo()
    (corpus / "documents/bad.md").write_text("---\ntitle: still no doc_id\n---\n\nOther body.\n", encoding="utf-8")
    third = run(corpus, store, workers=1)
    assert [p.source for p in third.plan.problems] == ["documents/bad.md"] and not third.ok
    store.close()


def test_the_scan_memo_is_not_trusted_across_metadata_rule_versions(monkeypatch):
    """A release that changes what valid metadata is (RULES_VERSION) must re-check files the last
    run's memo vouched for: 49 TeX Live manuals stayed rejected by a fixed rule until it did."""
    from ingest import corpus
    from ingest.settings import Settings

    before = corpus.scan_fingerprint(b"x", Settings())
    monkeypatch.setattr(corpus, "RULES_VERSION", corpus.RULES_VERSION + "-next")
    assert corpus.scan_fingerprint(b"x", Settings()) != before
