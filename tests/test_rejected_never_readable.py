"""A document that the checks between documents (or the plan) reject is never readable, not even
for the length of the run that rejects it: its chunks are not written before those checks.

A reader polls the live store while a run goes on; here it looks at every moment the run writes
chunks (right after each write, having refreshed Elasticsearch as its periodic refresh would), so
the window is hit every time rather than by chance. The store is the real one throughout: the run's
own ``write_chunks`` is only followed by the reader's look.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ingest
from ingest import pipeline
from ingest.settings import load_settings
from ingest.store import open_store

SECRET = "zebraquartz"  # one word only the rejected document holds


@pytest.fixture(params=["sqlite", pytest.param("elasticsearch", marks=pytest.mark.elasticsearch)])
def target(request, tmp_path) -> tuple[str, str | None]:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'index.sqlite'}", None
    return request.getfixturevalue("es_url"), request.getfixturevalue("es_prefix")


def _md(corpus: Path, name: str, front: str, text: str) -> None:
    path = corpus / "documents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n\n# Heading\n\n{text}\n", encoding="utf-8")


def _fillers(corpus: Path, n: int = 12) -> None:
    for i in range(n):
        _md(corpus, f"zz{i:02d}.md", f"doc_id: filler-{i}\nversion: 1\ntitle: F{i}\naccess: public", "lorem ipsum " * 40)


def _run(corpus: Path, url: str, prefix: str | None) -> pipeline.RunResult:
    settings = load_settings(corpus)
    store = open_store(url, prefix, settings=settings)
    try:
        return pipeline.run(corpus, store, settings, settings.chunking, write_batch_chunks=1)
    finally:
        store.close()


def _watched_run(corpus: Path, url: str, prefix: str | None, role: str, as_of: str | None) -> tuple[list, object]:
    """Run on ``corpus``; after every chunk write of the run, what ``role`` finds of SECRET."""
    settings = load_settings(corpus)
    seen: list = []
    store = open_store(url, prefix, settings=settings)
    refresh = None
    if prefix is not None:  # what Elasticsearch's periodic refresh does within a second
        from elasticsearch import Elasticsearch

        client = Elasticsearch(url)
        refresh = lambda: client.indices.refresh(index=f"{prefix}-*")  # noqa: E731
    with ingest.open_store(url, prefix, create=False) as reader:
        write = store.write_chunks

        def write_then_look(chunks):
            report = write(chunks)
            if refresh is not None:
                refresh()
            seen.extend(reader.search(SECRET, role=role, as_of=as_of, top=10))
            return report

        store.write_chunks = write_then_look  # type: ignore[method-assign]
        try:
            result = pipeline.run(corpus, store, settings, settings.chunking, write_batch_chunks=1)
        finally:
            store.close()
    return seen, result


def test_a_second_version_in_force_beside_the_first_is_never_readable(tmp_path, target):
    url, prefix = target
    corpus = tmp_path / "c"
    _md(corpus, "memo1.md", 'doc_id: memo\nversion: "1"\ntitle: Memo\naccess: public', "the memo, first version")
    _run(corpus, url, prefix)
    # no dates: in force every day, as version 1 is: both are rejected, version 1 is kept
    _md(corpus, "aaa-memo2.md", 'doc_id: memo\nversion: "2"\ntitle: Memo\naccess: public', f"the memo {SECRET}")
    _fillers(corpus)
    seen, result = _watched_run(corpus, url, prefix, "public", "today")
    assert any("both in force" in line for p in result.plan.problems for line in p.problems)
    assert seen == [], [(h.chunk.doc_id, h.chunk.version) for h in seen]


def test_a_public_copy_of_a_staff_document_is_never_readable_by_public(tmp_path, target):
    url, prefix = target
    corpus = tmp_path / "c"
    _md(corpus, "hello.md", "doc_id: hello\nversion: 1\ntitle: Hello\naccess: public", "hello")
    _run(corpus, url, prefix)
    _md(corpus, "aaa-salaries.md", "doc_id: salaries\nversion: 1\ntitle: S\naccess: staff", f"bands {SECRET}")
    _md(corpus, "aab-copy.md", "doc_id: salaries\nversion: 1\ntitle: S\naccess: public", f"bands {SECRET}")
    _fillers(corpus)
    seen, result = _watched_run(corpus, url, prefix, "public", None)
    assert any("also defined by" in line for p in result.plan.problems for line in p.problems)
    assert seen == [], [(h.chunk.doc_id, h.chunk.access) for h in seen]


def test_a_label_the_default_would_widen_is_never_readable_under_it(tmp_path, target):
    url, prefix = target
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "ingest.toml").write_text('[access]\nlabels = ["public", "partner", "staff"]\ndefault = "partner"\n')
    (corpus / "inventory.yaml").write_text("aaa-salaries.md: {access: staff}\n")
    _md(corpus, "aaa-salaries.md", "doc_id: salaries\nversion: 1\ntitle: Salaries", "bands, first version")
    _run(corpus, url, prefix)
    (corpus / "inventory.yaml").unlink()  # version 2 names no access: the default would make it partner
    _md(corpus, "aaa-salaries.md", "doc_id: salaries\nversion: 2\ntitle: Salaries", f"bands {SECRET}")
    _fillers(corpus)
    seen, result = _watched_run(corpus, url, prefix, "partner", None)
    assert any("would replace 'staff'" in line for p in result.plan.problems for line in p.problems)
    assert seen == [], [(h.chunk.doc_id, h.chunk.access) for h in seen]
