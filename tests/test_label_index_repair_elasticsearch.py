"""A label index deleted or closed outside ingest (by hand, a retention job, a bad restore), on the real
plain node: a deleted one is recreated by the next run, fast no-op check included, with its aliases and
the chunks of every stored version under its label (same chunk IDs); a closed one stops the run, and
`verify`, `layout --check` and `search` name it and say what to do."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from tests.conftest import CONNECTION_ENV

pytestmark = pytest.mark.elasticsearch

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys\nfrom ingest.cli import main\nsys.argv = ['ingest', *sys.argv[1:]]\nmain()\n"
# The unchanged-run check over plain HTTP (the default) and the full path: both must notice.
PATHS = {"fast no-op check": {}, "full path": {"INGEST_NO_FAST_NOOP": "1"}}


class Cli:
    def __init__(self, es_url: str, prefix: str, env: dict[str, str]) -> None:
        self.store = ("--store", es_url, "--index-prefix", prefix)
        self.env = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV} | env

    def __call__(self, *args: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", CLI, *map(str, args), *self.store],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
        )

    def json(self, *args: object, code: int = 0) -> dict:
        done = self(*args, "--json")
        assert done.returncode == code, (done.stdout, done.stderr)
        return json.loads(done.stdout)


@pytest.fixture
def es(es_url):
    client = Elasticsearch(es_url, request_timeout=30)
    yield client
    client.close()


@pytest.fixture
def corpus(tmp_path):
    target = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus", target)
    return target


def label_index(es: Elasticsearch, prefix: str, label: str) -> str:
    layout = es.get(index=f"{prefix}-meta", id="layout")["_source"]["values"]
    return layout["chunks"][label]


def stored_chunk_ids(es: Elasticsearch, prefix: str) -> dict[str, list[str]]:
    """Chunk IDs by access label, as the all-labels alias serves them."""
    es.indices.refresh(index=f"{prefix}-chunks")
    hits = es.search(index=f"{prefix}-chunks", size=10000, source=["chunk_id", "access"])["hits"]["hits"]
    found: dict[str, list[str]] = {}
    for hit in hits:
        found.setdefault(hit["_source"]["access"], []).append(hit["_source"]["chunk_id"])
    return {label: sorted(ids) for label, ids in found.items()}


@pytest.mark.parametrize("path", PATHS, ids=list(PATHS))
def test_a_label_index_deleted_by_hand_is_recreated_with_every_chunk_of_its_label(path, corpus, es, es_url, es_prefix):
    cli = Cli(es_url, es_prefix, PATHS[path])
    first = cli.json("run", corpus)
    before = stored_chunk_ids(es, es_prefix)
    public = label_index(es, es_prefix, "public")
    assert before["public"] and first["chunks"]["total"] == sum(map(len, before.values()))
    es.indices.delete(index=public)

    searched = cli("search", "warranty")
    assert searched.returncode == 3 and "The next `ingest run` repairs it" in searched.stderr
    check = cli.json("layout", corpus, "--check", code=1)
    assert any(public in line and "missing" in line for line in check["changes"]), check
    planned = cli("run", corpus, "--dry-run")  # says what a run would repair, without claiming it did
    assert planned.returncode == 0 and "access to repair (dry run):" in planned.stdout
    assert "access repaired:" not in planned.stdout

    repaired = cli.json("run", corpus)
    assert [line for line in repaired["access_repaired"] if public in line and "recreated" in line], repaired
    assert repaired["chunks"]["written"] == len(before["public"])
    assert repaired["chunks"]["total"] == first["chunks"]["total"]
    assert stored_chunk_ids(es, es_prefix) == before  # every version under 'public' again, same IDs
    assert public in es.indices.get_alias(name=f"{es_prefix}-chunks-public")
    hits = cli.json("search", "warranty")["hits"]
    assert hits and {h["access"] for h in hits} == {"public"}
    assert cli.json("layout", corpus, "--check")["changes"] == []
    assert cli("verify", corpus).returncode == 0
    again = cli.json("run", corpus)
    assert again["access_repaired"] == [] and again["chunks"]["written"] == 0


def test_records_dropped_by_a_repair_killed_before_the_index_was_recreated_are_written_again(
    corpus, es, es_url, es_prefix
):
    # What a run killed between dropping the label's records and recreating its index leaves: the
    # index still missing (found again) and fewer records (their files are new to the next run).
    cli = Cli(es_url, es_prefix, {})
    cli.json("run", corpus)
    before = stored_chunk_ids(es, es_prefix)
    partner = label_index(es, es_prefix, "partner")
    es.indices.delete(index=partner)
    documents = f"{es_prefix}-documents"
    records = es.search(index=documents, size=1000, query={"term": {"access": "partner"}})["hits"]["hits"]
    assert records
    for record in records:  # (the test node has no _delete_by_query)
        es.delete(index=record["_index"], id=record["_id"], refresh=True)
    repaired = cli.json("run", corpus)
    assert any(partner in line for line in repaired["access_repaired"]), repaired
    assert stored_chunk_ids(es, es_prefix) == before
    assert cli("verify", corpus).returncode == 0


@pytest.mark.parametrize("path", PATHS, ids=list(PATHS))
def test_a_closed_label_index_stops_the_run_and_every_command_names_it(path, corpus, es, es_url, es_prefix):
    cli = Cli(es_url, es_prefix, PATHS[path])
    cli.json("run", corpus)
    staff = label_index(es, es_prefix, "staff")
    es.indices.close(index=staff)

    run = cli("run", corpus)
    assert run.returncode == 3 and staff in run.stderr and "is closed" in run.stderr and "_open" in run.stderr
    verify = cli("verify", corpus)
    assert verify.returncode == 3 and staff in verify.stderr and "is closed" in verify.stderr
    check = cli.json("layout", corpus, "--check", code=1)
    assert any(staff in line and "is closed" in line for line in check["changes"]), check
    search = cli("search", "policy", "--role", "staff")
    assert search.returncode == 3 and staff in search.stderr and "is closed" in search.stderr

    es.indices.open(index=staff, wait_for_active_shards="1")
    assert cli.json("run", corpus)["documents"]["indexed"] == 0
    assert cli("verify", corpus).returncode == 0


def test_narrowing_roles_while_a_label_index_is_closed_still_narrows_the_role_alias(corpus, es, es_url, es_prefix):
    """Access comes first on every run that writes: a closed index stops the run (and `layout`), but only
    after every role alias [roles] narrowed reads no more than it now may."""
    cli = Cli(es_url, es_prefix, {})
    cli.json("run", corpus)
    partner, staff = label_index(es, es_prefix, "partner"), label_index(es, es_prefix, "staff")
    assert partner in es.indices.get_alias(name=f"{es_prefix}-chunks-partner")
    es.indices.close(index=staff)
    toml = corpus / "ingest.toml"
    toml.write_text(toml.read_text().replace('partner = ["public", "partner"]', 'partner = ["public"]'))

    run = cli("run", corpus)
    assert run.returncode == 3 and staff in run.stderr and "is closed" in run.stderr, run.stderr
    assert "--full" not in run.stderr  # a --full stops on the closed index too: not advised
    assert partner not in es.indices.get_alias(name=f"{es_prefix}-chunks-partner")
    assert cli("layout", corpus).returncode == 3
    assert partner not in es.indices.get_alias(name=f"{es_prefix}-chunks-partner")

    es.indices.delete(index=staff)  # the other way out the message gives: the next run builds it again
    assert cli.json("run", corpus)["documents"]["rejected"] == 0
    assert cli("verify", corpus).returncode == 0
