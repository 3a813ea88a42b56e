"""A parser process that dies — a decompression bomb past the parser's memory cap, a crash in native
code — costs only the file it was on: that file is rejected with the reason, every other file is
parsed and indexed, and results keep their order."""

from __future__ import annotations

import os
import time
import zlib
from pathlib import Path

import pytest

from ingest import pipeline
from ingest.corpus import scan_corpus
from ingest.settings import load_settings
from ingest.store.sqlite import SQLiteStore
from ingest.workers import WorkerPool, results_in_order
from tests.corpus_builder import make_corpus

MiB = 1 << 20


def bomb_pdf(path: Path, inflated_bytes: int) -> None:
    """A one-page PDF whose content stream inflates to ``inflated_bytes`` (a few hundred KB on disk)."""
    packer = zlib.compressobj(9)
    head = b"BT /F1 12 Tf 72 700 Td (Hello bomb) Tj ET\n"
    parts = [packer.compress(head)]
    blank = b" " * MiB
    parts += [packer.compress(blank) for _ in range(inflated_bytes // MiB)]
    parts.append(packer.flush())
    stream = b"".join(parts)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(out)


@pytest.fixture
def bombed_corpus(tmp_path):
    root = make_corpus(tmp_path / "corpus", n=4)
    bomb_pdf(root / "documents" / "bomb.pdf", 600 * MiB)
    (root / "inventory.yaml").write_text(
        "bomb.pdf:\n  doc_id: bomb\n  version: '1'\n  title: Bomb\n  access: public\n", encoding="utf-8"
    )
    return root


def test_a_bomb_past_the_memory_cap_rejects_that_file_only(bombed_corpus):
    scan = scan_corpus(bombed_corpus, load_settings(bombed_corpus), parser_memory_limit=256 * MiB)

    assert [d.meta.doc_id for d in scan.documents] == ["doc-0", "doc-2", "doc-1", "doc-3"]
    assert [p.source for p in scan.rejected] == ["documents/bomb.pdf"]
    (reason,) = scan.rejected[0].problems
    assert reason.startswith("documents/bomb.pdf: unreadable file: the parser process died")
    assert scan.rejected[0].doc_id == "bomb"


def test_run_indexes_the_others_and_withdraws_what_it_can_no_longer_read(bombed_corpus, tmp_path):
    bomb = bombed_corpus / "documents" / "bomb.pdf"
    bytes_of_bomb = bomb.read_bytes()
    # First a harmless version of the same document is stored …
    bomb_pdf(bomb, 0)
    settings = load_settings(bombed_corpus)
    store = SQLiteStore(tmp_path / "index.sqlite")
    try:
        first = pipeline.run(bombed_corpus, store, settings, settings.chunking)
        assert first.ok
        stored = {record.doc_id for record in store.documents()}
        assert "bomb" in stored
        # … then the file becomes a bomb: the run reports it; its access can no longer be read, so
        # the stored version is withdrawn (fail closed), and every other document stays.
        bomb.write_bytes(bytes_of_bomb)
        second = pipeline.run(
            bombed_corpus, store, settings, settings.chunking, accept_edits=True, parser_memory_limit=256 * MiB
        )
        assert not second.ok
        assert [p.source for p in second.plan.problems] == ["documents/bomb.pdf"]
        reasons = " ".join(second.plan.problems[0].problems)
        assert "parser process died" in reasons and "withdrawn" in reasons
        assert {record.doc_id for record in store.documents()} == stored - {"bomb"}
    finally:
        store.close()


def _square_or_die(items: list[int]) -> list[int]:
    for item in items:
        if item < 0:
            os._exit(3)  # a worker dying without a word, as a native crash does
    return [item * item for item in items]


def _died(item: int, reason: str) -> int:
    return (-1000 if "died" in reason else -2000) + item


def _square_or_hang(items: list[int]) -> list[int]:
    if 0 in items:
        time.sleep(3600)  # a parser stuck in native code
    return [item * item for item in items]


def _no_init() -> None:
    pass


@pytest.mark.parametrize("workers", [1, 2])
def test_results_keep_their_order_around_dead_workers(workers):
    items = [1, 2, 3, -4, 5, 6, 7, 8, -9, 10, 11, 12, 13]
    pool = WorkerPool(_square_or_die, _died, workers, group=3, window_per_worker=2, initializer=_no_init, initargs=())

    results = list(results_in_order(pool, items))

    assert results == [1, 4, 9, -1004, 25, 36, 49, 64, -1009, 100, 121, 144, 169]


def test_a_stuck_worker_is_stopped_and_only_its_item_fails():
    items = [1, 2, 0, 3, 4]
    pool = WorkerPool(
        _square_or_hang, _died, 2, group=2, window_per_worker=1, initializer=_no_init, initargs=(), item_timeout_s=2
    )

    assert list(results_in_order(pool, items)) == [1, 4, -2000, 9, 16]


def test_the_cli_reads_the_parser_memory_cap_from_the_environment(bombed_corpus, tmp_path):
    import json
    import subprocess
    import sys

    store = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    command = [sys.executable, "-m", "ingest.cli", "run", str(bombed_corpus), "--store", store, "--json"]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "INGEST_PARSER_MEMORY_MB": "256"})

    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["documents"]["indexed"] == 4 and data["documents"]["rejected"] == 1
    assert "parser process died" in data["problems"][0]["problems"][0]

    bad = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "INGEST_PARSER_MEMORY_MB": "lots"})
    assert bad.returncode == 2 and "INGEST_PARSER_MEMORY_MB" in bad.stdout + bad.stderr
