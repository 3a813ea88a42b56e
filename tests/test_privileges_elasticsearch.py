"""The Elasticsearch privileges the README documents are enough, and no more than needed:

- the writer (``ingest-writer``: cluster ``monitor``; ``manage``, ``read``, ``write`` on ``P-*``) can
  run ``ingest run`` (first build, nothing-changed run, ``--full`` rebuild with its alias swap),
  ``search`` any role, ``stats`` and ``verify``; and nothing outside its prefix;
- the per-role reader (``ingest-reader``: ``read`` on ``P-chunks-public`` alone) can read that alias
  and nothing else, and cannot write even there.

Runs on the secured node (``es_secure``), whose file-realm roles (scripts/elasticsearch-local,
secured mode) are the README's role descriptors for the prefix ``privtest``: the first test checks
that the two say the same, so the rest proves the README.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
import yaml
from elasticsearch import AuthorizationException, Elasticsearch

from tests.corpus_builder import make_corpus

pytestmark = pytest.mark.elasticsearch

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "privtest"  # the prefix the node's writer and reader roles are written for
WRITER, READER = "ingest-writer", "ingest-reader"
CREDENTIAL_ENV = ("ES_API_KEY", "ELASTIC_API_KEY", "ES_USERNAME", "ES_PASSWORD", "INGEST_STORE",
                  "INGEST_INDEX_PREFIX", "ELASTICSEARCH_URL", "ELASTIC_CLOUD_ID")


def readme_role_descriptors() -> dict[str, dict]:
    """The JSON role descriptors under "Elasticsearch privileges" in the README, for prefix ``ingest``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Elasticsearch privileges", 1)[1].split("\n### ", 1)[0]
    roles: dict[str, dict] = {}
    for block in re.findall(r"```json\n(.*?)```", section, flags=re.S):
        roles.update(json.loads(block))
    return roles


def node_roles() -> dict[str, dict]:
    """roles.yml as scripts/elasticsearch-local writes it for the secured node."""
    script = (ROOT / "scripts" / "elasticsearch-local").read_text(encoding="utf-8")
    [body] = re.findall(r'cat >"\$home/config/roles\.yml" <<YML\n(.*?)\nYML\n', script, flags=re.S)
    return yaml.safe_load(body)


def for_prefix(descriptor: dict, prefix: str) -> dict:
    return json.loads(json.dumps(descriptor).replace('"ingest-', f'"{prefix}-'))


def test_the_secured_node_grants_exactly_the_documented_privileges():
    documented = readme_role_descriptors()
    roles = node_roles()
    assert set(documented) == {"ingest_writer", "ingest_reader_public"}
    assert roles["ingest_writer_privtest"] == for_prefix(documented["ingest_writer"], PREFIX)
    assert roles["ingest_reader_privtest_public"] == for_prefix(documented["ingest_reader_public"], PREFIX)
    script = (ROOT / "scripts" / "elasticsearch-local").read_text(encoding="utf-8")
    assert f"useradd {WRITER} -p \"$password\" -r ingest_writer_privtest" in script
    assert f"useradd {READER} -p \"$password\" -r ingest_reader_privtest_public" in script


def admin(es_secure) -> Elasticsearch:
    return Elasticsearch(es_secure.url, basic_auth=(es_secure.username, es_secure.password), request_timeout=30)


def drop(client: Elasticsearch, prefix: str) -> None:
    names = list(client.indices.get(index=f"{prefix}-*", expand_wildcards="all"))
    if names:
        client.indices.delete(index=",".join(names), ignore_unavailable=True)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("corpus"), n=6)


@pytest.fixture(scope="module")
def clean_prefix(es_secure) -> Iterator[None]:
    client = admin(es_secure)
    try:
        drop(client, PREFIX)
        drop(client, "privother")
        yield
        drop(client, PREFIX)
        drop(client, "privother")
    finally:
        client.close()


def ingest_as(user: str, es_secure, *args: str) -> subprocess.CompletedProcess:
    """`ingest ARGS` in a subprocess, authenticated as USER the way CI would: environment variables."""
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_ENV}
    env.update(ES_USERNAME=user, ES_PASSWORD=es_secure.password)
    return subprocess.run([sys.executable, "-m", "ingest", *args], env=env, capture_output=True, text=True, timeout=300)


def test_the_writer_runs_searches_and_verifies_within_its_prefix(es_secure, corpus, clean_prefix):
    store = ("--store", es_secure.url, "--index-prefix", PREFIX)
    first = ingest_as(WRITER, es_secure, "run", str(corpus), *store, "--json")
    assert first.returncode == 0, first.stdout + first.stderr
    assert json.loads(first.stdout)["documents"]["indexed"] == 6
    again = ingest_as(WRITER, es_secure, "run", str(corpus), *store, "--json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout)["documents"]["unchanged"] == 6
    full = ingest_as(WRITER, es_secure, "run", str(corpus), *store, "--full", "--json")
    assert full.returncode == 0, full.stdout + full.stderr  # new indices, one alias swap, old ones dropped
    staff = ingest_as(WRITER, es_secure, "search", "section", *store, "--role", "staff", "--top", "50", "--json")
    assert staff.returncode == 0, staff.stdout + staff.stderr
    assert {hit["access"] for hit in json.loads(staff.stdout)["hits"]} == {"public", "partner", "staff"}
    for command in (("stats",), ("verify", str(corpus))):
        result = ingest_as(WRITER, es_secure, *command, *store, "--json")
        assert result.returncode == 0, (command, result.stdout + result.stderr)


def test_the_writer_cannot_write_another_prefix(es_secure, corpus, clean_prefix):
    other = ingest_as(WRITER, es_secure, "run", str(corpus), "--store", es_secure.url, "--index-prefix", "privother", "--json")
    assert other.returncode == 3, other.stdout + other.stderr
    client = admin(es_secure)
    try:
        assert not client.indices.get(index="privother-*", allow_no_indices=True, expand_wildcards="all")
    finally:
        client.close()


@pytest.fixture(scope="module")
def built(es_secure, corpus, clean_prefix) -> dict[str, set[str]]:
    """The corpus indexed by the writer; chunk IDs by access label (read as the superuser)."""
    result = ingest_as(WRITER, es_secure, "run", str(corpus), "--store", es_secure.url, "--index-prefix", PREFIX)
    assert result.returncode == 0, result.stdout + result.stderr
    client = admin(es_secure)
    try:
        hits = client.search(index=f"{PREFIX}-chunks", query={"match_all": {}}, size=1000)["hits"]["hits"]
    finally:
        client.close()
    ids: dict[str, set[str]] = {}
    for hit in hits:
        ids.setdefault(hit["_source"]["access"], set()).add(hit["_id"])
    assert set(ids) == {"public", "partner", "staff"}
    return ids


@pytest.fixture
def reader(es_secure) -> Iterator[Elasticsearch]:
    client = Elasticsearch(es_secure.url, basic_auth=(READER, es_secure.password), request_timeout=30, max_retries=0)
    yield client
    client.close()


def test_the_reader_reads_its_alias(built, reader):
    hits = reader.search(index=f"{PREFIX}-chunks-public", query={"match_all": {}}, size=1000)["hits"]["hits"]
    assert {hit["_id"] for hit in hits} == built["public"]
    public_id = min(built["public"])
    assert reader.get(index=f"{PREFIX}-chunks-public", id=public_id)["_id"] == public_id


def test_the_reader_reads_nothing_else_and_writes_nothing(built, reader):
    outcomes = {}
    for target in (f"{PREFIX}-chunks", f"{PREFIX}-chunks-partner", f"{PREFIX}-chunks-staff",
                   f"{PREFIX}-documents", f"{PREFIX}-meta"):
        try:
            outcomes[target] = len(reader.search(index=target, query={"match_all": {}})["hits"]["hits"])
        except AuthorizationException as exc:
            outcomes[target] = exc.status_code
    for name, call in {
        "index into its alias": lambda: reader.index(index=f"{PREFIX}-chunks-public", id="x", document={"text": "x"}),
        "delete from its alias": lambda: reader.delete(index=f"{PREFIX}-chunks-public", id=min(built["public"])),
        "create an index": lambda: reader.indices.create(index=f"{PREFIX}-chunks-evil"),
        "move an alias": lambda: reader.indices.update_aliases(actions=[{"add": {
            "index": f"{PREFIX}-chunks_staff_*", "alias": f"{PREFIX}-chunks-public"}}]),
    }.items():
        try:
            call()
            outcomes[name] = "allowed"
        except AuthorizationException as exc:
            outcomes[name] = exc.status_code
    assert outcomes == {name: 403 for name in outcomes}


def test_ingest_run_with_the_reader_key_is_refused_and_writes_nothing(es_secure, built, corpus):
    result = ingest_as(READER, es_secure, "run", str(corpus), "--store", es_secure.url, "--index-prefix", PREFIX, "--full")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    client = admin(es_secure)
    try:
        after = client.count(index=f"{PREFIX}-chunks")["count"]
    finally:
        client.close()
    assert after == sum(len(ids) for ids in built.values())


def test_ingest_search_with_the_reader_key_answers_its_role_only(es_secure, built):
    store = ("--store", es_secure.url, "--index-prefix", PREFIX)
    public = ingest_as(READER, es_secure, "search", "section", *store, "--role", "public", "--top", "50", "--json")
    assert public.returncode == 0, public.stdout + public.stderr
    hits = json.loads(public.stdout)["hits"]
    assert hits and {hit["chunk_id"] for hit in hits} <= built["public"]
    staff = ingest_as(READER, es_secure, "search", "section", *store, "--role", "staff", "--json")
    assert staff.returncode == 3, staff.stdout + staff.stderr
    assert "403" in json.loads(staff.stdout)["error"]
