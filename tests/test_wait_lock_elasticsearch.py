"""`ingest run --wait` takes the write lock before it makes the aliases follow [roles]: while it waits,
the run holding the lock may replace the whole build (a `--full`), and the waiting run's repair and its
report must be about the build it then works on, never the one that was swapped out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from ingest.settings import load_settings
from tests.conftest import CONNECTION_ENV
from tests.corpus_builder import write_doc

pytestmark = pytest.mark.elasticsearch

ROOT = Path(__file__).resolve().parents[1]
ROLES_WIDE = '[roles]\npublic = ["public", "staff"]\npartner = ["public", "partner"]\nstaff = ["public", "partner", "staff"]\n'
ROLES_FIXED = '[roles]\npublic = ["public"]\npartner = ["public", "partner"]\nstaff = ["public", "partner", "staff"]\n'


def test_a_waiting_run_repairs_access_on_the_build_it_gets_the_lock_on(tmp_path, es_url, es_prefix, make_es_store):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    write_doc(corpus, "secret.md", "secret-doc", access="staff", salt="crownjewel")
    (corpus / "ingest.toml").write_text(ROLES_WIDE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    store_args = ["--store", es_url, "--index-prefix", es_prefix]
    cli = [sys.executable, "-m", "ingest.cli"]
    assert subprocess.run([*cli, "run", str(corpus), *store_args], env=env, cwd=ROOT).returncode == 0

    holder = make_es_store(load_settings(corpus))  # the other run: still the wide roles
    (corpus / "ingest.toml").write_text(ROLES_FIXED, encoding="utf-8")
    with holder.lock("another run (a --full)"):
        waiting = subprocess.Popen(
            [*cli, "run", str(corpus), *store_args, "--wait", "120", "--json"],
            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        time.sleep(6)  # (sequencing, not a measurement) let it start and queue for the lock
        with holder.full_rebuild():  # a new build goes live, with the aliases the holder's roles give
            pass
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, (out, err)
    data = json.loads(out)

    es = Elasticsearch(es_url, request_timeout=30)
    try:
        layout = es.get(index=f"{es_prefix}-meta", id="layout")["_source"]["values"]
        live = set(layout["chunks"].values())
        public_reads = set(es.indices.get_alias(name=f"{es_prefix}-chunks-public"))
    finally:
        es.close()
    assert public_reads == {layout["chunks"]["public"]}  # the fix applied to the live build
    repaired = " ".join(data["access_repaired"])
    assert layout["chunks"]["staff"] in repaired, data["access_repaired"]  # it names the live build's index
    named = {word.strip(",;()") for word in repaired.split() if word.startswith(f"{es_prefix}-chunks_")}
    assert named and named <= live, (named, live)
