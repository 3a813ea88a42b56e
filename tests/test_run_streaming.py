"""A first build streams: parser processes hand over chunked documents a few files at a time, the
chunks are written in batches during the scan, and a run keeps only a compact handle per document
until its record is written. What a user relies on: none of that changes what ends up in the store.
A first build through the parser processes (a corpus above the in-process threshold) in many small
write batches gives exactly the records of one in-process batch, and versions written during the
scan that the checks between documents then reject leave no chunk behind."""

from __future__ import annotations

from pathlib import Path

from ingest import pipeline
from ingest.corpus import PARALLEL_MIN_FILES
from ingest.settings import Settings
from ingest.store.sqlite import SQLiteStore
from tests.corpus_builder import make_corpus, write_doc

SETTINGS = Settings()


def records(store: SQLiteStore) -> tuple[list[dict], list[dict]]:
    chunks = sorted((c.to_json() for c in store.iter_chunks()), key=lambda c: c["chunk_id"])
    docs = [{k: v for k, v in r.to_json().items() if k != "indexed_at"} for r in store.documents()]
    return chunks, sorted(docs, key=lambda r: (r["doc_id"], r["version"]))


def test_a_streamed_first_build_through_parser_processes_writes_what_one_batch_writes(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path / "corpus", n=PARALLEL_MIN_FILES + 10)
    one = SQLiteStore(tmp_path / "one.sqlite")
    streamed = SQLiteStore(tmp_path / "streamed.sqlite")
    try:
        assert pipeline.run(corpus, one, SETTINGS, SETTINGS.chunking, workers=1, write_batch_chunks=1_000_000).ok
        result = pipeline.run(corpus, streamed, SETTINGS, SETTINGS.chunking, workers=2, write_batch_chunks=5)
        assert result.ok and result.written == len(records(one)[0])
        assert records(streamed) == records(one)
        assert pipeline.verify(corpus, streamed, SETTINGS).ok
    finally:
        one.close()
        streamed.close()


def test_versions_written_during_a_streamed_scan_then_rejected_leave_no_chunk(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path / "corpus", n=PARALLEL_MIN_FILES + 10)
    write_doc(corpus, "a/twin.md", "twin", access="public")
    write_doc(corpus, "z/twin.md", "twin", access="staff")  # the same version twice: both rejected after the scan
    store = SQLiteStore(tmp_path / "index.sqlite")
    try:
        result = pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking, workers=2, write_batch_chunks=5)
        assert not result.ok
        assert {p.source for p in result.plan.problems} == {"documents/a/twin.md", "documents/z/twin.md"}
        assert store.document_chunks("twin") == []
        assert len(store.documents()) == PARALLEL_MIN_FILES + 10
        assert store.counts()["totals"]["chunks"] == sum(r.chunk_count for r in store.documents())
        assert pipeline.verify(corpus, store, SETTINGS).ok
    finally:
        store.close()
