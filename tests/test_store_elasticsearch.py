"""ElasticsearchStore against a real Elasticsearch 9 (see conftest.py for how one is found)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
from datetime import date, datetime, timedelta, timezone

import pytest
from elasticsearch import BadRequestError, Elasticsearch, NotFoundError

import ingest.store.elasticsearch as es_store
from ingest.store.elasticsearch import transport
from ingest.model import chunk_id
from ingest.settings import Settings
from ingest.store.base import AmbiguousPrefix, ChunkNotFound, StoreLocked, StoreUnavailable
from ingest.store.elasticsearch import ElasticsearchStore
from tests import helpers
from tests.test_store_contract import StoreContract

pytestmark = pytest.mark.elasticsearch

ALL = ("public", "partner", "staff")
DAY = date(2026, 3, 1)


make_chunk = helpers.make_chunk
record_for = helpers.make_record


WARRANTY = [
    make_chunk("warranty-policy", "5", 0, "Every appliance carries a two year warranty from the date of delivery."),
    make_chunk("warranty-policy", "5", 1, "Returns are accepted within thirty days with the original receipt.", section="Returns"),
    make_chunk("warranty-policy", "5", 2, "Refunds go back to the original payment method.", section="Refunds"),
]
PARTNER = [make_chunk("partner-pricing", "2", 0, "Partners receive a warranty discount of twelve percent.", access="partner")]
STAFF = [make_chunk("staff-handbook", "1", 0, "Staff may extend a warranty by six months for loyal customers.", access="staff")]


def ids(hits) -> list[str]:
    return [hit.chunk.chunk_id for hit in hits]


class TestElasticsearchContract(StoreContract):
    """The store contract (tests/test_store_contract.py) against a real Elasticsearch."""

    @pytest.fixture
    def store(self, make_es_store):
        return make_es_store()  # closed by make_es_store


def test_written_chunks_come_back_exactly(make_es_store):
    store = make_es_store()
    report = store.write_chunks(WARRANTY + PARTNER + STAFF)
    assert (report.written, report.errors) == (5, [])
    assert store.get_chunk(WARRANTY[1].chunk_id) == WARRANTY[1]
    assert store.document_chunks("warranty-policy") == WARRANTY
    assert sorted(store.iter_chunks(), key=lambda c: c.chunk_id) == sorted(WARRANTY + PARTNER + STAFF, key=lambda c: c.chunk_id)
    assert store.chunk_keys() == sorted((c.chunk_id, c.doc_id, c.version) for c in WARRANTY + PARTNER + STAFF)


def test_search_ranks_by_bm25_and_boosts_title_and_section(make_es_store):
    store = make_es_store()
    store.write_chunks(WARRANTY)
    assert ids(store.search("receipt", ["public"], DAY)) == [WARRANTY[1].chunk_id]
    # "refunds" is in chunk 2's section and text; the section boost puts it first.
    hits = store.search("refunds", ["public"], DAY, top=1)
    assert ids(hits) == [WARRANTY[2].chunk_id] and hits[0].score > 0
    assert store.search("warranty", ["public"], DAY, doc_id="no-such-doc") == []
    assert store.search("zebra", ["public"], DAY) == []


def test_equal_scores_are_ordered_by_chunk_id(make_es_store):
    store = make_es_store()
    twins = [make_chunk("twins", "1", p, "identical words here") for p in range(6)]
    store.write_chunks(twins)
    hits = store.search("identical", ["public"], None, top=6)
    assert len({h.score for h in hits}) == 1
    assert ids(hits) == sorted(c.chunk_id for c in twins)
    assert ids(store.search("identical", ["public"], None, top=3)) == sorted(c.chunk_id for c in twins)[:3]


def test_public_role_never_sees_partner_or_staff_chunks(make_es_store, es_url, es_prefix):
    store = make_es_store()
    store.write_chunks(WARRANTY + PARTNER + STAFF)
    public = store.search("warranty", ["public"], DAY, top=10, role="public")
    assert {h.chunk.access for h in public} == {"public"}
    staff = store.search("warranty", list(ALL), DAY, top=10, role="staff")
    assert {h.chunk.doc_id for h in staff} == {"warranty-policy", "partner-pricing", "staff-handbook"}
    # Even with every label asked for, the public alias holds no partner or staff chunk.
    leaked = store.search("warranty", list(ALL), DAY, top=10, role="public")
    assert {h.chunk.access for h in leaked} == {"public"}
    # Labels filter inside the query too (the all-alias holds everything).
    assert {h.chunk.access for h in store.search("warranty", ["public", "partner"], DAY, top=10)} == {"public", "partner"}

    client = Elasticsearch(es_url)
    try:
        by_id = client.search(index=f"{es_prefix}-chunks-public", query={"ids": {"values": [STAFF[0].chunk_id]}})
        assert by_id["hits"]["hits"] == []
        with pytest.raises(NotFoundError):
            client.get(index=f"{es_prefix}-chunks-public", id=STAFF[0].chunk_id)
        staff_hits = client.search(index=f"{es_prefix}-chunks-staff", query={"ids": {"values": [STAFF[0].chunk_id]}})
        assert [h["_id"] for h in staff_hits["hits"]["hits"]] == [STAFF[0].chunk_id]
        aliases = client.indices.get_alias(name=f"{es_prefix}-chunks-partner")
        assert sorted(store.label_of_index(i) for i in aliases) == ["partner", "public"]
    finally:
        client.close()


def test_a_chunk_whose_label_changes_leaves_its_old_index(make_es_store):
    store = make_es_store()
    store.write_chunks(WARRANTY[:1])
    now_staff = make_chunk("warranty-policy", "5", 0, WARRANTY[0].text, access="staff")
    assert now_staff.chunk_id == WARRANTY[0].chunk_id
    store.write_chunks([now_staff])
    assert store.search("appliance", ["public"], DAY, role="public") == []
    assert store.get_chunk(now_staff.chunk_id).access == "staff"
    assert store.counts()["access"] == {"staff": 1}


def test_as_of_keeps_only_chunks_in_force(make_es_store):
    store = make_es_store()
    old = make_chunk("leave", "1", 0, "Holiday leave is twenty days.", effective_from="2024-01-01", effective_to="2025-12-31")
    new = make_chunk("leave", "2", 0, "Holiday leave is twenty five days.", effective_from="2026-01-01")
    always = make_chunk("leave-faq", "1", 0, "Ask your manager about holiday leave.")
    store.write_chunks([old, new, always])

    def found(day):
        return sorted(h.chunk.doc_id + "@" + h.chunk.version for h in store.search("holiday", ["public"], day, top=10))

    assert found(date(2025, 6, 1)) == ["leave-faq@1", "leave@1"]
    assert found(date(2025, 12, 31)) == ["leave-faq@1", "leave@1"]
    assert found(date(2026, 1, 1)) == ["leave-faq@1", "leave@2"]
    assert found(date(2023, 1, 1)) == ["leave-faq@1"]
    assert found(None) == ["leave-faq@1", "leave@1", "leave@2"]


def test_get_by_prefix_ambiguous_and_missing(make_es_store):
    store = make_es_store()
    first, second = _two_ids_sharing_eight_chars()
    chunks = [make_chunk("collide", "1", pos, f"text {pos}") for pos in (first, second)]
    store.write_chunks(chunks + WARRANTY)
    a, b = chunks
    assert a.chunk_id[:8] == b.chunk_id[:8] and a.chunk_id != b.chunk_id
    with pytest.raises(AmbiguousPrefix) as err:
        store.get_chunk(a.chunk_id[:8])
    assert sorted(err.value.matches) == sorted([a.chunk_id, b.chunk_id])
    unique = next(n for n in range(9, 21) if a.chunk_id[:n] != b.chunk_id[:n])
    assert store.get_chunk(a.chunk_id[:unique]) == a
    assert store.get_chunk(WARRANTY[0].short_id) == WARRANTY[0]
    assert store.get_chunk(WARRANTY[0].chunk_id.upper()) == WARRANTY[0]
    with pytest.raises(ChunkNotFound):
        store.get_chunk("ffffffffffffffffffff")
    with pytest.raises(ChunkNotFound):
        store.get_chunk(WARRANTY[0].chunk_id[:7])


def _two_ids_sharing_eight_chars() -> tuple[int, int]:
    """Two positions p whose chunk IDs ('collide', '1', p*1000, p*1000+len) share 8 hex chars."""
    seen: dict[str, int] = {}
    for pos in itertools.count():
        text = f"text {pos}"
        prefix = chunk_id("collide", "1", pos * 1000, pos * 1000 + len(text))[:8]
        if prefix in seen:
            return seen[prefix], pos
        seen[prefix] = pos
    raise AssertionError("unreachable")


def test_document_chunks_and_neighbours_in_order(make_es_store):
    store = make_es_store()
    v1 = [make_chunk("manual", "1", p, f"old part {p}") for p in range(3)]
    v2 = [make_chunk("manual", "2", p, f"new part {p}") for p in range(6)]
    store.write_chunks(list(reversed(v1 + v2)))
    assert store.document_chunks("manual") == v1 + v2
    assert store.document_chunks("manual", "2") == v2
    assert store.document_chunks("nothing") == []
    assert store.neighbours(v2[3], 2) == (v2[1:3], v2[4:6])
    assert store.neighbours(v2[0], 2) == ([], v2[1:3])
    assert store.neighbours(v2[5], 9) == (v2[:5], [])
    assert store.neighbours(v1[1], 5) == ([v1[0]], [v1[2]])
    assert store.neighbours(v2[2], 0) == ([], [])


def test_scrolling_reads_every_page(make_es_store, monkeypatch):
    monkeypatch.setattr(transport, "PAGE", 4)
    store = make_es_store()
    chunks = [make_chunk("long", "1", p, f"part {p}", access=ALL[p % 3]) for p in range(23)]
    store.write_chunks(chunks)
    assert store.document_chunks("long") == chunks
    assert [k[0] for k in store.chunk_keys()] == sorted(c.chunk_id for c in chunks)
    assert len(list(store.iter_chunks())) == 23


def test_document_records_are_read_across_pages(make_es_store, monkeypatch):
    # Records are read in their own (larger) pages: every page still comes back, in order.
    import ingest.store.elasticsearch.store as es_store_module

    monkeypatch.setattr(es_store_module, "RECORDS_PAGE", 3)
    store = make_es_store()
    records = [record_for([make_chunk(f"doc-{n:02d}", "1", 0, f"text {n}")]) for n in range(10)]
    store.put_documents(records)
    assert store.documents() == records


def test_a_large_write_is_split_into_bounded_requests_and_all_lands(make_es_store):
    store = make_es_store()
    big = [make_chunk("big-manual", "1", p, f"page {p} " + "lorem ipsum dolor " * 20000) for p in range(40)]
    assert sum(len(c.text) for c in big) > 2 * es_store.BULK_MAX_BYTES
    report = store.write_chunks(big)
    assert (report.written, report.errors) == (40, [])
    assert [c.position for c in store.document_chunks("big-manual")] == list(range(40))


def test_documents_counts_and_deletes(make_es_store):
    store = make_es_store()
    pdf = [make_chunk("price-list", "3", p, f"price row {p}", access="partner", pages=(p + 1,)) for p in range(2)]
    store.write_chunks(WARRANTY + pdf)
    store.put_document(record_for(WARRANTY))
    store.put_document(record_for(pdf, fmt="pdf"))
    assert store.documents() == [record_for(pdf, fmt="pdf"), record_for(WARRANTY)]
    assert store.counts() == {
        "access": {"public": 3, "partner": 2},
        "status": {"current": 5},
        "version": {"5": 3, "3": 2},
        "format": {"markdown": 3, "pdf": 2},
        "totals": {"chunks": 5, "documents": 2},
    }
    assert store.delete_chunks([pdf[0].chunk_id, pdf[1].chunk_id, "0" * 20]) == 2
    store.delete_document("price-list", "3")
    store.delete_document("price-list", "3")  # already gone: fine
    assert store.documents() == [record_for(WARRANTY)]
    assert store.counts()["totals"] == {"chunks": 3, "documents": 1}


def test_an_empty_prefix_reads_as_empty_and_creates_nothing(make_es_store, es_url, es_prefix):
    store = make_es_store()
    assert store.search("anything", ["public"], DAY, role="public") == []
    assert store.documents() == [] and store.chunk_keys() == [] and store.get_meta() == {}
    assert store.counts()["totals"] == {"chunks": 0, "documents": 0}
    with pytest.raises(ChunkNotFound):
        store.get_chunk("abcdef0123")
    client = Elasticsearch(es_url)
    try:
        assert list(client.indices.get(index=f"{es_prefix}-*")) == []
    finally:
        client.close()


def test_meta_is_merged_and_kept(make_es_store):
    store = make_es_store()
    store.set_meta({"last_run": "2026-03-01T10:00:00Z", "chunker": "structure:200"})
    store.set_meta({"last_run": "2026-03-02T10:00:00Z"})
    assert make_es_store().get_meta() == {"last_run": "2026-03-02T10:00:00Z", "chunker": "structure:200"}


class ChunkWithUnknownField(ElasticsearchStore):
    """Writes one chunk with a field the strict mapping refuses."""

    def chunk_source(self, chunk):
        source = super().chunk_source(chunk)
        if chunk.position == 1:
            source["colour"] = "blue"
        return source


def test_a_refused_item_is_reported_and_the_others_land(es_url, es_prefix):
    store = ChunkWithUnknownField(es_url, prefix=es_prefix)
    try:
        odd = make_chunk("odd", "1", 0, "label nobody knows", access="secret")
        report = store.write_chunks(WARRANTY + [odd])
        assert report.written == 2
        assert [e.id for e in report.errors] == [odd.chunk_id, WARRANTY[1].chunk_id]
        by_id = {e.id: e.reason for e in report.errors}
        assert "strict_dynamic_mapping_exception" in by_id[WARRANTY[1].chunk_id]
        assert "colour" in by_id[WARRANTY[1].chunk_id]
        assert "access label 'secret' is not configured" in report.errors[0].reason
        assert sorted(k[0] for k in store.chunk_keys()) == sorted([WARRANTY[0].chunk_id, WARRANTY[2].chunk_id])
    finally:
        store.close()


def test_unreachable_store_fails_fast_with_the_url():
    store = ElasticsearchStore("http://127.0.0.1:1", prefix="ingest")
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as err:
        store.check()
    assert time.monotonic() - started < 5
    assert "http://127.0.0.1:1" in str(err.value) and "check" in str(err.value)
    with pytest.raises(StoreUnavailable):
        store.search("x", ["public"], DAY, role="public")
    with pytest.raises(StoreUnavailable) as err:
        store.write_chunks(WARRANTY)
    assert "http://127.0.0.1:1" in str(err.value)
    assert time.monotonic() - started < 15
    store.close()


def test_the_lock_excludes_a_second_run_until_released(make_es_store):
    first, second = make_es_store(), make_es_store()
    with first.lock("run-a"):
        with pytest.raises(StoreLocked) as err:
            with second.lock("run-b"):
                pass
        assert "run-a" in str(err.value)
    with second.lock("run-b"):
        pass


def test_a_waiting_run_gets_the_lock_when_it_is_released(make_es_store):
    first, second = make_es_store(), make_es_store()
    got: list[float] = []
    with first.lock("run-a"):
        started = time.monotonic()

        def wait_for_lock():
            with second.lock("run-b", wait_s=10):
                got.append(time.monotonic() - started)

        waiter = threading.Thread(target=wait_for_lock)
        waiter.start()
        time.sleep(1.0)
        assert got == []
    waiter.join(15)
    assert len(got) == 1 and 0.9 < got[0] < 10


def test_an_expired_lock_is_taken_over(make_es_store, es_url, es_prefix):
    store = make_es_store()
    with store.lock("warm-up"):
        pass  # creates the meta index
    past = datetime.now(timezone.utc) - timedelta(minutes=1)
    client = Elasticsearch(es_url)
    try:
        client.create(
            index=f"{es_prefix}-meta", id="lock",
            document={"owner": "crashed-run", "acquired_at": (past - timedelta(minutes=10)).isoformat(), "expires_at": past.isoformat()},
            refresh=True,
        )
        with store.lock("next-run"):
            assert client.get(index=f"{es_prefix}-meta", id="lock")["_source"]["owner"] == "next-run"
        with pytest.raises(NotFoundError):
            client.get(index=f"{es_prefix}-meta", id="lock")
    finally:
        client.close()


def test_the_lock_of_a_killed_run_on_this_host_is_taken_over_at_once(make_es_store, es_url, es_prefix):
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys, time\n"
            "from ingest.store.elasticsearch import ElasticsearchStore\n"
            f"store = ElasticsearchStore({es_url!r}, prefix={es_prefix!r})\n"
            "with store.lock('doomed-run'):\n"
            "    print('locked', flush=True)\n"
            "    time.sleep(60)\n"
        )],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreLocked) as err:
            with make_es_store().lock("while-alive"):
                pass
        assert "being written by doomed-run" in str(err.value)
    finally:
        holder.kill()
    holder.wait()
    started = time.monotonic()
    with make_es_store().lock("after-kill"):
        assert time.monotonic() - started < 5


def test_a_held_lock_is_kept_alive_past_its_ttl(make_es_store):
    holder, other = make_es_store(lock_ttl_s=1.5), make_es_store()
    with holder.lock("long-run"):
        time.sleep(2.5)
        with pytest.raises(StoreLocked):
            with other.lock("impatient"):
                pass


def test_full_rebuild_switches_atomically_and_drops_old_indices(make_es_store, es_url, es_prefix):
    store = make_es_store()
    old = [make_chunk("guide", "1", p, f"shipping guide part {p}") for p in range(20)]
    new = [make_chunk("guide", "2", p, f"shipping guide revised part {p}") for p in range(30)]
    store.write_chunks(old)
    store.put_document(record_for(old))
    store.refresh()
    client = Elasticsearch(es_url)
    old_indices = set(client.indices.get(index=f"{es_prefix}-chunks_*,{es_prefix}-documents_*"))

    reader = make_es_store()
    seen: list[set[str]] = []
    failures: list[BaseException] = []
    stop = threading.Event()

    def search_forever():
        while not stop.is_set():
            try:
                seen.append({h.chunk.version for h in reader.search("shipping", ["public"], None, top=100, role="public")})
            except BaseException as exc:  # noqa: BLE001 - counted, asserted below
                failures.append(exc)

    thread = threading.Thread(target=search_forever)
    thread.start()
    try:
        with store.full_rebuild() as fresh:
            assert fresh.documents() == [] and fresh.chunk_keys() == []
            for part in (new[:15], new[15:]):
                assert fresh.write_chunks(part).errors == []
                time.sleep(0.3)
            fresh.put_document(record_for(new))
            assert len(fresh.chunk_keys()) == 30  # the rebuild reads what it wrote
            assert {h.chunk.version for h in reader.search("shipping", ["public"], None, top=100, role="public")} == {"1"}
        time.sleep(0.5)
    finally:
        stop.set()
        thread.join()
    try:
        assert failures == []
        assert seen and all(versions in ({"1"}, {"2"}) for versions in seen)
        assert seen[-1] == {"2"}
        assert [h.chunk for h in store.search("revised", ["public"], None, top=100)] != []
        assert store.document_chunks("guide") == new
        assert store.documents() == [record_for(new)]
        now = set(client.indices.get(index=f"{es_prefix}-chunks_*,{es_prefix}-documents_*"))
        assert now.isdisjoint(old_indices) and len(now) == 4
        settings = client.indices.get_settings(index=",".join(now))
        assert {s["settings"]["index"].get("refresh_interval") for s in settings.values()} == {None}
        # Writes after the rebuild go to the new build.
        store.write_chunks([make_chunk("extra", "1", 0, "shipping extra")])
        assert len(store.chunk_keys()) == 31
    finally:
        client.close()


def test_a_failed_rebuild_leaves_the_old_store_as_it_was(make_es_store, es_url, es_prefix):
    store = make_es_store()
    store.write_chunks(WARRANTY)
    client = Elasticsearch(es_url)
    try:
        before = set(client.indices.get(index=f"{es_prefix}-*"))
        with pytest.raises(RuntimeError):
            with store.full_rebuild() as fresh:
                fresh.write_chunks(STAFF)
                raise RuntimeError("parser crashed")
        assert set(client.indices.get(index=f"{es_prefix}-*")) == before
        assert store.document_chunks("warranty-policy") == WARRANTY
        assert store.document_chunks("staff-handbook") == []
    finally:
        client.close()


def test_roles_and_labels_from_settings_shape_the_aliases(make_es_store, es_url, es_prefix):
    settings = Settings(labels=("open", "internal"), roles={"guest": ("open",), "employee": ("open", "internal")})
    store = make_es_store(settings=settings)
    store.write_chunks([make_chunk("a", "1", 0, "alpha words", access="open"), make_chunk("b", "1", 0, "alpha secrets", access="internal")])
    assert [h.chunk.doc_id for h in store.search("alpha", ["open", "internal"], None, role="guest")] == ["a"]
    assert sorted(h.chunk.doc_id for h in store.search("alpha", ["open", "internal"], None, role="employee")) == ["a", "b"]
    # A new role in ingest.toml gets its alias on the next write.
    wider = Settings(labels=settings.labels, roles={**settings.roles, "auditor": ("internal",)})
    make_es_store(settings=wider).write_chunks([])
    client = Elasticsearch(es_url)
    try:
        assert [store.label_of_index(i) for i in client.indices.get_alias(name=f"{es_prefix}-chunks-auditor")] == ["internal"]
        # A role dropped from ingest.toml loses its alias, and with it every read.
        make_es_store(settings=settings).write_chunks([])
        assert not client.indices.exists_alias(name=f"{es_prefix}-chunks-auditor")
        assert client.indices.exists_alias(name=f"{es_prefix}-chunks-guest")
    finally:
        client.close()


# --- issue 12: access follows [roles], owned names, a lock held or lost loudly, truthful errors ---

from ingest import pipeline  # noqa: E402 - section appended for the failure guarantees
from ingest.store.base import QueryTooLarge, StoreConfigError  # noqa: E402
from tests.corpus_builder import make_corpus  # noqa: E402

WIDE = Settings(roles={"public": ("public", "partner"), "partner": ("public", "partner"), "staff": ALL})
TIGHT = Settings(roles={"public": ("public",), "partner": ("public", "partner"), "staff": ALL})


def public_reads(client, prefix, chunk):
    """What the public alias gives for a partner chunk: by search and by GET."""
    hits = client.search(index=f"{prefix}-chunks-public", query={"term": {"access": "partner"}}, size=100)["hits"]["hits"]
    try:
        by_get = client.get(index=f"{prefix}-chunks-public", id=chunk)["found"]
    except NotFoundError:
        by_get = False
    except BadRequestError:  # an alias over several indices cannot GET by ID
        by_get = None
    return len(hits), by_get


def test_tightened_roles_are_applied_by_an_unchanged_run(tmp_path, make_es_store, es_url, es_prefix):
    corpus = make_corpus(tmp_path / "corpus")
    assert pipeline.run(corpus, make_es_store(WIDE), WIDE, WIDE.chunking).ok
    client = Elasticsearch(es_url)
    try:
        partner = next(c for c in make_es_store(WIDE).iter_chunks() if c.access == "partner").chunk_id
        assert public_reads(client, es_prefix, partner) != (0, False)  # the wide roles let public read partner
        result = pipeline.run(corpus, make_es_store(TIGHT), TIGHT, TIGHT.chunking)
        assert result.ok and result.plan.count("unchanged") == 6 and result.written == 0
        assert any("chunks-public" in line and "partner" in line for line in result.access_changes)
        assert result.to_json()["access_repaired"] == result.access_changes
        assert public_reads(client, es_prefix, partner) == (0, False)
        assert pipeline.run(corpus, make_es_store(TIGHT), TIGHT, TIGHT.chunking).access_changes == []
    finally:
        client.close()


def test_a_staff_index_added_to_the_public_alias_by_hand_is_removed_by_the_next_run(tmp_path, make_es_store, es_url, es_prefix):
    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    assert pipeline.run(corpus, make_es_store(settings), settings, settings.chunking).ok
    client = Elasticsearch(es_url)
    try:
        [staff_index] = client.indices.get_alias(index=f"{es_prefix}-chunks_staff_*")
        client.indices.update_aliases(actions=[{"add": {"index": staff_index, "alias": f"{es_prefix}-chunks-public"}}])
        assert client.search(index=f"{es_prefix}-chunks-public", query={"term": {"access": "staff"}})["hits"]["hits"]
        checked = make_es_store(settings).reconcile_access(check=True)  # the form verify uses: reports only
        assert checked == [f"alias {es_prefix}-chunks-public covers {staff_index} ([roles] does not let 'public' read 'staff')"]
        assert client.search(index=f"{es_prefix}-chunks-public", query={"term": {"access": "staff"}})["hits"]["hits"]
        result = pipeline.run(corpus, make_es_store(settings), settings, settings.chunking)
        assert result.ok and result.written == 0
        assert result.access_changes == [f"removed {staff_index} from alias {es_prefix}-chunks-public ([roles] does not let 'public' read 'staff')"]
        assert client.search(index=f"{es_prefix}-chunks-public", query={"term": {"access": "staff"}})["hits"]["hits"] == []
    finally:
        client.close()


def test_an_index_of_someone_else_in_our_alias_is_removed_not_deleted(make_es_store, es_url, es_prefix):
    store = make_es_store()
    store.write_chunks(WARRANTY)
    client = Elasticsearch(es_url)
    foreign = f"{es_prefix}-x-other-team"
    try:
        client.indices.create(index=foreign, mappings={"properties": {"text": {"type": "text"}, "access": {"type": "keyword"}}})
        client.index(index=foreign, document={"text": "warranty from another team", "access": "public"}, refresh=True)
        client.indices.update_aliases(actions=[{"add": {"index": foreign, "alias": f"{es_prefix}-chunks-public"}}])
        # Its shard cannot sort on chunk_id: an error with the shard's reason, never "no hits".
        with pytest.raises(StoreUnavailable, match="shards failed"):
            store.search("warranty", ["public"], None, role="public")
        changes = make_es_store().reconcile_access()
        assert changes == [f"removed {foreign} from alias {es_prefix}-chunks-public ({foreign} is not an index of prefix {es_prefix!r})"]
        assert client.indices.exists(index=foreign)  # not ours: left in place, only out of our alias
        assert sorted(ids(store.search("warranty", ["public"], None, role="public"))) == sorted(c.chunk_id for c in WARRANTY)
    finally:
        client.close()


def test_nested_prefixes_never_touch_each_other(tmp_path, es_url, es_prefix, make_es_store):
    outer, inner = es_prefix, f"{es_prefix}-chunks_eu"  # like `kb` and `kb-chunks_eu`
    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    client = Elasticsearch(es_url)
    try:
        for prefix in (inner, outer):
            assert pipeline.run(corpus, make_es_store(settings, prefix=prefix), settings, settings.chunking).ok
        inner_indices = set(client.indices.get(index=f"{inner}-*"))
        inner_chunks = sorted(make_es_store(settings, prefix=inner).chunk_keys())
        assert len(inner_indices) == 5 and inner_chunks
        for _ in range(2):
            assert pipeline.run(corpus, make_es_store(settings, prefix=outer), settings, settings.chunking, full=True).ok
        assert set(client.indices.get(index=f"{inner}-*")) == inner_indices
        assert sorted(make_es_store(settings, prefix=inner).chunk_keys()) == inner_chunks
        assert client.get(index=f"{inner}-meta", id="meta")["found"]
        outer_store = make_es_store(settings, prefix=outer)
        assert sorted(outer_store.chunk_keys()) == inner_chunks  # same corpus, same IDs, own indices
        assert all(not i.startswith(f"{inner}-") for i in client.indices.get_alias(name=f"{outer}-chunks"))
        assert make_es_store(settings, prefix=inner).reconcile_access() == []
        assert outer_store.reconcile_access() == []
    finally:
        client.close()


@pytest.mark.parametrize("name", ["chunks", "documents", "chunks-public"])
def test_an_index_under_one_of_our_alias_names_is_refused_and_nothing_is_left(tmp_path, es_url, es_prefix, make_es_store, name):
    client = Elasticsearch(es_url)
    try:
        client.indices.create(index=f"{es_prefix}-{name}")
        corpus = make_corpus(tmp_path / "corpus")
        settings = Settings()
        for full in (False, True):
            with pytest.raises(StoreConfigError, match=f"{es_prefix}-{name} already exist as indices") as err:
                pipeline.run(corpus, make_es_store(settings), settings, settings.chunking, full=full)
            assert "--index-prefix" in str(err.value)
            assert set(client.indices.get(index=f"{es_prefix}-*")) == {f"{es_prefix}-{name}"}
    finally:
        client.close()


def test_a_label_index_recreated_by_hand_with_another_mapping_is_refused_before_writing(tmp_path, es_url, es_prefix, make_es_store):
    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    assert pipeline.run(corpus, make_es_store(settings), settings, settings.chunking).ok
    client = Elasticsearch(es_url)
    try:
        [public_index] = client.indices.get_alias(index=f"{es_prefix}-chunks_public_*")
        body = es_store.load_index_body("chunks")
        body["mappings"]["properties"]["text"] = {"type": "keyword"}
        client.indices.delete(index=public_index)
        client.indices.create(index=public_index, mappings=body["mappings"])
        (corpus / "documents" / "folder0" / "doc0.md").unlink()  # a change: the run must write
        with pytest.raises(StoreConfigError, match=r"field text is keyword, ingest expects text.*ingest run --full"):
            pipeline.run(corpus, make_es_store(settings), settings, settings.chunking)
        # --full rebuilds it with the right mapping; the changed build is dropped.
        result = pipeline.run(corpus, make_es_store(settings), settings, settings.chunking, full=True)
        assert result.ok and not client.indices.exists(index=public_index)
        assert pipeline.verify(corpus, make_es_store(settings), settings).ok
    finally:
        client.close()


def test_a_query_of_thousands_of_distinct_words_is_a_usage_error(make_es_store):
    store = make_es_store()
    store.write_chunks(WARRANTY)
    with pytest.raises(QueryTooLarge, match="5000 distinct words"):
        store.search(" ".join(f"w{i}" for i in range(5000)), ["public"], None, role="public")
    assert isinstance(QueryTooLarge("x"), StoreConfigError)  # exit 2 in the CLI


def test_a_taken_over_lock_stops_the_run_before_its_next_write(make_es_store, es_url, es_prefix):
    first, second = make_es_store(), make_es_store()
    client = Elasticsearch(es_url)
    try:
        with first.lock("first-run"):
            first.write_chunks(WARRANTY[:1])
            # Its lease gone (as after failed renewals past expiry) and a second run in:
            client.delete(index=f"{es_prefix}-meta", id="lock", refresh=True)
            with second.lock("second-run"):
                with pytest.raises(StoreLocked, match=f"lost the write lock on prefix '{es_prefix}'.*taken over by second-run"):
                    first.write_chunks(WARRANTY[1:2])
                with pytest.raises(StoreLocked):  # and it never writes again
                    first.put_documents([record_for(WARRANTY)])
                second.write_chunks(STAFF)
        # No lock leaked: the taken-over run released nothing of the other run's, and the other released its own.
        with make_es_store().lock("third-run"):
            pass
    finally:
        client.close()
    assert sorted(k[0] for k in second.chunk_keys()) == sorted([WARRANTY[0].chunk_id, STAFF[0].chunk_id])
    assert second.documents() == []


def test_a_lease_that_ran_out_unrenewed_stops_the_run(make_es_store, es_prefix):
    store = make_es_store(lock_ttl_s=60)
    with pytest.raises(StoreLocked, match="lease ran out"):
        with store.lock("slow-run"):
            store.write_chunks(WARRANTY[:1])
            store._guard.lease_until = time.monotonic() - 1  # as if no renewal had landed for a whole TTL
            store.write_chunks(WARRANTY[1:2])
    assert [k[0] for k in store.chunk_keys()] == [WARRANTY[0].chunk_id]


def test_an_immense_term_is_a_refused_item_with_elasticsearchs_reason(make_es_store):
    store = make_es_store()
    immense = make_chunk("huge", "1", 0, "a normal text", section="s" * 40000)  # `section` is a keyword: one term
    report = store.write_chunks([*WARRANTY, immense])
    assert report.written == 3
    [error] = report.errors
    assert error.id == immense.chunk_id and "immense term" in error.reason
    assert store.document_chunks("huge") == []


def test_a_prefix_too_long_for_index_names_is_refused_before_anything_is_created():
    from ingest.settings import Settings, SettingsError
    from ingest.store.elasticsearch.names import check_names

    check_names("a" * 100, Settings())
    with pytest.raises(SettingsError, match="too long"):
        check_names("a" * 222, Settings())


# --- attack findings: role alias filters, misplaced chunks, missing aliases, orphan builds -----


def _copy_a_staff_chunk_into_the_public_index(client, prefix) -> str:
    [staff_index] = client.indices.get_alias(index=f"{prefix}-chunks_staff_*")
    [public_index] = client.indices.get_alias(index=f"{prefix}-chunks_public_*")
    hit = client.search(index=staff_index, size=1)["hits"]["hits"][0]
    client.index(index=public_index, id=hit["_id"], document=hit["_source"], refresh=True)
    return hit["_id"]


def test_a_staff_chunk_copied_into_the_public_index_is_not_readable_through_the_public_alias_and_verify_says_so(
    tmp_path, make_es_store, es_url, es_prefix
):
    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    assert pipeline.run(corpus, make_es_store(settings), settings, settings.chunking).ok
    client = Elasticsearch(es_url)
    try:
        copied = _copy_a_staff_chunk_into_the_public_index(client, es_prefix)
        public = f"{es_prefix}-chunks-public"
        # The role alias's filter keeps it out, whatever index it sits in.
        assert client.search(index=public, query={"ids": {"values": [copied]}})["hits"]["hits"] == []
        assert client.search(index=public, query={"term": {"access": "staff"}})["hits"]["hits"] == []
        assert client.count(index=f"{es_prefix}-chunks-staff", query={"ids": {"values": [copied]}})["count"] == 2
        result = pipeline.verify(corpus, make_es_store(settings), settings)
        assert not result.ok
        assert any("of another access label" in line and copied in line for line in result.access_layout)
        assert any("stored more than once" in line for line in result.access_layout)
        assert any("of another access label" in line for line in make_es_store(settings).reconcile_access(check=True))
    finally:
        client.close()


def test_a_role_alias_without_its_access_filter_is_reported_and_repaired_by_a_run(tmp_path, make_es_store, es_url, es_prefix):
    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    assert pipeline.run(corpus, make_es_store(settings), settings, settings.chunking).ok
    client = Elasticsearch(es_url)
    public = f"{es_prefix}-chunks-public"
    try:
        [public_index] = client.indices.get_alias(index=f"{es_prefix}-chunks_public_*")
        assert client.indices.get_alias(index=public_index, name=public)[public_index]["aliases"][public] == {
            "filter": {"terms": {"access": ["public"]}}
        }
        # An alias as an older ingest (or someone by hand) made it: no filter.
        client.indices.update_aliases(actions=[{"add": {"index": public_index, "alias": public}}])
        _copy_a_staff_chunk_into_the_public_index(client, es_prefix)
        assert client.search(index=public, query={"term": {"access": "staff"}})["hits"]["hits"]
        checked = make_es_store(settings).reconcile_access(check=True)
        assert f"alias {public} on {public_index} lacks its access filter (labels: public)" in checked
        result = pipeline.run(corpus, make_es_store(settings), settings, settings.chunking)
        assert f"set the access filter of alias {public} on {public_index} (labels: public)" in result.access_changes
        assert client.search(index=public, query={"term": {"access": "staff"}})["hits"]["hits"] == []
        assert not any("filter" in line for line in make_es_store(settings).reconcile_access(check=True))
    finally:
        client.close()


def test_a_search_through_a_deleted_role_alias_is_an_error_never_no_hits(tmp_path, make_es_store, es_url, es_prefix):
    from ingest.store import NoIngestIndex

    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    assert pipeline.run(corpus, make_es_store(settings), settings, settings.chunking).ok
    assert make_es_store(settings).search("document", ["public"], None, role="public")
    client = Elasticsearch(es_url)
    try:
        client.indices.delete_alias(index="_all", name=f"{es_prefix}-chunks-public")
    finally:
        client.close()
    with pytest.raises(NoIngestIndex, match=rf"role alias {es_prefix}-chunks-public does not exist.*next `ingest run` repairs it"):
        make_es_store(settings).search("document", ["public"], None, role="public")
    assert isinstance(NoIngestIndex("x"), StoreUnavailable)  # exit 3
    result = pipeline.run(corpus, make_es_store(settings), settings, settings.chunking)
    assert any(f"alias {es_prefix}-chunks-public" in line for line in result.access_changes)
    assert make_es_store(settings).search("document", ["public"], None, role="public")


def test_a_label_change_that_cannot_leave_a_write_blocked_index_stops_the_run_and_says_it_is_still_readable(
    make_es_store, es_url, es_prefix
):
    from ingest.store.base import StoreError

    store = make_es_store()
    public_copy = make_chunk("moving", "1", 0, "zebracorn opening hours")
    store.write_chunks([public_copy])
    store.refresh()
    client = Elasticsearch(es_url)
    [public_index] = client.indices.get_alias(index=f"{es_prefix}-chunks_public_*")
    client.indices.put_settings(index=public_index, settings={"index.blocks.write": True})
    try:
        staff_copy = make_chunk("moving", "1", 0, "zebracorn opening hours", access="staff")
        assert staff_copy.chunk_id == public_copy.chunk_id
        with pytest.raises(StoreError, match=r"STILL READABLE under access 'public'") as raised:
            make_es_store().write_chunks([staff_copy])
        assert not isinstance(raised.value, StoreConfigError)  # a store fault (exit 3), not a refused item
        # The truth: it is where it was, and the staff index got nothing.
        assert ids(make_es_store().search("zebracorn", ["public"], None, role="public")) == [public_copy.chunk_id]
        assert [c.access for c in make_es_store().iter_chunks()] == ["public"]
    finally:
        client.indices.put_settings(index=public_index, settings={"index.blocks.write": None})
        client.close()
    # Once the block is lifted, the move completes.
    mover = make_es_store()
    assert mover.write_chunks([staff_copy]).errors == []
    assert mover.search("zebracorn", ["public"], None, role="public") == []


def test_indices_a_killed_full_run_left_are_reported_and_deleted_by_the_next_run(tmp_path, make_es_store, es_url, es_prefix):
    import dataclasses

    from ingest.store.elasticsearch.names import new_build

    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    assert pipeline.run(corpus, make_es_store(settings), settings, settings.chunking).ok
    # What a --full killed while filling leaves: its indices, recorded as owned, in no alias.
    store = make_es_store(settings)
    layout = store._layout.read()
    labels, documents = store.build_indices(settings.labels, new_build())
    half_built = sorted([*labels.values(), documents])
    store._layout.record(dataclasses.replace(layout, owned=sorted({*layout.owned, *half_built})))
    for index in half_built:
        store._layout.create_index(index, "documents" if index == documents else "chunks")
    # A prefix nested in ours, with an index named like one of our builds: never ours to delete.
    other = f"{es_prefix}-chunks_eu-chunks_public_{new_build()}"
    client = Elasticsearch(es_url)
    try:
        client.indices.create(index=other)
        checked = make_es_store(settings).reconcile_access(check=True)
        assert sorted(i for i in half_built if any(line.startswith(f"{i} is an index of prefix") for line in checked)) == half_built
        result = pipeline.verify(corpus, make_es_store(settings), settings)
        assert not result.ok and any("killed `ingest run --full`" in line for line in result.access_layout)
        run = pipeline.run(corpus, make_es_store(settings), settings, settings.chunking)
        assert run.ok and any("killed `ingest run --full` left" in w for w in run.warnings)
        assert not any(client.indices.exists(index=i) for i in half_built)
        assert client.indices.exists(index=other)
        assert set(make_es_store(settings)._layout.read().owned) == set(layout.owned)
        assert pipeline.verify(corpus, make_es_store(settings), settings).ok
        assert make_es_store(settings).search("document", ["public"], None, role="public")
    finally:
        client.indices.delete(index=other, ignore_unavailable=True)
        client.close()
