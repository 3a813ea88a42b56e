"""`Index.search(as_of=datetime(...))` (outside pass, session 7): SQLite compared the datetime as text and
silently dropped a document in force that day, Elasticsearch refused it with a 400. A datetime is a date:
its day, the same on both stores."""

from __future__ import annotations

import subprocess
import sys
from datetime import date, datetime

import ingest
from tests.corpus_builder import write_doc


def test_a_datetime_is_its_day_on_both_stores(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "ends.md", "ends-doc", salt="quokka", effective_to="2026-12-01")
    write_doc(corpus, "starts.md", "starts-doc", salt="quokka", effective_from="2026-12-02")
    done = subprocess.run(
        [sys.executable, "-m", "ingest.cli", "run", str(corpus), "--quiet", *store_args], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    url = store_args[1]
    prefix = store_args[3] if len(store_args) > 2 else None

    with ingest.open_store(url, prefix) as index:
        for day, expected in [(date(2026, 12, 1), {"ends-doc"}), (date(2026, 12, 2), {"starts-doc"})]:
            for as_of in (day, datetime(day.year, day.month, day.day, 23, 59), datetime(day.year, day.month, day.day)):
                assert {hit.chunk.doc_id for hit in index.search("quokka", as_of=as_of)} == expected, as_of
                stored = index.store.search("quokka", index.access_for("public"), as_of)
                assert {hit.chunk.doc_id for hit in stored} == expected, as_of
