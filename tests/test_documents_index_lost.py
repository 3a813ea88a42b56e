"""The document records lost outside ingest (the documents index deleted by hand on the real plain node,
the documents table of a SQLite store emptied) while the chunks stay: the next run cannot tell which
chunks are whose, at which access, so it rebuilds everything (as --full) and says why on every document.
No old chunk stays readable: an edit that narrowed a document's access without a version bump included,
and later runs report what they remove."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from tests.conftest import CONNECTION_ENV

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys\nfrom ingest.cli import main\nsys.argv = ['ingest', *sys.argv[1:]]\nmain()\n"
# The unchanged-run check over plain HTTP (the default) and the full path: both must notice.
PATHS = {"fast no-op check": {}, "full path": {"INGEST_NO_FAST_NOOP": "1"}}
MEMO = '---\ndoc_id: memo\nversion: "1"\ntitle: Memo\naccess: {access}\n---\n# Memo\n\nIntro.\n\n## Part two\n\n{text}\n'
OTHER = '---\ndoc_id: other\nversion: "1"\ntitle: Other\naccess: public\n---\n# Other\n\nShipping schedule.\n'
REASON = "the document records were missing"


def cli(store: tuple[str, ...], env: dict[str, str], *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, *map(str, args), *store],
        env={k: v for k, v in os.environ.items() if k not in CONNECTION_ENV} | env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def run_json(store: tuple[str, ...], env: dict[str, str], corpus: Path) -> dict:
    done = cli(store, env, "run", corpus, "--json")
    assert done.returncode == 0, (done.stdout, done.stderr)
    return json.loads(done.stdout)


def hits(store: tuple[str, ...], env: dict[str, str], query: str, role: str) -> list[str]:
    done = cli(store, env, "search", query, "--role", role, "--json")
    assert done.returncode == 0, (done.stdout, done.stderr)
    return [hit["text"] for hit in json.loads(done.stdout)["hits"]]


def make_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    (corpus / "documents").mkdir(parents=True)
    (corpus / "documents" / "memo.md").write_text(MEMO.format(access="public", text="Old text about layoffs."))
    (corpus / "documents" / "other.md").write_text(OTHER)
    return corpus


def check_rebuilt(store: tuple[str, ...], env: dict[str, str], corpus: Path) -> None:
    """After the records were lost: edit memo's text and narrow it to staff without a version bump."""
    memo = corpus / "documents" / "memo.md"
    memo.write_text(MEMO.format(access="staff", text="New wording about layoffs and more."))
    said = f"rebuilt as --full: {REASON} (documents index deleted or emptied outside ingest); "
    dry = cli(store, env, "run", corpus, "--dry-run")
    assert f"would be {said}" in dry.stdout and "interrupted" not in dry.stdout, dry.stdout
    done = cli(store, env, "run", corpus, "--json", "--junit", corpus.parent / "run.xml")
    assert done.returncode == 0, (done.stdout, done.stderr)
    result = json.loads(done.stdout)
    assert result["documents"]["indexed"] == 2
    assert all(REASON in item["reason"] for item in result["plan"]), result["plan"]
    # what happened, the same in --json, --junit and plain (outside pass: "repaired an interrupted run")
    assert result["repaired"] == {"orphan_chunks": 0, "incomplete_documents": 0}
    assert said.removeprefix("rebuilt as --full: ") in result["rebuilt"]
    assert said in (corpus.parent / "run.xml").read_text(encoding="utf-8")
    assert hits(store, env, "layoffs", "public") == []
    assert any("New wording" in text for text in hits(store, env, "layoffs", "staff"))
    assert cli(store, env, "verify", corpus).returncode == 0

    again = run_json(store, env, corpus)
    assert again["documents"]["unchanged"] == 2 and again["documents"]["indexed"] == 0
    memo.unlink()
    gone = run_json(store, env, corpus)
    assert gone["documents"]["removed"] == 1
    assert hits(store, env, "layoffs", "staff") == []
    assert cli(store, env, "verify", corpus).returncode == 0


@pytest.mark.elasticsearch
@pytest.mark.parametrize("path", PATHS, ids=list(PATHS))
def test_a_documents_index_deleted_by_hand_makes_the_next_run_rebuild_everything(path, tmp_path, es_url, es_prefix):
    store = ("--store", es_url, "--index-prefix", es_prefix)
    env = PATHS[path]
    corpus = make_corpus(tmp_path)
    run_json(store, env, corpus)
    es = Elasticsearch(es_url, request_timeout=30)
    try:
        documents = es.get(index=f"{es_prefix}-meta", id="layout")["_source"]["values"]["documents"]
        es.indices.delete(index=documents)
    finally:
        es.close()
    check_rebuilt(store, env, corpus)


def test_the_documents_table_emptied_in_sqlite_makes_the_next_run_rebuild_everything(tmp_path):
    db = tmp_path / "store.db"
    store = ("--store", f"sqlite:///{db}")
    corpus = make_corpus(tmp_path)
    run_json(store, {}, corpus)
    with sqlite3.connect(db) as connection:
        tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        assert "documents" in tables, tables
        connection.execute("DELETE FROM documents")  # (a dropped table is exit 3: "no such table")
    check_rebuilt(store, {}, corpus)


@pytest.mark.elasticsearch
def test_a_store_without_records_and_an_empty_folder_drops_the_chunks_nobody_lists(tmp_path, es_url, es_prefix):
    """Records emptied by hand and every file gone: nothing to write, yet the chunks nobody lists must go."""
    store = ("--store", es_url, "--index-prefix", es_prefix)
    corpus = make_corpus(tmp_path)
    run_json(store, {}, corpus)
    es = Elasticsearch(es_url, request_timeout=30)
    try:
        documents = es.get(index=f"{es_prefix}-meta", id="layout")["_source"]["values"]["documents"]
        for hit in es.search(index=documents, size=100, source=False)["hits"]["hits"]:
            es.delete(index=documents, id=hit["_id"], refresh=True)  # (this node has no _delete_by_query)
        for path in (corpus / "documents").iterdir():
            path.unlink()
        result = run_json(store, {}, corpus)
        # not a killed run's chunks: said as what happened (outside pass: "repaired an interrupted run")
        assert result["repaired"] == {"orphan_chunks": 0, "incomplete_documents": 0}, result["repaired"]
        assert result["rebuilt"] == f"{REASON} (documents index deleted or emptied outside ingest); 3 chunks no " + (
            "record listed went with the old build"
        )
        es.indices.refresh(index=f"{es_prefix}-chunks")
        assert es.count(index=f"{es_prefix}-chunks")["count"] == 0
    finally:
        es.close()
