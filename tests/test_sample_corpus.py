"""The sample corpus end to end on the embedded store: it validates, every chunk is
traceable, IDs are stable, retrieval is good enough, and nothing leaks."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from ingest import pipeline
from ingest.chunk import chunk_document
from ingest.corpus import scan_corpus
from ingest.evaluate import evaluate, load_questions
from ingest.settings import load_settings
from ingest.store.sqlite import SQLiteStore

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


@pytest.fixture(scope="module")
def scan():
    return scan_corpus(CORPUS, load_settings(CORPUS))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    store = SQLiteStore(tmp_path_factory.mktemp("sample") / "index.sqlite")
    settings = load_settings(CORPUS)
    result = pipeline.run(CORPUS, store, settings, settings.chunking)
    assert result.ok, result.to_json()["problems"]
    yield store
    store.close()


def test_corpus_is_valid_and_large_enough(scan):
    assert scan.rejected == ()
    assert len(scan.documents) >= 30
    formats = scan.formats
    assert formats["markdown"] >= 12 and formats["html"] >= 6 and formats["pdf"] >= 5 and formats["text"] >= 4
    access = scan.access_counts()
    assert access["staff"] >= 5 and access["partner"] >= 2


def test_every_chunk_is_traceable_and_the_store_agrees_with_the_folder(built):
    result = pipeline.verify(CORPUS, built, load_settings(CORPUS))
    assert result.chunks > 0
    assert result.ok, result.to_json()


def test_same_corpus_chunked_twice_gives_identical_records(scan):
    settings = load_settings(CORPUS).chunking
    again = scan_corpus(CORPUS, load_settings(CORPUS))
    first = [c for d in scan.documents for c in chunk_document(d, settings)]
    second = [c for d in again.documents for c in chunk_document(d, settings)]
    assert first == second


def test_removing_any_one_document_changes_no_other_ids(scan, tmp_path):
    """Run the whole scan again without each file in turn: every other document keeps its IDs."""
    settings = load_settings(CORPUS)
    full = {d.meta.key: [c.chunk_id for c in chunk_document(d, settings.chunking)] for d in scan.documents}
    referenced = {d.meta.superseded_by for d in scan.documents if d.meta.superseded_by}
    for doc in scan.documents:
        if doc.meta.key in referenced:
            continue  # removing it would (rightly) reject the version that points at it
        copy = tmp_path / doc.meta.key
        shutil.copytree(CORPUS, copy)
        (copy / doc.source).unlink()
        rest = scan_corpus(copy, settings)
        ids = {d.meta.key: [c.chunk_id for c in chunk_document(d, settings.chunking)] for d in rest.documents}
        assert doc.meta.key not in ids
        assert ids == {k: v for k, v in full.items() if k != doc.meta.key}
        shutil.rmtree(copy)


def test_bumping_one_version_changes_all_its_ids_and_no_others(scan, tmp_path):
    settings = load_settings(CORPUS)
    target = next(d for d in scan.documents if d.source.endswith(".md") and not d.meta.superseded_by and d.meta.status == "current")
    copy = tmp_path / "c"
    shutil.copytree(CORPUS, copy)
    path = copy / target.source
    text = path.read_text(encoding="utf-8")
    old_line = next(line for line in text.splitlines() if line.startswith("version:"))
    path.write_text(text.replace(old_line, 'version: "999"', 1), encoding="utf-8")
    rest = scan_corpus(copy, settings)
    before = {d.meta.key: {c.chunk_id for c in chunk_document(d, settings.chunking)} for d in scan.documents}
    after = {d.meta.key: {c.chunk_id for c in chunk_document(d, settings.chunking)} for d in rest.documents}
    bumped = f"{target.meta.doc_id}@999"
    assert bumped in after and target.meta.key not in after
    assert after[bumped].isdisjoint(before[target.meta.key])
    assert len(after[bumped]) == len(before[target.meta.key])
    assert {k: v for k, v in after.items() if k != bumped} == {k: v for k, v in before.items() if k != target.meta.key}


def test_two_versions_with_an_identical_section_have_different_ids(scan):
    settings = load_settings(CORPUS).chunking
    by_doc: dict[str, list] = {}
    for d in scan.documents:
        by_doc.setdefault(d.meta.doc_id, []).append(d)
    pairs = [v for v in by_doc.values() if len(v) >= 2]
    assert pairs, "the sample corpus must hold a document in two versions"
    found_identical = False
    for a, b in ((v[0], v[1]) for v in pairs):
        ca, cb = chunk_document(a, settings), chunk_document(b, settings)
        same_text = {c.text for c in ca} & {c.text for c in cb}
        found_identical |= bool(same_text)
        for text in same_text:
            ida = {c.chunk_id for c in ca if c.text == text}
            idb = {c.chunk_id for c in cb if c.text == text}
            assert ida.isdisjoint(idb)
    assert found_identical, "a section word for word the same in both versions"


def test_eval_on_the_sample_questions(built):
    questions = load_questions(CORPUS / "questions.yaml")
    assert len(questions) >= 50
    roles = load_settings(CORPUS).roles
    result = evaluate(
        questions,
        lambda q: built.search(q.question, roles[q.role], q.as_of or date.today(), top=5, role=q.role),
        lambda role: roles[role],
        k=5,
    )
    assert result.leaks == []
    assert result.hit_at_k >= 0.85, (result.hit_at_k, result.missed)
    for category in ("answerable", "table", "exact-code", "version", "staff-only", "partner-only", "contradiction", "no-answer"):
        assert result.by_category[category]["questions"] >= 4


@pytest.fixture(scope="module")
def vocabulary(scan):
    words = set()
    for d in scan.documents:
        words.update(w.lower() for w in d.parsed.text.split() if w.isalpha() and len(w) > 3)
    return sorted(words)


def test_no_question_leaks_to_a_public_role(built):
    for q in load_questions(CORPUS / "questions.yaml"):
        for hit in built.search(q.question, ("public",), q.as_of or date.today(), top=10, role="public"):
            assert hit.chunk.access == "public"


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_queries_never_leak_and_respect_as_of(built, vocabulary, data):
    words = data.draw(st.lists(st.sampled_from(vocabulary), min_size=1, max_size=6))
    day = data.draw(st.dates(min_value=date(2022, 1, 1), max_value=date(2028, 12, 31)))
    for hit in built.search(" ".join(words), ("public",), day, top=20, role="public"):
        c = hit.chunk
        assert c.access == "public"
        assert c.effective_from is None or c.effective_from <= day.isoformat()
        assert c.effective_to is None or c.effective_to >= day.isoformat()
    for hit in built.search(" ".join(words), ("public", "partner"), day, top=20, role="partner"):
        assert hit.chunk.access in ("public", "partner")


def test_a_forbidden_document_the_role_may_read_is_a_miss_not_a_leak(built):
    from ingest.evaluate import Question

    roles = load_settings(CORPUS).roles
    question = Question("q", "warranty period months", "no-answer", role="public", forbidden=("warranty-policy",))
    result = evaluate([question], lambda q: built.search(q.question, roles[q.role], None, top=5, role=q.role), lambda r: roles[r])
    assert result.leaks == [] and result.missed == ["q"]
    staff_doc = Question("s", "internal margin engine", "staff-only", role="public", forbidden=("pricing-margins",))
    leaky = evaluate([staff_doc], lambda q: built.search(q.question, roles["staff"], None, top=5, role="staff"), lambda r: roles[r])
    assert leaky.leaks and all(leak["id"] == "s" for leak in leaky.leaks)
