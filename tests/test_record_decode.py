"""Stored records decoded for a run (``ingest.store.records.record_of``, the SQLite store and the
Elasticsearch no-op check) are the records ``DocumentRecord.from_json`` gives: equal, same fields."""

from __future__ import annotations

import dataclasses

import pytest

from ingest.model import DocumentRecord
from ingest.store.records import record_of
from tests.helpers import make_chunk, make_record

FULL = make_record([make_chunk("policy", "2", position=i) for i in range(3)]).to_json()
SHAPES = [
    FULL,
    {**FULL, "status": None, "tags": None, "chunk_ids": None},  # defaults as from_json fills them
    {k: v for k, v in FULL.items() if k not in ("status", "tags", "chunk_ids", "effective_to", "superseded_by")},
    {**FULL, "effective_from": "2026-01-01", "effective_to": "2026-12-31", "superseded_by": "policy@3"},
]


@pytest.mark.parametrize("data", SHAPES)
def test_record_of_equals_from_json(data: dict) -> None:
    fast, reference = record_of(data), DocumentRecord.from_json(data)
    assert fast == reference and hash(fast) == hash(reference) and repr(fast) == repr(reference)
    assert vars(fast) == {f.name: getattr(reference, f.name) for f in dataclasses.fields(DocumentRecord)}
    assert fast.key == reference.key and fast.chunk_count == reference.chunk_count


def test_a_record_missing_a_required_field_is_refused_as_by_from_json() -> None:
    broken = {k: v for k, v in FULL.items() if k != "source_sha256"}
    with pytest.raises(KeyError):
        DocumentRecord.from_json(broken)
    with pytest.raises(KeyError):
        record_of(broken)
