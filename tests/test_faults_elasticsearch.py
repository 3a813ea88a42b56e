"""Faults between ingest and a real Elasticsearch (tests/faultproxy.py) and blocks set on the
indices: for each, the run's outcome (the exception the CLI maps to its exit code, and its
message), and that the next run converges to what a clean --full build gives (verify clean,
same chunk IDs). Bounded: short timeouts and backoffs, a few seconds per scenario."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from ingest import pipeline
from ingest.settings import Settings
from ingest.store.base import StoreError, StoreLocked, StoreUnavailable
from ingest.store.elasticsearch import ElasticsearchStore
from ingest.store.sqlite import SQLiteStore
from tests.corpus_builder import make_corpus, write_doc
from tests.faultproxy import FaultProxy

pytestmark = pytest.mark.elasticsearch

SETTINGS = Settings()
EXIT_CODE = {StoreLocked: 2, StoreUnavailable: 3}  # as ingest.cli.handled maps them
FAST = {"max_retries": 2, "initial_backoff": 0.05, "timeout": 3.0}


@pytest.fixture
def proxy(es_url):
    with FaultProxy(es_url) as p:
        yield p


@pytest.fixture
def corpus(tmp_path, es_url, es_prefix) -> Path:
    """12 documents stored at version 1; then 6 of them move to version 2 in the folder."""
    root = make_corpus(tmp_path / "corpus", n=12)
    store = ElasticsearchStore(es_url, prefix=es_prefix, settings=SETTINGS)
    try:
        assert pipeline.run(root, store, SETTINGS, SETTINGS.chunking).ok
    finally:
        store.close()
    for i in range(0, 12, 2):
        access = ("public", "partner", "staff")[i % 3]
        write_doc(root, f"folder{i % 2}/doc{i}.md", f"doc-{i}", version="2", access=access, salt="revised")
    return root


def clean_ids(corpus: Path, tmp_path: Path) -> list[str]:
    """The chunk IDs of a clean full build of the folder (same in both stores)."""
    store = SQLiteStore(tmp_path / "clean.sqlite")
    try:
        assert pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking, full=True).ok
        return sorted(k[0] for k in store.chunk_keys())
    finally:
        store.close()


def faulty_run(url: str, prefix: str, corpus: Path, **kwargs) -> BaseException | None:
    store = ElasticsearchStore(url, prefix=prefix, settings=SETTINGS, **{**FAST, **kwargs})
    try:
        result = pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking)
        return None if result.ok else AssertionError(result.to_json()["errors"])
    except StoreError as exc:
        return exc
    finally:
        try:
            store.close()
        except StoreError:
            pass


def assert_converges(es_url: str, prefix: str, corpus: Path, tmp_path: Path) -> None:
    store = ElasticsearchStore(es_url, prefix=prefix, settings=SETTINGS)
    try:
        assert pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking).ok
        assert pipeline.verify(corpus, store, SETTINGS).ok
        assert sorted(k[0] for k in store.chunk_keys()) == clean_ids(corpus, tmp_path)
    finally:
        store.close()


def test_one_connection_reset_mid_bulk_is_retried_and_the_run_succeeds(proxy, corpus, es_url, es_prefix, tmp_path):
    proxy.add(r"/_bulk", "reset", times=1)  # Elasticsearch applied it; the answer is lost
    assert faulty_run(proxy.url, es_prefix, corpus) is None
    assert any(re.search(r"/_bulk\S* -> reset", line) for line in proxy.log)  # the path may carry filter_path
    assert_converges(es_url, es_prefix, corpus, tmp_path)


@pytest.mark.parametrize(
    ("action", "status", "message"),
    [
        ("reset", 503, "cannot connect"),  # every bulk reset after Elasticsearch applied it
        ("truncate", 503, "cannot connect"),  # every bulk answer cut in half
        ("status", 429, "overloaded or unavailable"),  # a 429 storm
        ("status", 503, "overloaded or unavailable"),  # a 503 storm
    ],
)
def test_persistent_bulk_faults_stop_the_run_with_exit_3_and_the_next_run_converges(
    proxy, corpus, es_url, es_prefix, tmp_path, action, status, message
):
    proxy.add(r"/_bulk", action, status=status)
    exc = faulty_run(proxy.url, es_prefix, corpus)
    assert isinstance(exc, StoreUnavailable) and EXIT_CODE[StoreUnavailable] == 3
    assert message in str(exc) and proxy.url in str(exc)
    proxy.clear()
    # The lock was released (or the run would have to wait for its lease).
    with ElasticsearchStore(es_url, prefix=es_prefix, settings=SETTINGS).lock("after-fault"):
        pass
    assert_converges(es_url, es_prefix, corpus, tmp_path)


def test_a_stalled_cluster_is_given_up_within_the_timeout(proxy, corpus, es_url, es_prefix, tmp_path):
    proxy.add(r"/_bulk", "stall")
    started = time.monotonic()
    exc = faulty_run(proxy.url, es_prefix, corpus, timeout=2.0)
    elapsed = time.monotonic() - started
    assert isinstance(exc, StoreUnavailable) and "no answer within 2 s" in str(exc), exc
    assert elapsed < 60  # the bound a user relies on (not a speed measurement)
    proxy.clear()
    assert_converges(es_url, es_prefix, corpus, tmp_path)


def test_a_503_on_the_lock_time_refresh_does_not_leak_the_lock(proxy, corpus, es_url, es_prefix, tmp_path):
    proxy.add(r"POST /[^ ]*/_refresh", "status", status=503)
    exc = faulty_run(proxy.url, es_prefix, corpus)
    assert isinstance(exc, StoreUnavailable) and "503" in str(exc)
    proxy.clear()
    with ElasticsearchStore(es_url, prefix=es_prefix, settings=SETTINGS).lock("next-run"):  # not held
        pass
    assert_converges(es_url, es_prefix, corpus, tmp_path)


def test_a_failed_lock_release_after_good_writes_is_a_warning_with_the_counts(proxy, corpus, es_url, es_prefix, tmp_path):
    proxy.add(r"DELETE /[^ ]*-meta/_doc/lock", "status", status=503)
    store = ElasticsearchStore(proxy.url, prefix=es_prefix, settings=SETTINGS, lock_ttl_s=2.0, **FAST)
    try:
        result = pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking)
    finally:
        store.close()
    assert result.ok and result.plan.count("new") == 6 and result.written > 0
    [warning] = result.to_json()["warnings"]
    assert "could not release the write lock" in warning and "expires by itself at" in warning
    proxy.clear()
    with pytest.raises(StoreLocked):  # as the warning says: still held until its lease runs out
        with ElasticsearchStore(es_url, prefix=es_prefix, settings=SETTINGS).lock("too-early"):
            pass
    time.sleep(2.1)
    assert_converges(es_url, es_prefix, corpus, tmp_path)


@pytest.mark.parametrize("block", ["index.blocks.write", "index.blocks.read_only_allow_delete"])
def test_a_write_block_stops_the_run_and_the_next_run_converges_once_lifted(corpus, es_url, es_prefix, tmp_path, block):
    client = Elasticsearch(es_url)
    try:
        indices = ",".join(client.indices.get_alias(name=f"{es_prefix}-chunks"))
        client.indices.put_settings(index=indices, settings={block: True})
        exc = faulty_run(es_url, es_prefix, corpus)
        assert exc is not None  # never a silent success
        assert "cluster_block_exception" in str(exc), exc
        client.indices.put_settings(index=indices, settings={block: None})
    finally:
        client.close()
    assert_converges(es_url, es_prefix, corpus, tmp_path)


def test_failed_lock_renewals_lose_the_lock_loudly_while_a_second_run_waits(proxy, tmp_path, es_url, es_prefix, monkeypatch):
    """Run A renews through a proxy that refuses every renewal; its lease (3 s) runs out, run B
    (another folder, waiting) takes the lock; A stops before its next write, B's result stands."""
    folder_a = make_corpus(tmp_path / "a", n=12)
    folder_b = tmp_path / "b"
    for i in range(3):
        write_doc(folder_b, f"doc{i}.md", f"other-{i}")
    proxy.add(r"PUT /[^ ]*-meta/_doc/lock", "status", status=503)  # renewals (the create is /_create/)
    slow_a = ElasticsearchStore(proxy.url, prefix=es_prefix, settings=SETTINGS, lock_ttl_s=3.0, **FAST)
    outcome: dict[str, object] = {}
    a_started = threading.Event()

    def run_a() -> None:
        def slow(done: int, total: int) -> None:
            a_started.set()
            time.sleep(0.5)  # a long run

        try:
            outcome["a"] = pipeline.run(
                folder_a, slow_a, SETTINGS, SETTINGS.chunking, progress=slow, write_batch_chunks=4
            )
        except StoreError as exc:
            outcome["a"] = exc

    thread = threading.Thread(target=run_a)
    thread.start()
    # B starts once A writes (or already stopped: on a loaded machine its lease may run out first).
    for _ in range(600):
        if a_started.is_set() or not thread.is_alive():
            break
        time.sleep(0.1)
    store_b = ElasticsearchStore(es_url, prefix=es_prefix, settings=SETTINGS)
    try:
        result_b = pipeline.run(folder_b, store_b, SETTINGS, SETTINGS.chunking, lock_wait_s=30, allow_empty=True)
        thread.join(60)
        a = outcome["a"]
        assert isinstance(a, StoreLocked) and EXIT_CODE[StoreLocked] == 2, a
        assert f"lost the write lock on prefix {es_prefix!r}" in str(a) and "could not be renewed" in str(a)
        assert result_b.ok
        assert pipeline.verify(folder_b, store_b, SETTINGS).ok  # nothing of A's was written after B took over
    finally:
        store_b.close()
        slow_a.close()


def test_a_500_on_one_bulk_request_is_reported_per_item_never_a_silent_success(proxy, es_url, es_prefix):
    from tests.helpers import make_chunk

    chunks = [make_chunk("five-hundred", "1", p, f"words {p}") for p in range(3)]
    proxy.add(r"/_bulk", "status", times=1, status=500)
    store = ElasticsearchStore(proxy.url, prefix=es_prefix, settings=SETTINGS, **FAST)
    try:
        report = store.write_chunks(chunks)
        assert report.written == 0
        assert sorted(e.id for e in report.errors) == sorted(c.chunk_id for c in chunks)
        assert all("500" in e.reason for e in report.errors)
        assert store.write_chunks(chunks).written == 3  # the next attempt lands
    finally:
        store.close()


def test_a_full_rebuild_whose_alias_switch_answer_is_lost_leaves_a_live_build(proxy, corpus, es_url, es_prefix, tmp_path):
    """The switch reaches Elasticsearch but every answer to it is lost: the run fails (exit 3), yet
    readers keep a complete build behind the aliases (an outside pass found every alias gone)."""
    proxy.add(r"POST /_aliases", "reset")
    store = ElasticsearchStore(proxy.url, prefix=es_prefix, settings=SETTINGS, **FAST)
    try:
        with pytest.raises(StoreError):
            pipeline.run(corpus, store, SETTINGS, SETTINGS.chunking, full=True)
    finally:
        with contextlib.suppress(StoreError):
            store.close()
    reader = ElasticsearchStore(es_url, prefix=es_prefix, settings=SETTINGS)
    try:
        assert reader.counts()["totals"]["chunks"] > 0  # the aliases still lead to a whole build
        assert reader.search("section", ["public"], None, role="public")
    finally:
        reader.close()
    assert_converges(es_url, es_prefix, corpus, tmp_path)
