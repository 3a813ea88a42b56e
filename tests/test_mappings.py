"""The Elasticsearch index bodies in mappings/ match the records (Kibana's saved objects: test_kibana.py)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import yaml

from ingest.model import Chunk, DocumentRecord
from ingest.store.elasticsearch import load_index_body

ROOT = Path(__file__).resolve().parents[1]
MAPPINGS_DIR = ROOT / "mappings"  # the folder users read; the package copy is checked in test_packaging.py
KEYWORDS = {"chunk_id", "doc_id", "version", "access", "status", "tags", "source", "source_sha256", "chunker", "superseded_by"}
INTEGERS = {"position", "start", "end", "pages", "word_count"}


def properties(name: str) -> dict:
    return json.loads((MAPPINGS_DIR / f"{name}.json").read_text(encoding="utf-8"))["mappings"]["properties"]


def a_record() -> DocumentRecord:
    return DocumentRecord("d", "1", "T", "s.md", "0" * 64, "markdown", "public", "current", None, None, None, (), "fp", ("a",))


def test_every_chunk_field_is_mapped_and_nothing_else():
    assert set(properties("chunks")) == {f.name for f in dataclasses.fields(Chunk)}


def test_every_document_record_key_is_mapped_and_nothing_else():
    assert set(properties("documents")) == set(a_record().to_json())


def test_mappings_are_strict_with_the_agreed_types():
    for name in ("chunks", "documents", "meta"):
        body = json.loads((MAPPINGS_DIR / f"{name}.json").read_text(encoding="utf-8"))
        assert body["mappings"]["dynamic"] == "strict", name
    chunks = properties("chunks")
    assert {f for f in KEYWORDS if chunks[f]["type"] != "keyword"} == set()
    assert {f for f in INTEGERS if chunks[f]["type"] != "integer"} == set()
    assert chunks["effective_from"]["type"] == chunks["effective_to"]["type"] == "date"
    assert chunks["sections"]["type"] == chunks["heading_path"]["type"] == "keyword"
    # BM25 fields: the english analyzer (issue 10: [search] language defaults to english), each
    # with an unstemmed .exact sub-field for codes.
    exact = {"exact": {"type": "text", "analyzer": "standard"}}
    assert chunks["text"] == {"type": "text", "analyzer": "english", "fields": exact}
    for field in ("title", "section"):
        assert chunks[field]["type"] == "keyword"
        assert chunks[field]["fields"] == {"text": {"type": "text", "analyzer": "english"}, **exact}


def test_the_analyzer_can_be_chosen_and_the_exact_sub_fields_keep_theirs():
    body = load_index_body("chunks", "whitespace")
    props = body["mappings"]["properties"]
    assert props["text"]["analyzer"] == props["title"]["fields"]["text"]["analyzer"] == "whitespace"
    assert props["text"]["fields"]["exact"]["analyzer"] == props["section"]["fields"]["exact"]["analyzer"] == "standard"
    assert properties("chunks")["text"]["analyzer"] == "english"  # the file is untouched


def test_one_elasticsearch_version_everywhere():
    script = (ROOT / "scripts" / "elasticsearch-local").read_text(encoding="utf-8")
    [version] = re.findall(r'ES_VERSION="\$\{INGEST_ES_VERSION:-([0-9.]+)\}"', script)
    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text(encoding="utf-8"))
    images = {name: svc["image"] for name, svc in compose["services"].items()}
    assert images["elasticsearch"] == f"docker.elastic.co/elasticsearch/elasticsearch:{version}"
    assert images["kibana"] == f"docker.elastic.co/kibana/kibana:{version}"
    conftest = (ROOT / "tests" / "conftest.py").read_text(encoding="utf-8")
    assert f'elasticsearch/elasticsearch:{version}"' in conftest
    for ports in (compose["services"]["elasticsearch"]["ports"], compose["services"]["kibana"]["ports"]):
        assert all(p.startswith("127.0.0.1:") for p in ports)
