"""One contract, both stores: the same calls give the same records, counts and filter results.

:class:`StoreContract` is the conformance suite: a store's tests subclass it and provide a ``store``
fixture (an empty store, closed afterwards). tests/test_store_sqlite.py runs it on SQLite,
tests/test_store_elasticsearch.py on a real Elasticsearch (see tests/conftest.py). A new store
passes this suite before anything else uses it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from ingest.model import DocKey
from ingest.store.base import Access, AmbiguousPrefix, ChunkNotFound, StoreLocked
from tests.helpers import make_chunk, make_record

PUBLIC, PARTNER, STAFF = ("public",), ("public", "partner"), ("public", "partner", "staff")


def fill(store, docs):
    for chunks in docs:
        report = store.write_chunks(chunks)
        assert report.errors == []
        store.put_document(make_record(chunks))


def corpus_docs():
    open_doc = [
        make_chunk("handbook", "1", 0, "Opening hours of the service desk are nine to five.", section="Hours"),
        make_chunk("handbook", "1", 1, "Returns are accepted within thirty days of purchase.", section="Returns"),
        make_chunk("handbook", "1", 2, "Contact the desk by phone or by email.", section="Contact"),
    ]
    staff_doc = [make_chunk("margins", "2", 0, "Internal margin on the X40 engine is forty percent.", access="staff", section="Margins")]
    partner_doc = [make_chunk("dealer-terms", "1", 0, "Dealer discount on the X40 engine is twelve percent.", access="partner", section="Discounts")]
    old = [make_chunk("warranty", "4", 0, "The engine warranty lasts 24 months.", effective_from="2024-01-01", effective_to="2025-06-30", section="Length")]
    new = [make_chunk("warranty", "5", 0, "The engine warranty lasts 36 months.", effective_from="2025-07-01", section="Length")]
    return [open_doc, staff_doc, partner_doc, old, new]


def ids(hits):
    return [h.chunk.doc_id for h in hits]


class StoreContract:
    """The behaviour every store shares; subclasses provide the ``store`` fixture."""

    def test_records_round_trip_exactly(self, store):
        docs = corpus_docs()
        fill(store, docs)
        for chunks in docs:
            for chunk in chunks:
                assert store.get_chunk(chunk.chunk_id) == chunk
        assert sorted(r.key for r in store.documents()) == ["dealer-terms@1", "handbook@1", "margins@2", "warranty@4", "warranty@5"]
        assert {r.key: r for r in store.documents()}["handbook@1"] == make_record(docs[0])

    def test_public_role_never_sees_staff_or_partner(self, store):
        fill(store, corpus_docs())
        hits = store.search("X40 engine margin discount percent", PUBLIC, None, top=10, role="public")
        assert all(h.chunk.access == "public" for h in hits)
        assert "margins" not in ids(hits) and "dealer-terms" not in ids(hits)
        partner = store.search("X40 engine margin discount percent", PARTNER, None, top=10, role="partner")
        assert "dealer-terms" in ids(partner) and "margins" not in ids(partner)
        staff = store.search("X40 engine margin discount percent", STAFF, None, top=10, role="staff")
        assert {"dealer-terms", "margins"} <= set(ids(staff))

    def test_as_of_keeps_only_the_version_in_force(self, store):
        fill(store, corpus_docs())
        def versions(day):
            return [h.chunk.version for h in store.search("engine warranty months", PUBLIC, day, top=10, role="public")]
        assert versions(date(2025, 1, 1)) == ["4"]
        assert versions(date(2025, 6, 30)) == ["4"]
        assert versions(date(2025, 7, 1)) == ["5"]
        assert versions(date(2023, 12, 31)) == []
        assert sorted(versions(None)) == ["4", "5"]

    def test_search_filters_by_doc_id_and_reports_scores(self, store):
        fill(store, corpus_docs())
        hits = store.search("desk", PUBLIC, None, top=5, doc_id="handbook", role="public")
        assert ids(hits) == ["handbook", "handbook"]
        assert hits[0].score >= hits[1].score > 0
        assert store.search("desk", PUBLIC, None, top=5, doc_id="warranty", role="public") == []

    def test_prefix_lookup(self, store):
        docs = corpus_docs()
        fill(store, docs)
        target = docs[0][1]
        assert store.get_chunk(target.chunk_id[:8]) == target
        assert store.get_chunk(target.chunk_id[:12].upper()) == target
        with pytest.raises(ChunkNotFound):
            store.get_chunk("ffffffffffffffffffff" if not target.chunk_id.startswith("ffff") else "00000000")
        with pytest.raises(ChunkNotFound):
            store.get_chunk(target.chunk_id[:7])  # below 8 characters is never a lookup

    def test_ambiguous_prefix(self, store):
        a = make_chunk("a", "1", 0, "alpha text")
        b = make_chunk("b", "1", 0, "beta text")
        a = replace(a, chunk_id="abcdef12" + "0" * 12)
        b = replace(b, chunk_id="abcdef12" + "1" * 12)
        assert store.write_chunks([a, b]).errors == []
        with pytest.raises(AmbiguousPrefix):
            store.get_chunk("abcdef12")
        assert store.get_chunk("abcdef120") == a

    def test_document_chunks_and_neighbours_in_order(self, store):
        docs = corpus_docs()
        fill(store, docs)
        handbook = docs[0]
        assert store.document_chunks("handbook") == handbook
        assert store.document_chunks("handbook", "1") == handbook
        assert store.document_chunks("warranty") == docs[3] + docs[4]
        before, after = store.neighbours(handbook[1], 1)
        assert before == [handbook[0]] and after == [handbook[2]]
        before, after = store.neighbours(handbook[0], 5)
        assert before == [] and after == handbook[1:]

    def test_counts(self, store):
        fill(store, corpus_docs())
        counts = store.counts()
        assert counts["totals"] == {"chunks": 7, "documents": 5}
        assert counts["access"] == {"partner": 1, "public": 5, "staff": 1}
        assert counts["version"] == {"1": 4, "2": 1, "4": 1, "5": 1}
        assert counts["format"] == {"markdown": 7}

    def test_delete_chunks_and_documents(self, store):
        docs = corpus_docs()
        fill(store, docs)
        assert store.delete_chunks([c.chunk_id for c in docs[0]]) == 3
        store.delete_document("handbook", "1")
        assert store.document_chunks("handbook") == []
        assert "handbook@1" not in {r.key for r in store.documents()}
        assert store.search("desk", PUBLIC, None, role="public") == []
        assert store.delete_chunks([docs[0][0].chunk_id]) == 0

    def test_chunk_keys_and_iter_chunks(self, store):
        docs = corpus_docs()
        fill(store, docs)
        every = [c for chunks in docs for c in chunks]
        assert sorted(store.chunk_keys()) == sorted((c.chunk_id, c.doc_id, c.version) for c in every)
        assert sorted(store.iter_chunks(), key=lambda c: c.chunk_id) == sorted(every, key=lambda c: c.chunk_id)

    def test_meta_round_trip(self, store):
        store.set_meta({"chunker": "structure", "size": "200"})
        assert store.get_meta()["chunker"] == "structure"
        store.set_meta({"size": "100"})
        assert store.get_meta()["size"] == "100"

    def test_full_rebuild_replaces_everything_or_nothing(self, store):
        docs = corpus_docs()
        fill(store, docs)
        with pytest.raises(RuntimeError):
            with store.full_rebuild() as fresh:
                fresh.write_chunks(docs[1])
                raise RuntimeError("crash during rebuild")
        assert len(store.documents()) == 5  # the old index still answers
        with store.full_rebuild() as fresh:
            fill(fresh, [docs[1]])
        assert [r.key for r in store.documents()] == ["margins@2"]
        assert store.counts()["totals"] == {"chunks": 1, "documents": 1}
        assert store.search("desk", PUBLIC, None, role="public") == []

    def test_second_writer_is_refused_while_locked(self, store):
        with store.lock("first run"):
            with pytest.raises(StoreLocked):
                with store.lock("second run"):
                    pass
        with store.lock("third run"):  # released after the first finished
            pass

    def test_a_prefix_that_is_not_hex_is_no_lookup(self, store):
        fill(store, corpus_docs())
        for text in ("handbook", "zzzzzzzz", "abcdef1-", "a" * 21):
            with pytest.raises(ChunkNotFound, match="is not a chunk ID"):
                store.get_chunk(text)

    def test_search_takes_one_access_value(self, store):
        fill(store, corpus_docs())
        query = "X40 engine margin discount percent"
        for role, labels in (("public", PUBLIC), ("partner", PARTNER), ("staff", STAFF)):
            assert store.search(query, Access(labels, role), None, top=10) == store.search(
                query, labels, None, top=10, role=role
            )
        assert "dealer-terms" not in ids(store.search(query, Access(PUBLIC, "public"), None, top=10))

    def test_records_are_deleted_by_doc_key(self, store):
        fill(store, corpus_docs())
        store.delete_documents([DocKey("handbook", "1"), "warranty@4"])
        assert sorted(r.doc_key for r in store.documents()) == [
            DocKey("dealer-terms", "1"),
            DocKey("margins", "2"),
            DocKey("warranty", "5"),
        ]

    def test_a_narrowed_role_stops_reading_once_access_is_reconciled(self, store):
        """[roles] narrowed after a run: both stores report the difference (layout --check, verify),
        the reconcile (layout, every run) repairs it, and the role's searches no longer find the label."""
        from ingest.api import Index
        from ingest.pipeline import roles_record
        from ingest.settings import Settings

        fill(store, corpus_docs())
        store.set_meta(roles_record(Settings()))  # as a run records the roles it followed
        store.reconcile_access({"public": PUBLIC, "partner": PARTNER, "staff": STAFF})
        query = "X40 engine margin discount percent"
        assert "dealer-terms" in ids(Index(store).search(query, role="partner", as_of=None, top=10))
        narrowed = {"public": PUBLIC, "partner": PUBLIC, "staff": STAFF}
        assert store.reconcile_access(narrowed, check=True) != []  # reported, nothing changed
        assert "dealer-terms" in ids(Index(store).search(query, role="partner", as_of=None, top=10))
        changes = store.reconcile_access(narrowed)
        assert any("'partner'" in line for line in changes)
        assert store.reconcile_access(narrowed, check=True) == []
        partner = ids(Index(store).search(query, role="partner", as_of=None, top=10))
        assert "dealer-terms" not in partner and "margins" not in partner
        assert "dealer-terms" in ids(Index(store).search(query, role="staff", as_of=None, top=10))

    def test_the_recorded_roles_follow_the_reconcile(self, store):
        """What `stats -v` shows and searches resolve a role to (the roles the store records) follows
        [roles] with the access itself: after the reconcile (layout) the narrowed role is recorded, and
        recorded roles left behind (by a layout that moved the aliases only) are a reported difference."""
        from ingest.api import labels_for_role, roles_of
        from ingest.pipeline import roles_record
        from ingest.settings import Settings

        fill(store, corpus_docs())
        wide = roles_record(Settings())
        store.set_meta(wide)  # as a run records the roles it followed
        narrowed = {"public": PUBLIC, "partner": PUBLIC, "staff": STAFF}
        store.reconcile_access(narrowed)
        assert roles_of(store) == narrowed and labels_for_role(store, "partner") == PUBLIC
        assert store.reconcile_access(narrowed, check=True) == []
        store.set_meta(wide)  # the recorded roles of before, the access already narrowed
        assert any("'partner'" in line for line in store.reconcile_access(narrowed, check=True))
        assert roles_of(store)["partner"] == PARTNER  # reported only
        assert any("'partner'" in line for line in store.reconcile_access(narrowed))
        assert roles_of(store) == narrowed and store.reconcile_access(narrowed, check=True) == []
