"""Access by index, with security enabled: credentials that may read the public role alias only
reach no partner or staff chunk, by search or by ID, through the client or through `ingest search`.

Runs on the secured node of ``es_secure`` (``INGEST_ES_SECURITY=1 scripts/elasticsearch-local``).
The restricted readers are

- ``ingest-public``, the node's file-realm user whose only privilege is ``read`` on
  ``*-chunks-public`` (always available);
- an API key whose role descriptor grants only ``read`` on ``{prefix}-chunks-public`` (the
  real-world case). API keys live in the ``.security`` index, which the integ-test distribution
  cannot create (its mapping needs analysis-common's ``pattern_capture`` filter: creating a key
  answers ``400 Unknown filter type [pattern_capture]``). So this variant runs only when
  ``INGEST_TEST_ES_API_KEYS=1`` says the secured node is a full distribution (e.g. the Docker
  image); on the integ-test node the file-realm user carries the same index-only restriction.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
from elasticsearch import ApiError, AuthorizationException, Elasticsearch, NotFoundError

from ingest import pipeline
from ingest.settings import load_settings
from ingest.store.elasticsearch import ElasticsearchStore
from tests.corpus_builder import make_corpus

pytestmark = pytest.mark.elasticsearch

PUBLIC_READER = "ingest-public"  # scripts/elasticsearch-local's file-realm user, read on *-chunks-public
CREDENTIAL_ENV = ("ES_API_KEY", "ES_USERNAME", "ES_PASSWORD", "INGEST_STORE")


@dataclass(frozen=True)
class BuiltIndex:
    url: str
    prefix: str
    chunk_ids: dict[str, set[str]]  # access label -> chunk IDs
    label_index: dict[str, str]  # access label -> concrete index

    @property
    def restricted_ids(self) -> set[str]:
        return self.chunk_ids["partner"] | self.chunk_ids["staff"]


@dataclass(frozen=True)
class Reader:
    """Credentials as client arguments and as the environment the product reads them from."""

    kind: str
    client_auth: dict[str, Any]
    env: dict[str, str]

    def client(self, url: str) -> Elasticsearch:
        return Elasticsearch(url, request_timeout=30, max_retries=0, **self.client_auth)


def superuser(es_secure) -> Elasticsearch:
    return Elasticsearch(es_secure.url, basic_auth=(es_secure.username, es_secure.password), request_timeout=30)


@pytest.fixture(scope="module")
def built(es_secure, tmp_path_factory) -> Iterator[BuiltIndex]:
    """A small corpus (public, partner and staff documents) indexed by the product as the superuser."""
    prefix = "sec-" + uuid.uuid4().hex[:12]
    corpus = make_corpus(tmp_path_factory.mktemp("corpus"), n=6)
    settings = load_settings(corpus)
    admin = superuser(es_secure)
    try:
        with pytest.MonkeyPatch.context() as env:  # the store's own way to authenticate
            for name in CREDENTIAL_ENV:
                env.delenv(name, raising=False)
            env.setenv("ES_USERNAME", es_secure.username)
            env.setenv("ES_PASSWORD", es_secure.password)
            store = ElasticsearchStore(es_secure.url, prefix=prefix, settings=settings)
            try:
                result = pipeline.run(corpus, store, settings, settings.chunking)
            finally:
                store.close()
        assert result.ok, result.to_json()
        hits = admin.search(index=f"{prefix}-chunks", query={"match_all": {}}, size=1000)["hits"]["hits"]
        chunk_ids: dict[str, set[str]] = {"public": set(), "partner": set(), "staff": set()}
        for hit in hits:
            chunk_ids[hit["_source"]["access"]].add(hit["_id"])
        assert all(chunk_ids.values()), {k: len(v) for k, v in chunk_ids.items()}
        label_index = {
            index.split("-chunks_", 1)[1].rsplit("_", 1)[0]: index
            for index in admin.indices.get_alias(index=f"{prefix}-chunks")
        }
        assert set(label_index) == {"public", "partner", "staff"}
        yield BuiltIndex(es_secure.url, prefix, chunk_ids, label_index)
    finally:
        names = list(admin.indices.get(index=f"{prefix}-*", expand_wildcards="all"))
        if names:
            admin.indices.delete(index=",".join(names), ignore_unavailable=True)
        admin.close()


READERS = ["file-realm user"] + (["api key"] if os.environ.get("INGEST_TEST_ES_API_KEYS") == "1" else [])


@pytest.fixture(scope="module", params=READERS)
def reader(request, es_secure, built) -> Iterator[Reader]:
    if request.param == "file-realm user":
        yield Reader(
            request.param,
            {"basic_auth": (PUBLIC_READER, es_secure.password)},
            {"ES_USERNAME": PUBLIC_READER, "ES_PASSWORD": es_secure.password},
        )
        return
    admin = superuser(es_secure)
    try:
        key = admin.security.create_api_key(
            name=f"{built.prefix}-public-reader",
            role_descriptors={
                "public_reader": {"indices": [{"names": [f"{built.prefix}-chunks-public"], "privileges": ["read"]}]}
            },
        )
    except ApiError as exc:
        admin.close()
        pytest.fail(f"INGEST_TEST_ES_API_KEYS=1 but this node cannot create API keys: {exc.status_code} {exc.message}: {exc.info}")
    try:
        yield Reader(request.param, {"api_key": key["encoded"]}, {"ES_API_KEY": key["encoded"]})
    finally:
        admin.security.invalidate_api_key(ids=[key["id"]])
        admin.close()


def all_hits(client: Elasticsearch, index: str) -> list[dict[str, Any]]:
    return client.search(index=index, query={"match_all": {}}, size=1000)["hits"]["hits"]


def test_a_search_on_the_public_alias_returns_exactly_the_public_chunks(built, reader):
    client = reader.client(built.url)
    try:
        hits = all_hits(client, f"{built.prefix}-chunks-public")
    finally:
        client.close()
    assert {hit["_id"] for hit in hits} == built.chunk_ids["public"]
    assert {hit["_source"]["access"] for hit in hits} == {"public"}
    assert {hit["_index"] for hit in hits} == {built.label_index["public"]}


def test_every_other_named_target_is_refused(built, reader):
    p = built.prefix
    named = [
        f"{p}-chunks-staff",
        f"{p}-chunks-partner",
        f"{p}-chunks",
        built.label_index["staff"],
        built.label_index["partner"],
        built.label_index["public"],  # the concrete index: privileges are on the alias only
        f"{p}-documents",
        f"{p}-meta",
        f"{p}-chunks-public,{p}-chunks-staff",  # one forbidden name fails the whole request
    ]
    client = reader.client(built.url)
    try:
        outcomes = {}
        for target in named:
            try:
                outcomes[target] = f"{len(all_hits(client, target))} hits"
            except AuthorizationException as exc:
                outcomes[target] = exc.status_code
    finally:
        client.close()
    assert outcomes == {target: 403 for target in named}


@pytest.mark.parametrize("pattern", ["*", "{p}-*", "{p}-chunks*", "_all", "*staff*"])
def test_wildcards_expand_to_the_public_alias_only(built, reader, pattern):
    client = reader.client(built.url)
    try:
        hits = client.search(
            index=pattern.format(p=built.prefix), query={"match_all": {}}, size=1000, allow_no_indices=True
        )["hits"]["hits"]
    finally:
        client.close()
    ours = {hit["_id"] for hit in hits if hit["_index"].startswith(f"{built.prefix}-")}
    assert ours <= built.chunk_ids["public"]
    assert {hit["_source"].get("access") for hit in hits} <= {"public"}
    assert not ours & built.restricted_ids


def test_no_restricted_chunk_by_id(built, reader):
    p, public_alias = built.prefix, f"{built.prefix}-chunks-public"
    staff_id, partner_id = min(built.chunk_ids["staff"]), min(built.chunk_ids["partner"])
    public_id = min(built.chunk_ids["public"])
    client = reader.client(built.url)
    try:
        assert client.get(index=public_alias, id=public_id)["_source"]["access"] == "public"  # the control
        for chunk_id in (staff_id, partner_id):
            with pytest.raises(NotFoundError):  # through the public alias: not there
                client.get(index=public_alias, id=chunk_id)
        for index, chunk_id in (
            (built.label_index["staff"], staff_id),  # straight at its own index
            (built.label_index["partner"], partner_id),
            (f"{p}-chunks-staff", staff_id),  # through a wider role alias
            (f"{p}-chunks", partner_id),
        ):
            with pytest.raises(AuthorizationException):
                client.get(index=index, id=chunk_id)
        docs = client.mget(docs=[
            {"_index": public_alias, "_id": staff_id},
            {"_index": public_alias, "_id": partner_id},
            {"_index": built.label_index["staff"], "_id": staff_id},
            {"_index": f"{p}-chunks-staff", "_id": staff_id},
            {"_index": f"{p}-chunks", "_id": partner_id},
            {"_index": public_alias, "_id": public_id},
        ])["docs"]
        # a search by the restricted IDs through the public alias finds nothing either
        by_ids = client.search(index=public_alias, query={"ids": {"values": sorted(built.restricted_ids)}}, size=1000)
    finally:
        client.close()
    assert [d.get("found") for d in docs[:2]] == [False, False]
    assert docs[2]["error"]["type"] == "security_exception"
    # mget resolves an alias before authorizing each shard: an alias over several indices is
    # refused for that reason (its message names the concrete indices, never a chunk)
    assert [d["error"]["type"] for d in docs[3:5]] == ["illegal_argument_exception"] * 2
    assert all("has more than one index" in d["error"]["reason"] for d in docs[3:5])
    assert all("_source" not in d for d in docs[:5])
    assert docs[5]["found"] is True and docs[5]["_source"]["access"] == "public"
    assert by_ids["hits"]["hits"] == []


def run_cli(built: BuiltIndex, reader: Reader, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_ENV}
    env.update(reader.env)
    cli = [sys.executable, "-m", "ingest.cli", "search", *args, "--store", built.url, "--index-prefix", built.prefix]
    return subprocess.run(cli, env=env, capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])


def test_ingest_search_with_the_restricted_credentials_returns_only_public_chunks(built, reader, es_secure):
    args = ("engine", "--role", "public", "--as-of", "any", "--top", "50", "--json")
    done = run_cli(built, reader, *args)
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["hits"]
    assert hits and {h["chunk_id"] for h in hits} <= built.chunk_ids["public"]
    assert {h["access"] for h in hits} == {"public"}
    # exactly what the superuser's search for the public role finds, in the same order
    admin = Reader("superuser", {}, {"ES_USERNAME": es_secure.username, "ES_PASSWORD": es_secure.password})
    as_admin = run_cli(built, admin, *args)
    assert as_admin.returncode == 0, as_admin.stderr
    assert hits == json.loads(as_admin.stdout)["hits"]


@pytest.mark.parametrize("role", ["staff", "partner"])
def test_ingest_search_for_a_wider_role_is_refused_not_widened(built, reader, role):
    done = run_cli(built, reader, "engine", "--role", role, "--as-of", "any", "--json")
    assert done.returncode == 3
    answer = json.loads(done.stdout)  # with --json, one error object: no hits at all
    assert answer.keys() == {"error", "exit_code"} and answer["exit_code"] == 3
    assert "not allowed (403)" in done.stderr, done.stderr
    assert f"{built.prefix}-chunks-{role}" in done.stderr
