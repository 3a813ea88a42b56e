"""A reader limited to its role alias (the secured node's `ingest-public`, README "Elasticsearch
privileges") cannot read the run metadata, so it cannot know the roles the index was built with. With
customised roles (public reads `open` and `public`) `ingest search --role public` narrowed the alias by
the default roles' labels and found only the `public` chunks (outside pass, session 7). The alias bounds
what it can read: its search now finds every chunk of its role, and still nothing above it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

import ingest
from tests.corpus_builder import write_doc

pytestmark = pytest.mark.elasticsearch

CREDENTIAL_ENV = ("ES_API_KEY", "ES_USERNAME", "ES_PASSWORD", "INGEST_STORE", "INGEST_INDEX_PREFIX")


def run_cli(*args: object, user: str, password: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_ENV}
    env.update(ES_USERNAME=user, ES_PASSWORD=password)
    return subprocess.run(
        [sys.executable, "-m", "ingest.cli", *map(str, args)], capture_output=True, text=True, env=env
    )


@pytest.fixture
def custom_roles_index(es_secure, tmp_path: Path) -> Iterator[str]:
    prefix = "rolealias-" + uuid.uuid4().hex[:10]
    corpus = tmp_path / "corpus"
    write_doc(corpus, "o1.md", "o1", access="open", salt="okapi")
    write_doc(corpus, "o2.md", "o2", access="open", salt="okapi")
    write_doc(corpus, "p1.md", "p1", access="public", salt="okapi")
    write_doc(corpus, "i1.md", "i1", access="internal", salt="okapi")
    (corpus / "ingest.toml").write_text(
        '[access]\nlabels = ["open", "public", "internal"]\n'
        '[roles]\npublic = ["open", "public"]\nstaff = ["open", "public", "internal"]\n',
        encoding="utf-8",
    )
    admin = Elasticsearch(es_secure.url, basic_auth=(es_secure.username, es_secure.password), request_timeout=30)
    try:
        done = run_cli("run", corpus, "--quiet", "--store", es_secure.url, "--index-prefix", prefix,
                       user=es_secure.username, password=es_secure.password)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        yield prefix
    finally:
        names = list(admin.indices.get(index=f"{prefix}-*", expand_wildcards="all"))
        if names:
            admin.indices.delete(index=",".join(names), ignore_unavailable=True)
        admin.close()


def test_a_role_alias_reader_finds_every_chunk_of_its_role_and_none_above(es_secure, custom_roles_index, monkeypatch):
    prefix = custom_roles_index
    store = ["--store", es_secure.url, "--index-prefix", prefix]
    for user in ("ingest-public", es_secure.username):  # the restricted reader and the superuser agree
        done = run_cli("search", "okapi", "--role", "public", "--top", "20", "--json", *store,
                       user=user, password=es_secure.password)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert {hit["doc_id"] for hit in json.loads(done.stdout)["hits"]} == {"o1", "o2", "p1"}, user

    # the role above it stays refused (403), as README says
    done = run_cli("search", "okapi", "--role", "staff", *store, user="ingest-public", password=es_secure.password)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "not allowed (403)" in done.stderr

    # the Python API, the same
    for name in CREDENTIAL_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ES_USERNAME", "ingest-public")
    monkeypatch.setenv("ES_PASSWORD", es_secure.password)
    with ingest.open_store(es_secure.url, prefix) as index:
        assert index.labels_for("public") == ("open", "public")
        found = index.search("okapi", role="public", top=20)
        assert {hit.chunk.doc_id for hit in found} == {"o1", "o2", "p1"}
        assert {hit.chunk.access for hit in found} == {"open", "public"}
