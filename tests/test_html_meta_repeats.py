"""The quick check for a ``<meta>`` that writes ``name`` or ``content`` twice (which sends the page to a
full HTML tokenizer read) never misses one that tokenizer finds: over generated tags, every repeat the
tokenizer reports, the check reports too; and the common pages (``http-equiv="Content-Type"`` beside
``content``) skip the full read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.model import UnreadableFile
from ingest.parse.html import parse_html
from ingest.parse.html_meta import _may_repeat_attributes, _MetaTags, _refuse_repeated_attributes

FRAGMENTS = [
    "name", "content", "NAME", "Content", "=", '"x"', "'y'", '"', "'", " ", "\t", "\n", "\x0c", "/", "x",
    "http-equiv", "Content-Type", "data-name", "contents", "-", ">", "<meta ", "a'b", "it's", "'>'", '">"',
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
    page = b'<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" /><meta name="g" content="DocBook" />'
    assert not _may_repeat_attributes(page)
    assert _may_repeat_attributes(b'<meta name="access" content="public" content="staff">')


@pytest.mark.parametrize(
    "tag",
    [
        """<meta a'b c="x'>y" name="access" content="public" content="staff">""",  # a quote in a name
        """<meta title=it's data-x='>' name="access" content="public" content="staff">""",  # in an unquoted value
    ],
)
def test_a_quote_that_opens_no_value_does_not_end_the_quick_check_early(tag):
    assert _may_repeat_attributes(tag.encode())


def test_a_page_html_parser_gives_up_on_is_read_tag_by_tag():
    """html.parser stops at a marked section it does not know ("<![foo>", a bogus comment to a browser)."""
    page = '<html><head><![foo><meta name="access" content="public" content="staff"></head></html>'
    with pytest.raises(UnreadableFile, match="a <meta> gives content 2 times"):
        _refuse_repeated_attributes(page.encode())
    _refuse_repeated_attributes(b'<html><head><![foo><meta name="description" content="a name b"></head></html>')


REPEAT = '<meta name="access" content="public" content="staff">'


@pytest.mark.parametrize(
    "wrapped",
    [
        f"<!-->{REPEAT}<!-- x -->",  # an empty comment: closed at once in HTML
        f"<!-- a --!>{REPEAT}<!-- x -->",  # "--!>" closes a comment in HTML
        f"<![CDATA[>{REPEAT}]]>",  # a bogus comment up to the first ">" in HTML
        f"<![if x>{REPEAT}<![endif]>",
        f"<script>var a=1;</script x>{REPEAT}<script></script>",  # an end tag with attributes ends the script
    ],
)
def test_a_meta_lxml_reads_and_html_parser_does_not_is_checked_too(tmp_path, wrapped):
    """html.parser misses these tags (it does not follow HTML's rules there); lxml and browsers read them."""
    head = f'<meta charset="utf-8"><title>Policy</title>{wrapped}'
    page = f"<!DOCTYPE html><html><head>{head}</head><body><p>x</p></body></html>"
    with pytest.raises(UnreadableFile, match="a <meta> gives content 2 times"):
        parse_html(page.encode())


def test_a_repeat_inside_a_real_comment_stays_no_problem_beside_its_twin():
    page = f'<html><head><meta name="access" content="public"></head><body><!-- {REPEAT} --><p>x</p></body></html>'
    assert parse_html(page.encode()).metadata["access"] == "public"
