"""A search through a role alias writes its access and as-of conditions as exclusions (the alias's
own filter plus plain filters took Elasticsearch 5-17x longer on 1M chunks): the labels the index
records that the role may not read (or, where they cannot be known, the role's labels as a double
negation), in force after the day, out of force before it. The same hits, in the same order, as the
plain filters, on chunks out of force, not yet in force, without dates, of another label copied into
the role's index, and of a label no role reads, also once that alias lost its own filter."""

from __future__ import annotations

from datetime import date

import pytest
from elasticsearch import Elasticsearch

from ingest.api import Index
from ingest.run_meta import roles_record
from ingest.settings import Settings
from ingest.store.base import Access, StoreError, follow_recorded_roles
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


def plant_foreign_chunks(client: Elasticsearch, es_prefix: str) -> str:
    """A staff chunk copied into the public index, and a chunk of a label no role has: the public index."""
    [public_index] = client.indices.get_alias(index=f"{es_prefix}-chunks_public_*")
    [staff_index] = client.indices.get_alias(index=f"{es_prefix}-chunks_staff_*")
    staff = client.search(index=staff_index, size=1)["hits"]["hits"][0]
    client.index(index=public_index, id=staff["_id"], document=staff["_source"])  # misplaced by hand
    board = {**CHUNKS[0].to_json(), "chunk_id": "b" * 64, "doc_id": "board-minutes", "access": "board"}
    client.index(index=public_index, id=board["chunk_id"], document=board, refresh=True)  # a label no role has
    return public_index


def withheld(labels: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(set(ROLES["staff"]) - set(labels)))


@pytest.mark.parametrize("known", [False, True], ids=["labels-unknown", "labels-recorded"])
def test_role_alias_searches_give_the_plain_filters_hits(make_es_store, es_url, es_prefix, known):
    store = make_es_store()
    assert store.write_chunks(CHUNKS).errors == []
    store.refresh()
    client = Elasticsearch(es_url)
    try:
        plant_foreign_chunks(client, es_prefix)
        for role, labels in ROLES.items():
            for day in DAYS:
                reader = Access(labels, role, withheld(labels) if known else None)
                hits = store.search("holiday leave", reader, day, top=20)
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


def test_a_label_the_index_does_not_record_stays_out_when_the_alias_lost_its_filter(make_es_store, es_url, es_prefix):
    """The withheld labels cover every label ingest writes; a chunk of any other label is kept out by
    the alias's own filter. With that filter removed outside ingest, the search finds such a chunk
    past its exclusions and searches again with the role's labels checked in the query."""
    store = make_es_store()
    assert store.write_chunks(CHUNKS).errors == []
    store.refresh()
    client = Elasticsearch(es_url)
    try:
        public_index = plant_foreign_chunks(client, es_prefix)
        alias = f"{es_prefix}-chunks-public"
        client.indices.update_aliases(
            actions=[{"remove": {"index": public_index, "alias": alias}}, {"add": {"index": public_index, "alias": alias}}]
        )
        for n, access in enumerate((None, ["public", "board"])):  # no label at all; one of the role's and another
            odd = {**CHUNKS[0].to_json(), "chunk_id": f"{n}" * 64, "doc_id": f"odd-{n}", "access": access}
            client.index(index=public_index, id=odd["chunk_id"], document={k: v for k, v in odd.items() if v is not None})
        client.indices.refresh(index=public_index)
        raw = client.search(index=alias, query={"match": {"text": "holiday"}}, size=20)["hits"]["hits"]
        assert {"board", "staff"} <= {str(h["_source"].get("access")) for h in raw}  # the alias now shows both
        for day in DAYS:
            hits = store.search("holiday leave", Access(("public",), "public", ("partner", "staff")), day, top=20)
            expected = {c.chunk_id for c in CHUNKS if c.access == "public" and in_force(c, day)}
            assert {h.chunk.chunk_id for h in hits} == expected, day
            assert {h.chunk.access for h in hits} <= {"public"}
    finally:
        client.close()


def test_a_chunk_with_several_labels_is_never_returned(make_es_store, es_url, es_prefix):
    """A chunk carrying the role's label and another (a list, written outside ingest) passes a terms
    filter on the role's labels, the alias's included: the search leaves it out all the same."""
    store = make_es_store()
    assert store.write_chunks(CHUNKS).errors == []
    client = Elasticsearch(es_url)
    try:
        [public_index] = client.indices.get_alias(index=f"{es_prefix}-chunks_public_*")
        for n, other in enumerate(("staff", "topsecret")):
            odd = {**CHUNKS[0].to_json(), "chunk_id": f"{n}" * 64, "doc_id": f"odd-{n}", "access": ["public", other]}
            client.index(index=public_index, id=odd["chunk_id"], document=odd)
        client.indices.refresh(index=public_index)
        for reader in (Access(("public",), "public", ("partner", "staff")), Access(("public",), "public")):
            hits = store.search("holiday leave", reader, None, top=20)
            assert {h.chunk.chunk_id for h in hits} == {c.chunk_id for c in CHUNKS if c.access == "public"}
    finally:
        client.close()


def test_a_hit_that_is_not_a_chunk_is_an_error_naming_it(make_es_store, es_url, es_prefix):
    store = make_es_store()
    assert store.write_chunks(CHUNKS).errors == []
    client = Elasticsearch(es_url)
    try:
        [public_index] = client.indices.get_alias(index=f"{es_prefix}-chunks_public_*")
        broken = {k: v for k, v in CHUNKS[0].to_json().items() if k != "word_count"} | {"chunk_id": "c" * 64}
        client.index(index=public_index, id="c" * 64, document=broken, refresh=True)
        with pytest.raises(StoreError, match=f"{public_index}/c{{64}} is not a chunk ingest wrote"):
            store.search("holiday leave", Access(("public",), "public", ("partner", "staff")), None, top=20)
    finally:
        client.close()


def test_damaged_recorded_roles_are_a_store_error_and_the_next_run_records_them_again(make_es_store):
    store = make_es_store()
    assert store.write_chunks(CHUNKS).errors == []
    store.set_meta({"roles": "{not json"})
    with pytest.raises(StoreError, match="run metadata is damaged"):
        Index(store).search("holiday", role="public")
    follow_recorded_roles(store, store.get_meta(), Settings(), dict(ROLES), check=False)
    assert [h.chunk.access for h in Index(store).search("holiday", role="public", as_of=None)] == ["public"] * 5


def test_an_index_resolves_the_withheld_labels_from_what_the_run_recorded(make_es_store):
    store = make_es_store()
    assert store.write_chunks(CHUNKS).errors == []
    index = Index(store)
    assert index.access_for("staff").withheld is None  # no roles recorded: the role's labels are checked
    store.set_meta(roles_record(Settings()))
    index = Index(store)
    assert index.access_for("public") == Access(("public",), "public", ("partner", "staff"))
    assert index.access_for("partner").withheld == ("staff",)
    assert index.access_for("staff").withheld == ()


def test_only_a_role_alias_search_moves_the_conditions_out_of_the_filters():
    day = date(2026, 3, 1)
    through_alias = search_body("leave", ["public"], day, 5, "leave", behind_role_alias=True)["query"]["bool"]
    assert through_alias["filter"] == [{"term": {"doc_id": "leave"}}]  # selective: leads the search
    negated, *as_of = through_alias["must_not"]
    assert negated == {"bool": {"must_not": {"terms": {"access": ["public"]}}}}  # withheld labels unknown
    assert as_of == [{"range": {"effective_from": {"gt": "2026-03-01"}}}, {"range": {"effective_to": {"lt": "2026-03-01"}}}]
    known = search_body("leave", ["public"], day, 5, None, behind_role_alias=True, withheld=["staff", "partner"])
    assert known["query"]["bool"]["must_not"][0] == {"terms": {"access": ["partner", "staff"]}}
    every = search_body("leave", ["public", "staff"], None, 5, None, behind_role_alias=True, withheld=[])
    assert every["query"]["bool"]["must_not"] == []  # the alias's own filter holds the role's labels
    plain = search_body("leave", ["public"], day, 5, None)["query"]["bool"]
    assert plain["filter"][0] == {"terms": {"access": ["public"]}} and "must_not" not in plain
