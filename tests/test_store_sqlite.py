"""SQLiteStore: the store contract, and what its lifecycle promises (check() writes nothing)."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from ingest.cli import app
from ingest.store.base import StoreUnavailable
from ingest.store.sqlite import SQLiteStore
from tests.corpus_builder import make_corpus, write_doc
from tests.helpers import make_chunk
from tests.test_store_contract import StoreContract


class TestSQLiteContract(StoreContract):
    @pytest.fixture
    def store(self, tmp_path):
        s = SQLiteStore(tmp_path / "index.sqlite")
        yield s
        s.close()


def test_check_writes_nothing(tmp_path):
    path = tmp_path / "sub" / "new.sqlite"
    SQLiteStore(path).check()  # a writer: a writable place is enough
    assert not path.exists() and not path.parent.exists()
    with pytest.raises(StoreUnavailable, match="no index here yet"):
        SQLiteStore(path, create=False).check()
    assert not path.parent.exists()


def test_check_reads_an_existing_file_without_changing_it(tmp_path):
    path = tmp_path / "index.sqlite"
    written = SQLiteStore(path)
    written.write_chunks([make_chunk("a", "1", 0, "alpha text")])
    written.close()
    before = (path.read_bytes(), sorted(os.listdir(tmp_path)))
    SQLiteStore(path, create=False).check()
    assert (path.read_bytes(), sorted(os.listdir(tmp_path))) == before
    path.write_bytes(b"this is not a database, only text that looks like nothing SQLite knows" * 100)
    with pytest.raises(StoreUnavailable, match="damaged"):
        SQLiteStore(path).check()


def test_a_dry_run_creates_no_store_file(tmp_path):
    corpus = make_corpus(tmp_path / "corpus")
    write_doc(corpus, "a.md", "alpha")
    store = tmp_path / "new.sqlite"
    result = CliRunner().invoke(app, ["run", str(corpus), "--dry-run", "--store", f"sqlite:///{store}", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dry_run"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]  # no store, no lock, no WAL file
