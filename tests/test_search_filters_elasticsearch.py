"""A search through a role alias writes its access and as-of conditions as a double negation (the
alias's own filter plus plain filters took Elasticsearch 5-17x longer on 1M chunks): the same hits,
in the same order, as the plain filters, on chunks out of force, not yet in force, without dates,
of another label copied into the role's index, and of a label no role reads."""

from __future__ import annotations

from datetime import date

import pytest
from elasticsearch import Elasticsearch

from ingest.store.elasticsearch.query import SEARCH_TYPE, search_body
from tests import helpers

pytestmark = pytest.mark.elasticsearch

make_chunk = helpers.make_chunk
ROLES = {"public": ("public",), "partner": ("public", "partner"), "staff": ("public", "partner", "staff")}
DAYS = (None, date(2023, 1, 1), date(2025, 6, 1), date(2025, 12, 31), date(2026, 1, 1), date(2031, 1, 1))
CHUNKS = [
    make_chunk("always", "1", 0, "Holiday leave needs a form."),
    make_chunk("leave", "1", 0, "Holiday leave is 20 days.", effective_from="2024-01-01", effective_to="2025-12-31"),
    make_chunk("leave", "2", 0, "Holiday leave is twenty five days.", effective_from="2026-01-01"),
    make_chunk("later", "1", 0, "Holiday leave will be thirty days.", effective_from="2030-01-01"),
    make_chunk("until", "1", 0, "Holiday leave carries over.", effective_to="2025-06-30"),
    make_chunk("partner-terms", "1", 0, "Partner holiday cover.", access="partner", effective_to="2025-12-31"),
    make_chunk("partner-faq", "1", 0, "Partner holiday questions.", access="partner"),
    make_chunk("staff-rota", "1", 0, "Staff holiday rota.", access="staff", effective_from="2025-01-01"),
]


def in_force(chunk, day: date | None) -> bool:
    start, end = chunk.effective_from, chunk.effective_to
    return day is None or ((start is None or start <= day.isoformat()) and (end is None or end >= day.isoformat()))


def test_role_alias_searches_give_the_plain_filters_hits(make_es_store, es_url, es_prefix):
    store = make_es_store()
    assert store.write_chunks(CHUNKS).errors == []
    store.refresh()
    client = Elasticsearch(es_url)
    try:
        [public_index] = client.indices.get_alias(index=f"{es_prefix}-chunks_public_*")
        [staff_index] = client.indices.get_alias(index=f"{es_prefix}-chunks_staff_*")
        staff = client.search(index=staff_index, size=1)["hits"]["hits"][0]
        client.index(index=public_index, id=staff["_id"], document=staff["_source"])  # misplaced by hand
        board = {**CHUNKS[0].to_json(), "chunk_id": "b" * 64, "doc_id": "board-minutes", "access": "board"}
        client.index(index=public_index, id=board["chunk_id"], document=board, refresh=True)  # a label no role has
        for role, labels in ROLES.items():
            for day in DAYS:
                hits = store.search("holiday leave", labels, day, top=20, role=role)
                got = [(h.chunk.chunk_id, h.score) for h in hits]
                plain = client.search(
                    index=f"{es_prefix}-chunks-{role}",
                    body=search_body("holiday leave", labels, day, 20, None),
                    search_type=SEARCH_TYPE,
                )["hits"]["hits"]
                assert got == [(h["_id"], h["_score"]) for h in plain], (role, day)
                expected = {c.chunk_id for c in CHUNKS if c.access in labels and in_force(c, day)}
                assert {chunk_id for chunk_id, _ in got} == expected, (role, day)
        # The one document's chunks only, through the alias too.
        one = store.search("holiday", ROLES["staff"], None, top=20, doc_id="leave", role="staff")
        assert [h.chunk.doc_id for h in one] == ["leave", "leave"]
    finally:
        client.close()


def test_only_a_role_alias_search_moves_the_conditions_out_of_the_filters():
    day = date(2026, 3, 1)
    through_alias = search_body("leave", ["public"], day, 5, "leave", behind_role_alias=True)["query"]["bool"]
    assert through_alias["filter"] == [{"term": {"doc_id": "leave"}}]  # selective: leads the search
    [negated] = through_alias["must_not"]
    assert negated["bool"]["must_not"]["bool"]["filter"][0] == {"terms": {"access": ["public"]}}
    plain = search_body("leave", ["public"], day, 5, None)["query"]["bool"]
    assert plain["filter"][0] == {"terms": {"access": ["public"]}} and "must_not" not in plain
