"""Incremental sync, on both stores (the embedded SQLite store and a real Elasticsearch):
skip what is unchanged, replace what changed, delete what is gone, refuse silent edits,
survive a killed run, and never let two runs interleave.

Every end state is compared with a clean ``--full`` build in a fresh SQLite store: same
chunk IDs, same records, whichever store the incremental runs went to."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest import pipeline
from ingest.parse import PARSER_VERSION
from ingest.settings import ChunkSettings, load_settings
from ingest.store import open_store
from ingest.store.sqlite import SQLiteStore
from tests.corpus_builder import make_corpus, write_doc


class Target:
    """Where a test's runs go: a store URL (and ES index prefix), openable many times."""

    def __init__(self, url: str, prefix: str | None = None):
        self.url, self.prefix = url, prefix

    def open(self, corpus: Path | None = None):
        return open_store(self.url, self.prefix, settings=load_settings(corpus))

    def args(self) -> list[str]:
        return ["--store", self.url] + (["--index-prefix", self.prefix] if self.prefix else [])


@pytest.fixture(params=["sqlite", pytest.param("elasticsearch", marks=pytest.mark.elasticsearch)])
def target(request, tmp_path):
    if request.param == "sqlite":
        return Target(f"sqlite:///{tmp_path / 'index.sqlite'}")
    return Target(request.getfixturevalue("es_url"), request.getfixturevalue("es_prefix"))


def run(corpus: Path, store, **kwargs):
    settings = load_settings(corpus)
    chunking = kwargs.pop("chunking", settings.chunking)
    return pipeline.run(corpus, store, settings, chunking, **kwargs)


def snapshot(store):
    """Everything a reader can see: chunk records and document records (no timestamps)."""
    chunks = sorted((c.to_json() for c in store.iter_chunks()), key=lambda c: c["chunk_id"])
    docs = sorted((r.to_json() for r in store.documents()), key=lambda r: (r["doc_id"], r["version"]))
    return chunks, docs


@pytest.fixture
def corpus(tmp_path):
    return make_corpus(tmp_path / "corpus")


@pytest.fixture
def store(target, corpus):
    s = target.open(corpus)
    yield s
    s.close()


def test_second_run_writes_and_deletes_nothing(corpus, store):
    first = run(corpus, store)
    assert first.ok and first.to_json()["documents"]["indexed"] == 6
    assert first.written == first.total > 0
    second = run(corpus, store).to_json()
    assert second["documents"] == {**second["documents"], "seen": 6, "indexed": 0, "unchanged": 6, "removed": 0, "rejected": 0}
    assert second["chunks"] == {"written": 0, "deleted": 0, "total": first.total}


def test_one_run_reports_exactly_each_kind_of_change(corpus, store, tmp_path):
    run(corpus, store)
    before = {r.key: r for r in store.documents()}
    docs = corpus / "documents"
    # bump: doc-0 gets new text and version 2 (same path)
    write_doc(corpus, "folder0/doc0.md", "doc-0", version="2", salt="revised")
    # delete: doc-1 leaves
    (docs / "folder1/doc1.md").unlink()
    # add: doc-9 arrives
    write_doc(corpus, "folder1/doc9.md", "doc-9")
    # move: doc-2 to another folder, same bytes
    (docs / "moved").mkdir()
    (docs / "folder0/doc2.md").rename(docs / "moved/doc2.md")
    # edit without a version bump: doc-3
    write_doc(corpus, "folder1/doc3.md", "doc-3", access="public", salt="sneaky edit")
    result = run(corpus, store)
    actions = {item.key: item.action for item in result.plan.items}
    assert actions == {
        "doc-0@2": "new", "doc-0@1": "removed", "doc-1@1": "removed", "doc-9@1": "new",
        "doc-2@1": "moved", "doc-3@1": "rejected", "doc-4@1": "unchanged", "doc-5@1": "unchanged",
    }
    assert not result.ok  # the silent edit is a problem: exit 1
    [problem] = result.plan.problems
    assert problem.source == "documents/folder1/doc3.md"
    assert "content changed but version '1' did not" in problem.problems[0]
    after = {r.key: r for r in store.documents()}
    assert after["doc-3@1"] == before["doc-3@1"]  # stored chunks kept
    assert after["doc-2@1"].source == "documents/moved/doc2.md"
    assert after["doc-2@1"].chunk_ids == before["doc-2@1"].chunk_ids  # a move keeps IDs
    assert set(after) == {"doc-0@2", "doc-2@1", "doc-3@1", "doc-4@1", "doc-5@1", "doc-9@1"}
    assert store.document_chunks("doc-1") == []
    hits = store.search("doc-1", ("public", "partner", "staff"), None, top=50)
    assert all(h.chunk.doc_id != "doc-1" for h in hits)
    assert {c.source for c in store.document_chunks("doc-2")} == {"documents/moved/doc2.md"}
    check = pipeline.verify(corpus, store, load_settings(corpus))
    assert check.untraceable == [] and check.missing_in_store == [] and check.stale_in_store == []
    assert check.edited_in_folder == ["doc-3@1"]
    # --accept-edits replaces it deliberately and says so
    accepted = run(corpus, store, accept_edits=True)
    assert accepted.ok and [i.action for i in accepted.plan.items if i.key == "doc-3@1"] == ["changed"]
    assert len(accepted.plan.overrides) == 1
    assert pipeline.verify(corpus, store, load_settings(corpus)).ok


def test_settings_change_rebuilds_and_says_why(corpus, store):
    run(corpus, store)
    result = run(corpus, store, chunking=ChunkSettings("fixed", 25))
    assert {i.action for i in result.plan.items} == {"changed"}
    parser = f"parser:{PARSER_VERSION}"
    assert f"settings changed (structure:200|{parser} → fixed:25|{parser})" in result.plan.items[0].reason
    assert {c.chunker for c in store.iter_chunks()} == {"fixed:25"}


def test_dry_run_plans_and_writes_nothing(corpus, store):
    run(corpus, store)
    state = snapshot(store)
    (corpus / "documents/folder1/doc1.md").unlink()
    write_doc(corpus, "folder1/doc7.md", "doc-7")
    plan = run(corpus, store, dry_run=True)
    assert {i.key: i.action for i in plan.plan.items if i.action != "unchanged"} == {"doc-7@1": "new", "doc-1@1": "removed"}
    assert plan.written > 0 and plan.deleted > 0
    assert snapshot(store) == state


def test_full_rebuild_equals_incremental_state(corpus, store, tmp_path):
    run(corpus, store)
    (corpus / "documents/folder1/doc1.md").unlink()
    run(corpus, store)
    clean = SQLiteStore(tmp_path / "clean.sqlite")
    run(corpus, clean, full=True)
    assert snapshot(store) == snapshot(clean)
    full_again = run(corpus, store, full=True)
    assert full_again.ok and snapshot(store) == snapshot(clean)


def test_same_corpus_in_another_store_gives_identical_records(corpus, store, tmp_path):
    run(corpus, store)
    other = SQLiteStore(tmp_path / "other.sqlite")
    run(corpus, other)
    assert snapshot(store) == snapshot(other)


def test_repair_removes_what_a_killed_run_left(corpus, store):
    from tests.helpers import make_chunk

    run(corpus, store)
    clean = snapshot(store)
    orphan = make_chunk("doc-0", "7", 0, "left over by a crash")
    store.write_chunks([orphan])
    victim = store.documents()[0]
    store.delete_chunks(victim.chunk_ids[:1])  # a record whose chunks are not all there
    # What a killed run records before such writes: the next run repairs exactly these entries.
    pipeline.write_journal(store, [victim.key, f"{orphan.doc_id}@{orphan.version}"])
    check = pipeline.verify(corpus, store, load_settings(corpus))
    assert check.orphan_chunks == [orphan.chunk_id] and check.incomplete_documents == [victim.key]
    result = run(corpus, store)
    # The victim's record is dropped (its version is written again); its remaining chunks, no
    # longer listed by any record, go with the orphan: len(chunk_ids) - 1 + 1 chunks deleted.
    assert result.repaired == {"orphan_chunks": len(victim.chunk_ids), "incomplete_documents": 1}
    assert snapshot(store) == clean


def _cli(*args, env=None):
    return [sys.executable, "-m", "ingest.cli", *args]


def _change_folder(corpus: Path, round_: int) -> None:
    """Real work for every run: bump some versions, drop one file, bring one back."""
    for i in range(0, 24, 3):
        write_doc(corpus, f"folder{i % 2}/doc{i}.md", f"doc-{i}", version=str(round_ + 2), salt=f"round {round_}")
    i = (round_ * 5 + 1) % 24
    gone = corpus / "documents" / f"folder{i % 2}/doc{i}.md"
    if gone.exists() and round_ % 2:
        gone.unlink()
    elif not gone.exists():
        write_doc(corpus, f"folder{i % 2}/doc{i}.md", f"doc-{i}")


def assert_equals_clean_build(corpus: Path, store, tmp_path: Path) -> None:
    clean = SQLiteStore(tmp_path / f"clean-{time.monotonic_ns()}.sqlite")
    run(corpus, clean, full=True)
    assert snapshot(store) == snapshot(clean)
    versions: dict[str, set[str]] = {}
    for c in store.iter_chunks():
        versions.setdefault(c.doc_id, set()).add(c.version)
    assert all(len(v) == 1 for v in versions.values()), versions
    clean.close()


@pytest.mark.parametrize("crash_after", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
def test_sigkill_after_each_kind_of_write_then_a_normal_run_repairs(tmp_path, target, crash_after):
    """Killed after exactly N store writes (chunks, record, stale deletes, removals)."""
    corpus = make_corpus(tmp_path / "corpus", n=24)
    subprocess.run(_cli("run", str(corpus), *target.args(), "--json"), check=True, capture_output=True)
    _change_folder(corpus, 1)
    killed = subprocess.run(
        [sys.executable, "-m", "tests.crash_run", str(crash_after), "run", str(corpus), *target.args(), "--json"],
        capture_output=True, cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "INGEST_WRITE_BATCH_CHUNKS": "1"},
    )
    assert killed.returncode == -signal.SIGKILL
    done = subprocess.run(_cli("run", str(corpus), *target.args(), "--json"), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    store = target.open(corpus)
    assert_equals_clean_build(corpus, store, tmp_path)
    assert pipeline.verify(corpus, store, load_settings(corpus)).ok
    store.close()


def test_sigkill_at_random_moments_then_a_normal_run_repairs(tmp_path, target):
    """Kill a real run from outside at different delays, many times over."""
    corpus = make_corpus(tmp_path / "corpus", n=24)
    subprocess.run(_cli("run", str(corpus), *target.args(), "--json"), check=True, capture_output=True)
    for round_ in range(10):
        _change_folder(corpus, round_ + 2)
        proc = subprocess.Popen(
            _cli("run", str(corpus), *target.args(), "--json"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "INGEST_WRITE_BATCH_CHUNKS": "1"},
        )
        time.sleep(0.15 + 0.08 * round_)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done = subprocess.run(_cli("run", str(corpus), *target.args(), "--json"), capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        store = target.open(corpus)
        assert_equals_clean_build(corpus, store, tmp_path)
        store.close()


def test_two_concurrent_runs_never_interleave(tmp_path, target):
    corpus = make_corpus(tmp_path / "corpus", n=80)
    procs = [subprocess.Popen(_cli("run", str(corpus), *target.args(), "--json"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(), p.stdout.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    # Either the second found the lock (exit 2, nothing written) or ran after the first finished (0).
    assert codes in ([0, 0], [0, 2])
    for code, output in results:
        data = json.loads(output)
        if code == 2:
            assert "being written" in data["error"]
    store = target.open(corpus)
    assert pipeline.verify(corpus, store, load_settings(corpus)).ok
    store.close()


# --- never lose the last good version -------------------------------------------------------

def over_the_chunk_cap(corpus: Path) -> str:
    """Cap chunks per document at 8 (ingest.toml) and return text that gives a document more:
    a version the chunker refuses after the scan accepted it."""
    (corpus / "ingest.toml").write_text("[chunking]\nmax_chunks_per_document = 8\n", encoding="utf-8")
    return "\n" + "\n\n".join(f"## Extra {i}\n\nMore words in part {i}." for i in range(12)) + "\n"


def _searchable(store, doc_id: str) -> set[str]:
    return {h.chunk.version for h in store.search(doc_id.replace("-", " "), ("public", "partner", "staff"), None, top=200) if h.chunk.doc_id == doc_id}


@pytest.mark.parametrize("new_path", ["folder0/doc0.md", "elsewhere/doc0-v2.md"])
def test_a_refused_new_version_keeps_the_old_one_searchable(corpus, store, new_path):
    over_the_chunk_cap(corpus)  # the cap from the start: a changed cap re-checks (rebuilds) every document
    run(corpus, store)
    before = {r.key: r for r in store.documents()}
    if new_path != "folder0/doc0.md":
        (corpus / "documents/folder0/doc0.md").unlink()
    write_doc(corpus, new_path, "doc-0", version="2", extra=over_the_chunk_cap(corpus))
    write_doc(corpus, "folder1/doc1.md", "doc-1", version="2", salt="fine")  # an ordinary bump beside it
    result = run(corpus, store)
    data = result.to_json()
    assert not result.ok
    actions = {i.key: i.action for i in result.plan.items if i.action != "unchanged"}
    assert actions == {"doc-0@2": "rejected", "doc-0@1": "kept", "doc-1@2": "new", "doc-1@1": "removed"}
    assert data["documents"]["indexed"] == 1 and data["documents"]["rejected"] == 1 and data["documents"]["removed"] == 1
    [problem] = result.plan.problems
    assert problem.source == f"documents/{new_path}" and "too many chunks" in problem.problems[0]
    after = {r.key: r for r in store.documents()}
    assert after["doc-0@1"] == before["doc-0@1"] and "doc-0@2" not in after
    assert {c.chunk_id for c in store.document_chunks("doc-0")} == set(before["doc-0@1"].chunk_ids)
    assert _searchable(store, "doc-0") == {"1"}
    # Once the new version is fixed, it replaces the old one.
    write_doc(corpus, new_path, "doc-0", version="2")
    fixed = run(corpus, store)
    assert fixed.ok and {i.key: i.action for i in fixed.plan.items if i.action != "unchanged"} == {"doc-0@2": "new", "doc-0@1": "removed"}
    assert {c.version for c in store.document_chunks("doc-0")} == {"2"}


def test_a_full_rebuild_keeps_the_last_good_version_of_a_refused_document(corpus, store):
    run(corpus, store)
    old = {r.key: r for r in store.documents()}["doc-0@1"]
    write_doc(corpus, "folder0/doc0.md", "doc-0", version="2", extra=over_the_chunk_cap(corpus))
    result = run(corpus, store, full=True)
    assert not result.ok and result.to_json()["documents"]["indexed"] == 5
    assert {i.key: i.action for i in result.plan.items if i.key.startswith("doc-0")} == {"doc-0@2": "rejected", "doc-0@1": "kept"}
    assert {r.key: r for r in store.documents()}["doc-0@1"] == old
    assert {c.chunk_id for c in store.document_chunks("doc-0")} == set(old.chunk_ids)


def test_a_document_whose_new_version_fails_validation_elsewhere_keeps_its_stored_version(corpus, store):
    run(corpus, store)
    (corpus / "documents/folder0/doc0.md").unlink()
    # invalid for a reason that does not touch who may read it or when (a label it does not know
    # would withdraw doc-0@1: tests/test_kept_versions.py)
    write_doc(corpus, "v2/doc0.md", "doc-0", version="2", superseded_by="nowhere@1")
    result = run(corpus, store)
    assert [i.action for i in result.plan.items if i.key == "doc-0@1"] == ["kept"]
    assert "doc-0@1" in {r.key for r in store.documents()}
    # Deleting the document for real (no file claims doc-0 any more) removes it.
    (corpus / "documents/v2/doc0.md").unlink()
    gone = run(corpus, store)
    assert gone.ok and [i.action for i in gone.plan.items if i.key == "doc-0@1"] == ["removed"]


@pytest.mark.elasticsearch
def test_a_version_elasticsearch_refuses_keeps_the_old_one_and_counts_as_rejected(tmp_path, es_url, es_prefix):
    """A store-level refusal (the strict mapping refuses a field on one chunk of the new
    version): nothing of it is written, the stored version stays searchable. (The same in
    --full is covered by the chunker's refusal above: a full rebuild's fresh store is a
    plain ElasticsearchStore, without this test's hook.)"""
    full = False
    from ingest.store.elasticsearch import ElasticsearchStore

    class RefusesVersion2(ElasticsearchStore):
        def chunk_source(self, chunk):
            source = super().chunk_source(chunk)
            if chunk.doc_id == "doc-0" and chunk.version == "2" and chunk.position == 1:
                source["injected"] = "not in the mapping"
            return source

    corpus = make_corpus(tmp_path / "corpus")
    settings = load_settings(corpus)
    store = RefusesVersion2(es_url, prefix=es_prefix, settings=settings)
    try:
        assert run(corpus, store).ok
        old = {r.key: r for r in store.documents()}["doc-0@1"]
        write_doc(corpus, "folder0/doc0.md", "doc-0", version="2", salt="new wording")
        result = run(corpus, store, full=full)
        data = result.to_json()
        assert not result.ok
        assert {i.key: i.action for i in result.plan.items if i.key.startswith("doc-0")} == {"doc-0@2": "rejected", "doc-0@1": "kept"}
        assert data["documents"]["rejected"] == 1 and data["documents"]["indexed"] == (5 if full else 0)
        [problem] = data["problems"]
        assert problem["source"] == "documents/folder0/doc0.md"
        assert "refused by the store" in problem["problems"][0] and "strict_dynamic_mapping_exception" in problem["problems"][0]
        assert {r.key: r for r in store.documents()}["doc-0@1"] == old and "doc-0@2" not in {r.key for r in store.documents()}
        assert {c.chunk_id for c in store.document_chunks("doc-0")} == set(old.chunk_ids)
        assert _searchable(store, "doc-0") == {"1"}
    finally:
        store.close()


def test_verify_fails_when_the_store_says_other_metadata_than_the_folder(corpus, store):
    run(corpus, store)
    assert pipeline.verify(corpus, store, load_settings(corpus)).metadata_mismatch == []
    # The inventory moves doc-0 from public to staff and retitles it; the store still says public.
    (corpus / "inventory.yaml").write_text("folder0/doc0.md:\n  access: staff\n", encoding="utf-8")
    write_doc(corpus, "folder0/doc0.md", "doc-0").write_text(
        (corpus / "documents/folder0/doc0.md").read_text(encoding="utf-8").replace("access: public\n", ""), encoding="utf-8"
    )
    check = pipeline.verify(corpus, store, load_settings(corpus))
    assert not check.ok
    assert check.metadata_mismatch == ["doc-0@1: access (store 'public', folder 'staff')"]
    assert check.to_json()["metadata_mismatch"] == check.metadata_mismatch
    # A run with --accept-edits (the bytes changed: the access line left the file) brings the store in line.
    assert run(corpus, store, accept_edits=True).ok
    assert pipeline.verify(corpus, store, load_settings(corpus)).ok


def test_write_batch_size_is_an_argument_and_a_bad_environment_value_is_a_usage_error(corpus, tmp_path):
    from ingest.settings import SettingsError

    store = SQLiteStore(tmp_path / "batch.sqlite")
    assert run(corpus, store, write_batch_chunks=1).ok
    with pytest.raises(SettingsError, match="at least 1|≥ 1"):
        run(corpus, store, write_batch_chunks=0)
    store.close()
    from ingest.config import load

    assert load(environ={}).write_batch_chunks is None  # run() then uses DEFAULT_WRITE_BATCH_CHUNKS
    assert load(environ={"INGEST_WRITE_BATCH_CHUNKS": "7"}).write_batch_chunks == 7
    done = subprocess.run(
        _cli("run", str(corpus), "--store", f"sqlite:///{tmp_path / 'cli.sqlite'}", "--json"), capture_output=True, text=True,
        env={**os.environ, "INGEST_WRITE_BATCH_CHUNKS": "abc"},
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "INGEST_WRITE_BATCH_CHUNKS='abc' is not a whole number" in json.loads(done.stdout)["error"]


def test_no_crash_hook_in_the_product():
    source = Path(pipeline.__file__).read_text(encoding="utf-8")
    assert "INGEST_CRASH_AFTER_WRITES" not in source and "os.kill" not in source


def test_the_cli_applies_the_chunk_limits_of_ingest_toml(corpus, tmp_path):
    write_doc(corpus, "folder0/doc0.md", "doc-0", extra=over_the_chunk_cap(corpus))
    done = subprocess.run(
        _cli("run", str(corpus), "--store", f"sqlite:///{tmp_path / 'cli.sqlite'}", "--size", "50", "--json"),
        capture_output=True, text=True,
    )
    data = json.loads(done.stdout)
    assert done.returncode == 1 and data["documents"]["rejected"] == 1 and data["documents"]["indexed"] == 5
    assert "over the limit of 8 per document" in data["problems"][0]["problems"][0]


def test_access_tightened_in_an_edited_file_without_a_version_bump_withdraws_the_stored_version(corpus, target):
    """The edit is refused (content changed, version did not), but the stored chunks must not stay
    readable by the public while the folder says staff (found by an outside pass)."""
    store = target.open(corpus)
    try:
        assert run(corpus, store).ok
        public_before = {h.chunk.doc_id for h in store.search("section", ["public"], None, role="public", top=50)}
        assert "doc-0" in public_before
        path = corpus / "documents/folder0/doc0.md"
        edited = path.read_text(encoding="utf-8").replace("access: public", "access: staff")
        path.write_text(edited.replace(" covers ", " includes "), encoding="utf-8")  # and the text changes
        result = run(corpus, store)
        data = result.to_json()
        assert not result.ok and data["documents"]["rejected"] == 1 and data["documents"]["removed"] == 1
        assert "withdrawn" in " ".join(data["problems"][0]["problems"])
        hits = store.search("section", ["public"], None, role="public", top=50)
        assert "doc-0" not in {h.chunk.doc_id for h in hits}
        assert "doc-0@1" not in {r.key for r in store.documents()}
    finally:
        store.close()


def test_a_rejected_old_version_does_not_keep_a_replaced_version_readable(tmp_path, target):
    """v1 (superseded by v2) and v2 public are stored; v2's file becomes v3 with access staff while
    v1's file turns invalid (superseded_by names a version no longer in the folder). v3 replaces
    v2: public must no longer read v2 (an outside pass found it kept, also after --full)."""
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pol-v1.md", "pol", version="1", effective_from="2024-01-01", effective_to="2025-06-30",
              status="superseded", superseded_by="pol@2")
    v2 = write_doc(corpus, "pol-v2.md", "pol", version="2", salt="zebra", effective_from="2025-07-01")
    for full in (False, True):
        store = target.open(corpus)
        try:
            assert run(corpus, store).ok
            v2.write_text(v2.read_text(encoding="utf-8").replace('version: "2"', 'version: "3"')
                          .replace("access: public", "access: staff"), encoding="utf-8")
            result = run(corpus, store, full=full)
            assert not result.ok  # v1 is rejected (superseded_by pol@2 names no document)
            keys = {r.key for r in store.documents()}
            assert "pol@3" in keys and "pol@2" not in keys, (full, keys)
            hits = store.search("zebra", ["public"], None, role="public", top=20)
            assert not [h for h in hits if h.chunk.doc_id == "pol"], (full, hits)
        finally:
            store.close()
        # start the second round (--full) from the original folder and an empty store
        v2.write_text(v2.read_text(encoding="utf-8").replace('version: "3"', 'version: "2"')
                      .replace("access: staff", "access: public"), encoding="utf-8")
        target = type(target)(target.url.replace("index.sqlite", "index-full.sqlite"), (target.prefix or "") + "-full" if target.prefix else None)


def test_an_edit_of_the_metadata_alone_is_a_metadata_change_not_a_refused_edit(corpus, target):
    """Retiring a version by editing its front matter (status, superseded_by, effective_to) or
    narrowing its access there changes the file's bytes but not its text: the stored version is
    rewritten with the new metadata, never refused or withdrawn (new-user pass: a one-run outage)."""
    store = target.open(corpus)
    try:
        assert run(corpus, store).ok
        path = corpus / "documents/folder0/doc0.md"
        path.write_text(path.read_text(encoding="utf-8").replace("access: public", "access: staff"), encoding="utf-8")
        result = run(corpus, store)
        assert result.ok, result.to_json()
        (item,) = [i for i in result.plan.items if i.key == "doc-0@1"]
        assert item.action == "changed" and "metadata edited, its text unchanged" in item.reason
        assert "doc-0" not in {h.chunk.doc_id for h in store.search("section", ["public"], None, role="public", top=50)}
        staff = store.search("section", ["public", "partner", "staff"], None, role="staff", top=50)
        assert "doc-0" in {h.chunk.doc_id for h in staff}
    finally:
        store.close()
