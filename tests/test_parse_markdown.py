"""Markdown parsing: exact text, block offsets, kinds, heading paths, front matter."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse import parse_bytes, parse_file

FIXTURES = Path(__file__).parent / "fixtures" / "parse"


def outline(doc: ParsedDocument) -> list[tuple[str, str, int, tuple[str, ...]]]:
    for block in doc.blocks:
        assert block.pages == ()
    return [(b.kind, doc.text[b.start : b.end], b.level, b.heading_path) for b in doc.blocks]


def md(source: str) -> ParsedDocument:
    return parse_bytes(source.encode("utf-8"), "doc.md")


def test_policy_fixture_text_blocks_and_front_matter() -> None:
    doc = parse_file(FIXTURES / "policy.md")
    assert doc.format == "markdown"
    assert doc.text == (
        "Warranty Policy\n\n"
        "Every product carries a **two-year** warranty\nfrom the date of purchase.\n\n"
        "Coverage\n\n"
        "- Laptops\n- Phones\n  - Refurbished phones\n\n"
        "Product | Years\nLaptop | 2\nPhone | 1\n\n"
        "Claims\n\n"
        "claim --id 42\n\n"
        "Contacts\n\n"
        "Write to support."
    )
    top, cov, claims = ("Warranty Policy",), ("Warranty Policy", "Coverage"), ("Warranty Policy", "Coverage", "Claims")
    assert outline(doc) == [
        ("heading", "Warranty Policy", 1, top),
        ("paragraph", "Every product carries a **two-year** warranty\nfrom the date of purchase.", 0, top),
        ("heading", "Coverage", 2, cov),
        ("list", "- Laptops\n- Phones\n  - Refurbished phones", 0, cov),
        ("table", "Product | Years\nLaptop | 2\nPhone | 1", 0, cov),
        ("heading", "Claims", 3, claims),
        ("code", "claim --id 42", 0, claims),
        ("heading", "Contacts", 1, ("Contacts",)),
        ("paragraph", "Write to support.", 0, ("Contacts",)),
    ]
    assert [(b.start, b.end) for b in doc.blocks][:3] == [(0, 15), (17, 89), (91, 99)]
    assert doc.metadata == {
        "doc_id": "warranty-policy",
        "version": "5",
        "title": "Warranty Policy",
        "access": "staff",
        "effective_from": date(2026, 1, 1),
        "tags": ["warranty", "returns"],
    }
    assert "doc_id" not in doc.text and "---" not in doc.text


def test_heading_text_is_bare_and_same_level_pops() -> None:
    doc = md("# One *big* `x`\n\n## Two\n\ntext\n\n## Three\n\n#### Deep\n\n### Shallower\n")
    assert outline(doc) == [
        ("heading", "One big x", 1, ("One big x",)),
        ("heading", "Two", 2, ("One big x", "Two")),
        ("paragraph", "text", 0, ("One big x", "Two")),
        ("heading", "Three", 2, ("One big x", "Three")),
        ("heading", "Deep", 4, ("One big x", "Three", "Deep")),
        ("heading", "Shallower", 3, ("One big x", "Three", "Shallower")),
    ]


def test_blocks_before_any_heading_have_empty_path_and_setext_headings_work() -> None:
    doc = md("Intro line.\n\nTitle\n=====\n\nBody.\n")
    assert outline(doc) == [
        ("paragraph", "Intro line.", 0, ()),
        ("heading", "Title", 1, ("Title",)),
        ("paragraph", "Body.", 0, ("Title",)),
    ]


def test_blockquote_list_and_indented_code() -> None:
    doc = md("> quoted text\n> - a\n> - b\n\n    indented code\n      more\n\n1. first\n2. second\n")
    assert outline(doc) == [
        ("paragraph", "quoted text", 0, ()),
        ("list", "- a\n- b", 0, ()),
        ("code", "indented code\n  more", 0, ()),
        ("list", "1. first\n2. second", 0, ()),
    ]


def test_html_comments_dropped_and_bom_stripped() -> None:
    doc = parse_bytes("\ufeff# Title\n\n<!-- hidden -->\n\nText\n".encode("utf-8"), "a.md")
    assert doc.text == "Title\n\nText"


def test_crlf_line_ends_give_same_text() -> None:
    source = "---\ntitle: T\n---\n# H\n\nline one\nline two\n"
    assert md(source) == parse_bytes(source.replace("\n", "\r\n").encode(), "a.md")


def test_front_matter_only_in_first_line() -> None:
    doc = md("# H\n\n---\ntitle: x\n---\n")
    assert doc.metadata == {}
    assert doc.text.startswith("H\n\n")


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("---\ntitle: [unclosed\n---\n# H\n", "front matter is not valid YAML"),
        ("---\n- a\n- b\n---\n# H\n", "front matter is not a mapping"),
        ("---\n!!python/object:os.system {}\n---\n# H\n", "front matter is not valid YAML"),
        ("---\ntitle: T\n---\n", "no text"),
        ("   \n\n", "no text"),
    ],
)
def test_unreadable_markdown(source: str, reason: str) -> None:
    with pytest.raises(UnreadableFile, match=reason):
        md(source)


def test_yaml_bomb_refused() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for index in range(1, 9):
        previous = chr(ord("a") + index - 1)
        name = chr(ord("a") + index)
        lines.append(f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]")
    source = "---\n" + "\n".join(lines) + "\n---\n# H\n"
    with pytest.raises(UnreadableFile, match="front matter is not valid YAML"):
        md(source)


def test_huge_front_matter_refused() -> None:
    source = "---\n" + "".join(f"k{i}: {'x' * 60}\n" for i in range(2000)) + "---\n# H\n"
    with pytest.raises(UnreadableFile, match="front matter is larger"):
        md(source)


def test_not_utf8_and_binary() -> None:
    with pytest.raises(UnreadableFile, match="not UTF-8 text"):
        parse_bytes("# Caf\u00e9\n".encode("latin-1"), "a.md")
    with pytest.raises(UnreadableFile, match="binary file"):
        parse_bytes(b"# Title\x00\x01\x02", "a.md")


@pytest.mark.parametrize("depth", [19, 25, 300])
def test_deeply_quoted_text_is_kept(depth):
    doc = parse_bytes(b"Intro.\n\n" + b">" * depth + b" SECRETQUOTE words\n\nOutro.\n", "q.md")
    assert "SECRETQUOTE words" in doc.text


def test_nesting_beyond_the_stack_is_refused_not_dropped():
    with pytest.raises(UnreadableFile, match="nested too deeply"):
        parse_bytes(b"Intro.\n\n" + b">" * 5000 + b" SECRETQUOTE\n", "q.md")


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["Install", "ünïcode", "日本", "3.5", "a", "b"]),
            st.sampled_from([" ", "  ", "\t", "\xa0", "\u3000"]),
            st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]),
            st.sampled_from(list("!#$%&*+-:<=>@[\\]^_`{}~") + ["`code`", "*em*", "[l](u)", "&amp;", "\\*"]),
        ),
        max_size=12,
    ).map("".join)
)
def test_a_heading_without_markup_characters_reads_as_the_inline_parser_reads_it(content: str) -> None:
    # heading_text skips markdown-it's inline pass when no inline rule can start in the text.
    from ingest.parse.markdown import _parser, heading_text, plain_inline

    inline = _parser().parseInline(content, {})
    assert heading_text(content, {}) == (plain_inline(inline[0]) if inline else "")
