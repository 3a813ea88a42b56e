"""The scan's write batches go to the store from a writer thread while the workers keep parsing:
what a user relies on is that this changes nothing they can see — the same chunks and records as a
build written batch by batch, a store failure mid-run still stops the run with the same error (exit
3) and nothing written after it, the next run converges — and that a first build, which skips the
look-up of copies under other labels, still never leaves a chunk under a label it does not have."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from ingest import pipeline
from ingest.cli import app
from ingest.settings import Settings
from ingest.store.base import Access, StoreError, StoreUnavailable
from ingest.store.elasticsearch import ElasticsearchStore
from ingest.store.sqlite import SQLiteStore
from tests.corpus_builder import make_corpus, write_doc
from tests.faultproxy import FaultProxy

SETTINGS = Settings()
FAST = {"max_retries": 1, "initial_backoff": 0.05, "timeout": 3.0}


def records(store) -> tuple[list[dict], list[dict]]:
    chunks = sorted((c.to_json() for c in store.iter_chunks()), key=lambda c: c["chunk_id"])
    docs = [{k: v for k, v in r.to_json().items() if k != "indexed_at"} for r in store.documents()]
    return chunks, sorted(docs, key=lambda r: (r["doc_id"], r["version"]))


def clean_build(corpus: Path, tmp_path: Path) -> tuple[list[dict], list[dict]]:
    """A --full build into a fresh SQLite file, one write batch for everything."""
    store = SQLiteStore(tmp_path / "clean.sqlite")
    try:
        assert pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking, full=True, write_batch_chunks=100_000).ok
        return records(store)
    finally:
        store.close()


@pytest.mark.elasticsearch
def test_a_first_build_in_many_small_batches_writes_what_one_batch_writes_on_both_stores(tmp_path, es_url, es_prefix):
    corpus = make_corpus(tmp_path / "corpus", n=24)
    expected = clean_build(corpus, tmp_path)
    sqlite = SQLiteStore(tmp_path / "batched.sqlite")
    es = ElasticsearchStore(es_url, prefix=es_prefix, settings=SETTINGS)
    try:
        for store in (sqlite, es):
            result = pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking, write_batch_chunks=3)
            assert result.ok and result.written == len(expected[0])
            assert records(store) == expected
            assert pipeline.verify(corpus, store, SETTINGS).ok
    finally:
        sqlite.close()
        es.close()


@pytest.mark.elasticsearch
def test_a_bulk_failure_in_the_writer_thread_mid_build_stops_the_run_and_the_next_run_converges(
    tmp_path, es_url, es_prefix
):
    corpus = make_corpus(tmp_path / "corpus", n=30)
    with FaultProxy(es_url) as proxy:
        # The first bulk goes through; from the second on, every bulk is refused (a 503 storm).
        first_bulk = threading.Event()

        def storm_after_first_bulk() -> None:
            while not first_bulk.is_set():
                if any("/_bulk" in line for line in list(proxy.log)):
                    proxy.add(r"/_bulk", "status", status=503)
                    first_bulk.set()
                first_bulk.wait(0.01)

        watcher = threading.Thread(target=storm_after_first_bulk, daemon=True)
        watcher.start()
        store = ElasticsearchStore(proxy.url, prefix=es_prefix, settings=SETTINGS, **FAST)
        try:
            with pytest.raises(StoreUnavailable, match="overloaded or unavailable") as failure:
                pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking, write_batch_chunks=4)
        finally:
            first_bulk.set()
            with contextlib.suppress(StoreError):
                store.close()
        assert proxy.url in str(failure.value)
        log = list(proxy.log)
        # Nothing was sent after the run released its lock (the writer thread had stopped).
        release = max(i for i, line in enumerate(log) if line.startswith("DELETE") and "/_doc/lock" in line)
        assert all("/_bulk" not in line for line in log[release:])
    # The lock is free, and the next run repairs what the failed one left: nothing lost.
    store = ElasticsearchStore(es_url, prefix=es_prefix, settings=SETTINGS)
    try:
        assert pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking).ok
        assert pipeline.verify(corpus, store, SETTINGS).ok
        assert records(store) == clean_build(corpus, tmp_path)
    finally:
        store.close()


class _FailingSQLite(SQLiteStore):
    """A SQLite store whose third chunk write fails the way a full disk does (in the writer thread)."""

    writes = 0

    def write_chunks(self, chunks):
        type(self).writes += 1
        if type(self).writes == 3:
            raise StoreUnavailable(f"{self.name}: the disk is full (while writing)")
        return super().write_chunks(chunks)


def test_a_store_failure_in_the_writer_thread_is_the_runs_error_and_the_next_run_converges(tmp_path):
    corpus = make_corpus(tmp_path / "corpus", n=24)
    store = _FailingSQLite(tmp_path / "index.sqlite")
    try:
        with pytest.raises(StoreUnavailable, match="the disk is full"):
            pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking, write_batch_chunks=3)
        # No batch after the failing one was written: the third write raised, no fourth was tried.
        assert _FailingSQLite.writes == 3
    finally:
        store.close()
    # What the stopped build left is shown as such, not as a build made of placeholders.
    shown = CliRunner().invoke(app, ["stats", "--store", f"sqlite:///{tmp_path / 'index.sqlite'}"])
    assert shown.exit_code == 0, shown.output
    assert "no finished build recorded" in shown.stdout and "None" not in shown.stdout
    again = SQLiteStore(tmp_path / "index.sqlite")
    try:
        assert pipeline.run(corpus, again, SETTINGS, SETTINGS.chunking).ok
        assert pipeline.verify(corpus, again, SETTINGS).ok
        assert records(again) == clean_build(corpus, tmp_path)
    finally:
        again.close()


def _label_of_copies(es_url: str, prefix: str, chunk_ids: list[str]) -> dict[str, list[str]]:
    """chunk ID -> the access labels whose concrete index holds a copy (read directly, not via aliases)."""
    client = Elasticsearch(es_url)
    try:
        found: dict[str, list[str]] = {cid: [] for cid in chunk_ids}
        for label in SETTINGS.labels:
            index = f"{prefix}-chunks_{label}_*"
            hits = client.search(index=index, query={"ids": {"values": chunk_ids}}, size=10_000, source=False)
            for hit in hits["hits"]["hits"]:
                found[hit["_id"]].append(label)
        return found
    finally:
        client.close()


@pytest.mark.elasticsearch
def test_a_label_change_on_the_same_store_object_after_a_first_build_leaves_no_copy_under_the_old_label(
    tmp_path, es_url, es_prefix
):
    corpus = make_corpus(tmp_path / "corpus", n=6)
    store = ElasticsearchStore(es_url, prefix=es_prefix, settings=SETTINGS)
    try:
        assert pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking).ok  # created the indices
        doc0 = {r.key: r for r in store.documents()}["doc-0@1"]
        assert doc0.access == "public"
        path = corpus / "documents/folder0/doc0.md"  # the same text, now for staff only: the same chunk IDs
        path.write_text(path.read_text(encoding="utf-8").replace("access: public", "access: staff"), encoding="utf-8")
        assert pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking).ok
        store.refresh()
        now = {r.key: r for r in store.documents()}["doc-0@1"]
        assert now.access == "staff" and now.chunk_ids == doc0.chunk_ids
        copies = _label_of_copies(es_url, es_prefix, list(now.chunk_ids))
        assert copies and all(labels == ["staff"] for labels in copies.values())
        public = store.search("doc-0 overview", Access(("public",), "public"), None, top=50)
        assert not any(h.chunk.doc_id == "doc-0" for h in public)
    finally:
        store.close()


@pytest.mark.elasticsearch
def test_two_files_claiming_one_version_under_two_labels_leave_no_chunk_in_a_first_build(tmp_path, es_url, es_prefix):
    corpus = make_corpus(tmp_path / "corpus", n=6)
    write_doc(corpus, "public/twin.md", "twin", access="public")
    write_doc(corpus, "staff/twin.md", "twin", access="staff")  # same doc_id, version and text: same chunk IDs
    store = ElasticsearchStore(es_url, prefix=es_prefix, settings=SETTINGS)
    try:
        result = pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking, write_batch_chunks=1)
        assert not result.ok and {p.source for p in result.plan.problems} == {
            "documents/public/twin.md",
            "documents/staff/twin.md",
        }
        store.refresh()
        assert store.document_chunks("twin") == []
        # The count says what the run left in the store: the twins' chunks, written then removed, are not in it.
        assert result.written == result.total == sum(r.chunk_count for r in store.documents())
        assert pipeline.verify(corpus, store, SETTINGS).chunks == sum(r.chunk_count for r in store.documents())
    finally:
        store.close()
