"""The quick check for a ``<meta>`` that writes ``name`` or ``content`` twice (which sends the page to a
full HTML tokenizer read) never misses one that tokenizer finds: over generated tags, every repeat the
tokenizer reports, the check reports too; and the common pages (``http-equiv="Content-Type"`` beside
``content``) skip the full read."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parse.html_meta import _may_repeat_attributes, _MetaTags

FRAGMENTS = [
    "name", "content", "NAME", "Content", "=", '"x"', "'y'", '"', "'", " ", "\t", "\n", "\x0c", "/", "x",
    "http-equiv", "Content-Type", "data-name", "contents", "-", ">", "<meta ",
]  # fmt: skip


def tokenizer_repeats(page: str) -> bool:
    reader = _MetaTags()
    reader.feed(page)
    reader.close()
    return any(
        sum(key == attribute for key, _ in attrs) > 1 for attrs in reader.found for attribute in ("name", "content")
    )


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=14))
def test_every_repeat_the_tokenizer_reads_is_caught_by_the_quick_check(parts):
    page = "<html><head><meta " + "".join(parts) + "></head><body>x</body></html>"
    if tokenizer_repeats(page):
        assert _may_repeat_attributes(page.encode())


def test_a_content_type_pragma_beside_content_needs_no_full_read():
    page = b'<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" /><meta name="generator" content="DocBook" />'
    assert not _may_repeat_attributes(page)
    assert _may_repeat_attributes(b'<meta name="access" content="public" content="staff">')
