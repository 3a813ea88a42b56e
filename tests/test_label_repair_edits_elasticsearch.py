"""A label index deleted by hand is recreated by the next run, which writes its versions again from
their files: a file edited meanwhile without a version bump is still refused (its stored bytes are
remembered through the repair), on the fast no-op check and on the full path alike."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch

from tests.test_label_index_repair_elasticsearch import PATHS, Cli, label_index, stored_chunk_ids

pytestmark = pytest.mark.elasticsearch

# fixtures shared with the label index repair tests
from tests.test_label_index_repair_elasticsearch import corpus, es  # noqa: E402,F401

EDITED = "policies/warranty-policy-v4.md"


@pytest.mark.parametrize("path", PATHS, ids=list(PATHS))
def test_an_edit_without_a_version_bump_is_refused_after_its_label_index_was_recreated(
    path, corpus, es: Elasticsearch, es_url, es_prefix
):
    cli = Cli(es_url, es_prefix, PATHS[path])
    cli.json("run", corpus)
    before = stored_chunk_ids(es, es_prefix)
    es.indices.delete(index=label_index(es, es_prefix, "public"))
    edited = corpus / "documents" / EDITED
    edited.write_text(edited.read_text().replace("limited warranty", "lifetime warranty"))

    repaired = cli.json("run", corpus, code=1)
    assert any("recreated" in line for line in repaired["access_repaired"]), repaired
    refused = [p for p in repaired["plan"] if p["source"] == f"documents/{EDITED}"]
    assert [p["action"] for p in refused] == ["rejected"], refused
    assert "content changed" in refused[0]["reason"], refused
    assert repaired["documents"]["rejected"] == 1, repaired["documents"]
    assert not edited_text_stored(es, es_prefix)
    # every other version under 'public' was written again with its chunk IDs
    after = stored_chunk_ids(es, es_prefix)
    assert set(after["public"]) < set(before["public"])
    assert {k: v for k, v in after.items() if k != "public"} == {k: v for k, v in before.items() if k != "public"}

    again = cli.json("run", corpus, code=1)  # still refused on the next run (remembered, not taken as new)
    assert [p["action"] for p in again["plan"] if p["source"] == f"documents/{EDITED}"] == ["rejected"]
    accepted = cli.json("run", corpus, "--accept-edits")
    assert [p["action"] for p in accepted["plan"] if p["source"] == f"documents/{EDITED}"] == ["new"]
    assert edited_text_stored(es, es_prefix)


def edited_text_stored(es: Elasticsearch, prefix: str) -> bool:
    es.indices.refresh(index=f"{prefix}-chunks")
    return bool(
        es.search(index=f"{prefix}-chunks", query={"match_phrase": {"text": "lifetime warranty"}})["hits"]["hits"]
    )
