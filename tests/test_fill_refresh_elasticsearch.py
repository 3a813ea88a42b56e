"""Indices a run creates are filled with refresh off and get the default back at its end; what a killed
run left with refresh off is restored by the next run (the fast unchanged check included)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
from elasticsearch import Elasticsearch

from ingest import pipeline
from ingest.settings import Settings
from tests.conftest import CONNECTION_ENV
from tests.corpus_builder import make_corpus

pytestmark = pytest.mark.elasticsearch


def refresh_intervals(client: Elasticsearch, indices: list[str]) -> dict[str, str | None]:
    found = client.indices.get_settings(index=",".join(indices), name="index.refresh_interval")
    return {index: found.body.get(index, {}).get("settings", {}).get("index", {}).get("refresh_interval") for index in indices}


def test_a_first_build_fills_with_refresh_off_and_ends_with_the_default_and_everything_searchable(
    tmp_path, make_es_store, es_url
):
    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    store = make_es_store(settings)
    client = Elasticsearch(es_url)
    try:
        with store.lock("test"):
            store.ensure_layout()
            layout = store._layout.read()
            assert layout.filling == sorted(layout.live)
            assert set(refresh_intervals(client, layout.live).values()) == {"-1"}
        layout = make_es_store(settings)._layout.read()
        assert layout.filling == []
        assert set(refresh_intervals(client, layout.live).values()) == {None}
        result = pipeline.run(corpus, make_es_store(settings), settings, settings.chunking)
        assert result.ok and result.written
        # Searchable by another client right away (the run refreshed what it wrote).
        assert client.count(index=make_es_store(settings).all_alias)["count"] == result.total
    finally:
        client.close()


def test_refresh_left_off_by_a_killed_run_is_restored_by_the_next_run_even_when_nothing_changed(
    tmp_path, make_es_store, es_url, es_prefix
):
    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    assert pipeline.run(corpus, make_es_store(settings), settings, settings.chunking).ok
    # What a run killed while filling a new index leaves: refresh off there, the layout saying so.
    store = make_es_store(settings)
    layout = store._layout.read()
    killed = [layout.chunks["public"], layout.documents]
    client = Elasticsearch(es_url)
    try:
        client.indices.put_settings(index=",".join(killed), settings={"index": {"refresh_interval": "-1"}})
        store._layout.record(dataclasses.replace(layout, filling=sorted(killed)))
        # The command line, whose unchanged check would otherwise skip the lock: it must fall back.
        env = {k: v for k, v in __import__("os").environ.items() if k not in CONNECTION_ENV}
        done = subprocess.run(
            [sys.executable, "-m", "ingest", "run", str(corpus), "--store", es_url, "--index-prefix", es_prefix, "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert make_es_store(settings)._layout.read().filling == []
        assert set(refresh_intervals(client, layout.live).values()) == {None}
        assert pipeline.verify(corpus, make_es_store(settings), settings).ok
    finally:
        client.close()
