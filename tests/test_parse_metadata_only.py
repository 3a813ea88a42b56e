"""The sync's fast path reads only a stored file's metadata: it must be exactly what the
full parse finds, for every file of the sample corpus and the test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.model import UnreadableFile
from ingest.parse import SUFFIXES, parse_bytes, read_metadata

ROOT = Path(__file__).resolve().parents[1]


def _readable(path: Path) -> bool:
    """Unreadable files are never stored, so never on the fast path."""
    try:
        parse_bytes(path.read_bytes(), path.name)
    except UnreadableFile:
        return False
    return True


FILES = sorted(
    p for base in (ROOT / "corpus", ROOT / "tests" / "fixtures") for p in base.rglob("*")
    if p.is_file() and p.suffix.lower() in SUFFIXES and _readable(p)
)


def test_there_are_files_of_every_format():
    assert {p.suffix.lower() for p in FILES} >= {".md", ".html", ".txt", ".pdf"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_metadata_alone_equals_the_full_parse(path):
    data = path.read_bytes()
    assert read_metadata(data, path.name) == dict(parse_bytes(data, path.name).metadata)


from hypothesis import given, settings as hsettings, strategies as st  # noqa: E402

names = st.sampled_from(["doc_id", "version", "title", "access", "tags", "Access", " effective_from ", "x"])
values = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)


@hsettings(max_examples=200, deadline=None)
@given(
    metas=st.lists(st.tuples(names, values), max_size=6),
    title=st.one_of(st.none(), values),
    meta_in_body=st.booleans(),
)
def test_html_metadata_alone_equals_the_full_parse_for_any_meta_tags(metas, title, meta_in_body):
    from html import escape

    tags = "".join(f'<meta name="{escape(n)}" content="{escape(v)}">' for n, v in metas)
    head = (f"<title>{escape(title)}</title>" if title is not None else "") + ("" if meta_in_body else tags)
    body = "<h1>Heading</h1><p>Some text.</p>" + (tags if meta_in_body else "")
    data = f"<!doctype html><html><head>{head}</head><body>{body}</body></html>".encode()
    assert read_metadata(data, "x.html") == dict(parse_bytes(data, "x.html").metadata)
