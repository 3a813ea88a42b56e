"""A large corpus is parsed in worker processes: the scan must be exactly the serial one."""

from __future__ import annotations

from ingest.corpus import PARALLEL_MIN_FILES, scan_corpus
from ingest.settings import load_settings
from tests.corpus_builder import make_corpus, write_doc


def test_parallel_scan_equals_serial_scan(tmp_path, monkeypatch):
    corpus = make_corpus(tmp_path / "corpus", n=PARALLEL_MIN_FILES + 6)
    write_doc(corpus, "bad/slug.md", "Not A Slug")
    (corpus / "documents" / "bad" / "empty.txt").write_bytes(b"")
    settings = load_settings(corpus)
    monkeypatch.setenv("INGEST_WORKERS", "1")
    serial = scan_corpus(corpus, settings)
    monkeypatch.setenv("INGEST_WORKERS", "2")
    seen: list[str] = []
    parallel = scan_corpus(corpus, settings, on_file=seen.append)
    assert parallel == serial
    assert len(parallel.documents) == PARALLEL_MIN_FILES + 6 and len(parallel.rejected) == 2
    assert seen == sorted(seen) and len(seen) == parallel.seen
