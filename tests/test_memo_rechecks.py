"""What a re-run takes from the last run's scan memo, and what it must check again. Real stores only.

- A rejection by the parser's environment (its time limit, its memory cap, a parser process that died)
  says nothing about the file: the next run reads it again, on the fast unchanged path too.
- A limit that decides whether a document is taken (``[chunking] max_chunks_per_document``) is part of
  what the memo and the stored records vouch for: a change re-checks every file, as a fresh build would.
- A memory cap too small for the parser rejects the files it stops, never fails the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ingest import pipeline
from ingest.settings import load_settings
from ingest.store.sqlite import SQLiteStore
from ingest.workers import WORKER_OUT_OF_MEMORY, WorkerPool, results_in_order
from tests.corpus_builder import make_corpus, write_doc
from tests.test_parser_isolation import bomb_pdf

ROOT = Path(__file__).resolve().parents[1]
MiB = 1 << 20
STORES = ["sqlite", pytest.param("elasticsearch", marks=pytest.mark.elasticsearch)]


def _pdf_corpus(root: Path) -> Path:
    """Two Markdown documents and one small valid PDF (its metadata from the inventory)."""
    make_corpus(root, n=2)
    bomb_pdf(root / "documents" / "big.pdf", 0)  # nothing inflated: an ordinary one-page PDF
    (root / "inventory.yaml").write_text(
        "big.pdf:\n  doc_id: big\n  version: '1'\n  title: Big\n  access: public\n", encoding="utf-8"
    )
    return root


@pytest.fixture(params=STORES)
def target(request, tmp_path):
    """(a store for the API, the CLI's --store/--index-prefix arguments for the same store)."""
    if request.param == "sqlite":
        path = tmp_path / "index.sqlite"
        store = SQLiteStore(path)
        yield store, ["--store", f"sqlite:///{path}"]
        store.close()
    else:
        es_url, prefix = request.getfixturevalue("es_url"), request.getfixturevalue("es_prefix")
        yield request.getfixturevalue("make_es_store")(), ["--store", es_url, "--index-prefix", prefix]


def _cli(*args: object, env: dict[str, str] | None = None) -> tuple[int, dict, str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("INGEST_PARSER_", "INGEST_NO_FAST_NOOP", "INGEST_STORE", "INGEST_INDEX_PREFIX"))
    }
    command = [sys.executable, "-m", "ingest.cli", *map(str, args), "--json"]
    done = subprocess.run(command, env={**clean, **(env or {})}, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def _all_indexed_by_the_next_run(corpus: Path, where: list[str], store) -> None:
    """A plain `ingest run` (the CLI's default limits) parses the files again and indexes all three."""
    code, data, stderr = _cli("run", corpus, *where)
    assert code == 0, stderr
    assert data["documents"]["indexed"] == 3 and data["documents"]["rejected"] == 0
    assert {record.doc_id for record in store.documents()} == {"doc-0", "doc-1", "big"}


def test_a_file_stopped_by_the_time_limit_is_parsed_again_by_the_next_run(tmp_path, target):
    store, where = target
    corpus = _pdf_corpus(tmp_path / "corpus")
    settings = load_settings(corpus)
    # A thousandth of a second: no parser process even starts in time, on any machine (with a PDF in
    # the corpus every file is parsed in a parser process, so each one is stopped).
    first = pipeline.run(corpus, store, settings, settings.chunking, parser_timeout_s=0.001)
    assert not first.ok
    assert len(first.plan.problems) == 3
    assert all("time limit (0.001 s)" in p.problems[0] for p in first.plan.problems)

    # The default limit (the CLI's, with its fast unchanged path on Elasticsearch): the file goes in.
    _all_indexed_by_the_next_run(corpus, where, store)


def test_a_file_stopped_by_the_memory_cap_is_parsed_again_by_the_next_run(tmp_path, target):
    store, where = target
    corpus = _pdf_corpus(tmp_path / "corpus")
    # 8 MiB: less than a parser process needs for any file; each file is rejected, the run goes on.
    code, data, stderr = _cli("run", corpus, *where, env={"INGEST_PARSER_MEMORY_MB": "8"})
    assert code == 1, stderr
    assert data["documents"]["rejected"] == 3 and data["documents"]["indexed"] == 0
    for record in data["problems"]:
        (problem,) = record["problems"]
        assert "memory" in problem or "parser process died" in problem, problem

    _all_indexed_by_the_next_run(corpus, where, store)


def test_a_file_whose_parser_process_died_is_parsed_again_by_the_next_run(tmp_path, target):
    store, _ = target
    corpus = make_corpus(tmp_path / "corpus", n=2)
    bomb_pdf(corpus / "documents" / "big.pdf", 80 * MiB)  # a valid PDF whose content inflates to 80 MiB
    (corpus / "inventory.yaml").write_text(
        "big.pdf:\n  doc_id: big\n  version: '1'\n  title: Big\n  access: public\n", encoding="utf-8"
    )
    settings = load_settings(corpus)
    first = pipeline.run(corpus, store, settings, settings.chunking, parser_memory_limit=56 * MiB)
    assert [p.source for p in first.plan.problems] == ["documents/big.pdf"]
    assert "the parser process died" in first.plan.problems[0].problems[0]

    # The cap that stopped it says nothing about the file: without it, the file goes in.
    second = pipeline.run(corpus, store, settings, settings.chunking, parser_memory_limit=0)
    assert second.ok, second.plan.problems
    assert {record.doc_id for record in store.documents()} == {"doc-0", "doc-1", "big"}


def _limit_chunks(corpus: Path, limit: int | None) -> None:
    toml = corpus / "ingest.toml"
    toml.write_text("" if limit is None else f"[chunking]\nmax_chunks_per_document = {limit}\n", encoding="utf-8")


def test_lowering_max_chunks_per_document_rechecks_every_file(tmp_path, target):
    store, where = target
    corpus = make_corpus(tmp_path / "corpus", n=2)
    long = "\n\n".join(f"## Part {i}\n\nPart {i} of the long manual covers the bilge pump." for i in range(6))
    write_doc(corpus, "long.md", "long-manual", extra="\n" + long + "\n")
    _limit_chunks(corpus, None)
    code, data, stderr = _cli("run", corpus, *where)
    assert code == 0 and data["documents"]["indexed"] == 3, stderr
    counts = {r.doc_id: r.chunk_count for r in store.documents()}
    limit = max(counts.values()) - 1
    assert min(counts.values()) <= limit  # one document over the limit, the others under it

    _limit_chunks(corpus, limit)
    dry_code, dry, _ = _cli("run", corpus, *where, "--dry-run")
    code, data, stderr = _cli("run", corpus, *where)

    assert dry_code == code == 1, stderr
    for report in (dry, data):
        assert report["documents"]["rejected"] == 1 and report["documents"]["unchanged"] == 0
        (record,) = report["problems"]
        assert record["doc_id"] == "long-manual" and "too many chunks" in record["problems"][0]
    # As for a changed max_chunk_bytes: the refused document's stored version is kept, the others rebuilt.
    assert {r.doc_id: r.chunk_count for r in store.documents()} == counts

    _limit_chunks(corpus, None)
    code, data, stderr = _cli("run", corpus, *where)
    assert code == 0 and data["documents"]["rejected"] == 0, stderr
    code, data, stderr = _cli("run", corpus, *where)
    assert code == 0 and data["documents"]["unchanged"] == 3, stderr


def _square_or_out_of_memory(items: list[int]) -> list[int]:
    if any(item < 0 for item in items):
        raise MemoryError  # what the task raises under RLIMIT_DATA outside anything that catches it
    return [item * item for item in items]


def _gave_up(item: int, reason: str) -> int:
    return (-1000 if reason == WORKER_OUT_OF_MEMORY else -2000) + item


def _no_init() -> None:
    pass


def test_a_memory_error_out_of_a_task_costs_only_its_item():
    items = [1, 2, 3, -4, 5, 6, 7]
    pool = WorkerPool(
        _square_or_out_of_memory, _gave_up, 2, group=3, window_per_worker=2, initializer=_no_init, initargs=()
    )

    assert list(results_in_order(pool, items)) == [1, 4, 9, -1004, 25, 36, 49]
