"""Language-aware BM25 ([search] language): stemming on both stores, codes found exactly, the
analysis recorded and a change rebuilt, a cluster without the analyzer refused."""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from ingest import pipeline
from ingest.cli import app
from ingest.settings import SettingsError, load_settings, settings_from_dict
from ingest.store.base import StoreConfigError
from ingest.store.sqlite import SQLiteStore

LABELS = ("public", "partner", "staff")

DOCS = {
    "billing": (
        "Billing Handbook",
        "## Invoicing\n\nInvoicing happens monthly. Carers who claim expenses send their phones "
        "bills with the claim form.\n",
    ),
    "fuel-filter": (
        "Fuel Filter Parts",
        "## Parts\n\nPart | Use\n--- | ---\nNW-4471-B | fuel filter element for the X40\n",
    ),
    # Shares every piece of NW-4471-B, more often, but never the code itself.
    "oil-filter": (
        "Oil Filter Parts",
        "## Parts\n\nNW 4471 C is the oil filter; plan B: order NW 4471 A, or option B with 4471 "
        "hours, B series, NW B.\n",
    ),
}


def write_corpus(root: Path, language: str | None = None) -> Path:
    for doc_id, (title, text) in DOCS.items():
        path = root / "documents" / f"{doc_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        front = f'---\ndoc_id: {doc_id}\nversion: "1"\ntitle: "{title}"\naccess: public\n---\n'
        path.write_text(front + f"# {title}\n\n" + text, encoding="utf-8")
    if language is not None:
        (root / "ingest.toml").write_text(f'[search]\nlanguage = "{language}"\n', encoding="utf-8")
    return root


def run(corpus: Path, store) -> pipeline.RunResult:
    settings = load_settings(corpus)
    result = pipeline.run(corpus, store, settings, settings.chunking)
    assert result.ok, result.to_json()
    return result


def top_docs(store, query: str) -> list[str]:
    return [hit.chunk.doc_id for hit in store.search(query, LABELS, date.today(), top=5)]


def sqlite_store(path: Path, corpus: Path) -> SQLiteStore:
    return SQLiteStore(path, language=load_settings(corpus).search.language)


# --- settings ----------------------------------------------------------------------------------


def test_language_defaults_to_english_and_accepts_none_only_besides():
    assert settings_from_dict({}).search.language == "english"
    assert settings_from_dict({"search": {"language": "none"}}).search.language == "none"
    with pytest.raises(SettingsError, match="search.language 'french' is not one of english, none"):
        settings_from_dict({"search": {"language": "french"}})
    with pytest.raises(SettingsError, match="unknown key search.analyzer"):
        settings_from_dict({"search": {"analyzer": "english"}})


# --- SQLite ------------------------------------------------------------------------------------


def test_sqlite_english_finds_inflected_forms(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    store = sqlite_store(tmp_path / "index.sqlite", corpus)
    run(corpus, store)
    assert top_docs(store, "invoice")[:1] == ["billing"]
    assert top_docs(store, "carer")[:1] == ["billing"]
    assert top_docs(store, "phone")[:1] == ["billing"]
    assert store.get_meta()["analysis"] == "porter unicode61"
    store.close()


def test_sqlite_none_keeps_the_plain_tokenizer(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", language="none")
    store = sqlite_store(tmp_path / "index.sqlite", corpus)
    run(corpus, store)
    assert top_docs(store, "invoice") == []
    assert top_docs(store, "Invoicing")[:1] == ["billing"]
    store.close()
    sql = sqlite3.connect(tmp_path / "index.sqlite").execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    assert "tokenize='unicode61'" in sql


def test_sqlite_code_is_found_exactly_above_its_loose_parts(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    store = sqlite_store(tmp_path / "index.sqlite", corpus)
    run(corpus, store)
    assert top_docs(store, "NW-4471-B")[0] == "fuel-filter"
    assert top_docs(store, "What is part NW-4471-B?")[0] == "fuel-filter"
    store.close()


def test_sqlite_language_change_rebuilds_with_the_reason(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", language="none")
    path = tmp_path / "index.sqlite"
    store = sqlite_store(path, corpus)
    run(corpus, store)
    store.close()
    assert top_docs(SQLiteStore(path), "invoice") == []

    write_corpus(corpus, language="english")
    store = sqlite_store(path, corpus)
    result = run(corpus, store)
    reasons = {item.reason for item in result.plan.items}
    assert reasons == {"search analysis changed (unicode61 → porter unicode61)"}
    assert result.plan.count("new") == len(DOCS)
    assert top_docs(store, "invoice")[:1] == ["billing"]
    assert store.get_meta()["analysis"] == "porter unicode61"
    # Once rebuilt, nothing more to do.
    again = run(corpus, store)
    assert again.plan.count("unchanged") == len(DOCS)
    store.close()


def test_sqlite_store_without_recorded_analysis_is_rebuilt(tmp_path):
    """A store from an older ingest (no "analysis" in its meta) was built with plain unicode61."""
    corpus = write_corpus(tmp_path / "corpus")
    path = tmp_path / "index.sqlite"
    store = SQLiteStore(path, language="none")
    run(corpus, store)
    store._connect().execute("DELETE FROM meta WHERE key = 'analysis'")
    store.close()
    store = sqlite_store(path, corpus)
    result = run(corpus, store)
    assert {item.reason for item in result.plan.items} == {
        "search analysis not recorded (built by an older ingest); rebuilding with porter unicode61"
    }
    assert top_docs(store, "invoice")[:1] == ["billing"]
    store.close()


# --- Elasticsearch -----------------------------------------------------------------------------


@pytest.mark.elasticsearch
def test_local_node_has_the_english_analyzer(es_url):
    client = Elasticsearch(es_url, request_timeout=30)
    try:
        tokens = {
            word: [t["token"] for t in client.indices.analyze(analyzer="english", text=word)["tokens"]]
            for word in ("Invoicing", "Carers", "phones")
        }
    finally:
        client.close()
    assert tokens == {"Invoicing": ["invoic"], "Carers": ["carer"], "phones": ["phone"]}


@pytest.mark.elasticsearch
def test_elasticsearch_english_finds_inflected_forms_and_codes_exactly(tmp_path, make_es_store):
    corpus = write_corpus(tmp_path / "corpus")
    store = make_es_store(load_settings(corpus))
    run(corpus, store)
    assert top_docs(store, "invoice")[:1] == ["billing"]
    assert top_docs(store, "carer")[:1] == ["billing"]
    assert top_docs(store, "phone")[:1] == ["billing"]
    assert top_docs(store, "NW-4471-B")[0] == "fuel-filter"
    assert top_docs(store, "What is part NW-4471-B?")[0] == "fuel-filter"
    assert store.get_meta()["analysis"] == "english"
    mapping = store.es.indices.get_mapping(index=store.all_alias)
    for index in mapping.values():
        props = index["mappings"]["properties"]
        assert props["text"]["analyzer"] == props["title"]["fields"]["text"]["analyzer"] == "english"
        assert props["section"]["fields"]["text"]["analyzer"] == "english"
        assert props["text"]["fields"]["exact"]["analyzer"] == "standard"


@pytest.mark.elasticsearch
def test_elasticsearch_language_change_rebuilds_with_the_reason(tmp_path, make_es_store):
    corpus = write_corpus(tmp_path / "corpus", language="none")
    store = make_es_store(load_settings(corpus))
    run(corpus, store)
    assert top_docs(store, "invoice") == []

    write_corpus(corpus, language="english")
    store = make_es_store(load_settings(corpus))
    result = run(corpus, store)
    assert {item.reason for item in result.plan.items} == {"search analysis changed (standard → english)"}
    assert top_docs(store, "invoice")[:1] == ["billing"]


@pytest.mark.elasticsearch
def test_a_cluster_without_the_analyzer_is_refused(tmp_path, make_es_store, es_url, es_prefix, monkeypatch):
    corpus = write_corpus(tmp_path / "corpus")
    store = make_es_store(load_settings(corpus), analyzer="ingest_no_such_analyzer")
    with pytest.raises(StoreConfigError, match="has no analyzer 'ingest_no_such_analyzer'.*refusing to index with another one"):
        run(corpus, store)
    client = Elasticsearch(es_url, request_timeout=30)
    try:
        assert list(client.indices.get(index=f"{es_prefix}-*")) == []  # nothing created, nothing indexed
    finally:
        client.close()

    # From the command line: a configuration error, exit 2, naming the analyzer. A name that is no
    # Elasticsearch analyzer at all is refused before connecting; a real one this cluster lacks
    # (the integ-test node has no analysis-common module, so no `german`) is refused by the cluster check.
    for analyzer, message in (
        ("ingest_no_such_analyzer", "INGEST_ES_ANALYZER='ingest_no_such_analyzer' is not a built-in"),
        ("german", "no analyzer 'german'"),
    ):
        monkeypatch.setenv("INGEST_ES_ANALYZER", analyzer)
        cli = CliRunner().invoke(app, ["run", str(corpus), "--store", es_url, "--index-prefix", es_prefix])
        assert cli.exit_code == 2, cli.output
        assert message in " ".join(cli.output.split())  # (rich may wrap lines)
