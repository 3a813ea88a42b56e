"""An empty --doc-id (an unset shell variable) or doc_id="" is a usage error, never "every document";
an as_of with spaces around the date is refused like any other form that is not YYYY-MM-DD."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import ingest
from ingest.cli import app
from tests.corpus_builder import write_doc

runner = CliRunner()


@pytest.fixture
def store(tmp_path):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "a.md", "alpha", salt="quokka")
    write_doc(corpus, "b.md", "beta", salt="quokka")
    url = f"sqlite:///{tmp_path / 'index.sqlite'}"
    assert runner.invoke(app, ["run", str(corpus), "--store", url, "-q"]).exit_code == 0
    return url


def test_an_empty_doc_id_is_a_usage_error_on_the_command_line(store):
    done = runner.invoke(app, ["search", "quokka", "--doc-id", "", "--store", store, "--json"])
    assert done.exit_code == 2, done.output
    assert "--doc-id '' is not a doc_id" in done.stdout


def test_an_empty_doc_id_or_a_spaced_as_of_is_refused_by_the_api(store):
    with ingest.open_store(store) as index:
        with pytest.raises(ValueError, match="doc_id must be a doc_id, not an empty string"):
            index.search("quokka", doc_id="")
        with pytest.raises(ValueError, match="is not a YYYY-MM-DD date"):
            index.search("quokka", as_of=" 2025-01-15 ")
        assert {h.chunk.doc_id for h in index.search("quokka", as_of="2025-01-15", top=10)} == {"alpha", "beta"}
        assert {h.chunk.doc_id for h in index.search("quokka", doc_id="beta")} == {"beta"}
