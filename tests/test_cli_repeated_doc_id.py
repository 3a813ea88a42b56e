"""``ingest search --doc-id a --doc-id b`` is a usage error (exit 2): the README promises one document,
and keeping the last one silently answered "no hits" where a matched."""

from __future__ import annotations

import json

import pytest

import ingest
from tests.corpus_builder import write_doc
from tests.helpers import ingest_cli


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("docid")
    corpus = tmp / "corpus"
    write_doc(corpus, "a.md", "alpha", salt="zebra")
    write_doc(corpus, "b.md", "beta")
    url = f"sqlite:///{tmp / 'index.sqlite'}"
    assert ingest_cli("run", corpus, "--store", url, "-q").returncode == 0
    return url


@pytest.mark.parametrize("ids", [("alpha", "beta"), ("beta", "alpha"), ("alpha", "alpha"), ("alpha", "")])
def test_a_repeated_doc_id_is_a_usage_error(store, ids):
    args = [a for d in ids for a in ("--doc-id", d)]
    done = ingest_cli("search", "zebra", "--store", store, *args, "--json")
    assert done.returncode == 2, done.stdout
    assert "search takes one --doc-id" in json.loads(done.stdout)["error"]
    plain = ingest_cli("search", "zebra", "--store", store, *args)
    assert plain.returncode == 2 and f"--doc-id {ids[0]!r} --doc-id {ids[1]!r}" in plain.stderr


def test_one_doc_id_still_limits_the_search(store):
    done = ingest_cli("search", "zebra", "--store", store, "--doc-id", "alpha", "--json")
    assert done.returncode == 0, done.stderr
    assert {h["doc_id"] for h in json.loads(done.stdout)["hits"]} == {"alpha"}
    empty = ingest_cli("search", "zebra", "--store", store, "--doc-id", "", "--json")
    assert empty.returncode == 2 and "--doc-id '' is not a doc_id" in json.loads(empty.stdout)["error"]


def test_the_api_takes_one_doc_id_string(store):
    with ingest.open_store(store) as index, pytest.raises(TypeError):
        index.search("zebra", doc_id=["alpha", "beta"])  # type: ignore[arg-type]
