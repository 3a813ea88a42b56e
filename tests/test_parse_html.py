"""HTML parsing: page furniture dropped, blocks and their texts, <meta> fields, charsets."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse import parse_bytes, parse_file

FIXTURES = Path(__file__).parent / "fixtures" / "parse"


def outline(doc: ParsedDocument) -> list[tuple[str, str, int, tuple[str, ...]]]:
    return [(b.kind, doc.text[b.start : b.end], b.level, b.heading_path) for b in doc.blocks]


def html(source: str) -> ParsedDocument:
    return parse_bytes(source.encode("utf-8"), "page.html")


def test_policy_fixture() -> None:
    doc = parse_file(FIXTURES / "policy.html")
    assert doc.format == "html"
    top, cov = ("Warranty Policy",), ("Warranty Policy", "Coverage")
    ex = ("Warranty Policy", "Coverage", "Example")
    assert outline(doc) == [
        ("heading", "Warranty Policy", 1, top),
        ("paragraph", "Every product carries a two-year warranty.", 0, top),
        ("heading", "Coverage", 2, cov),
        ("table", "Product | Years | Region\nLaptop | 2 | EU\nPhone | 1 | US", 0, cov),
        ("list", "- Laptops\n- Phones", 0, cov),
        ("list", "1. Register\n2. Claim", 0, cov),
        ("heading", "Example", 3, ex),
        ("code", "claim --id 42\n  --fast", 0, ex),
        ("paragraph", "Loose text in a div.", 0, ex),
    ]
    assert doc.text == "\n\n".join(text for _, text, _, _ in outline(doc))
    for dropped in ("Home", "About", "tracking", "color", "Related links", "ACME"):
        assert dropped not in doc.text
    assert doc.metadata == {
        "doc_id": "warranty-policy",
        "version": "5",
        "access": "public",
        "title": "Warranty Policy",
    }


def test_meta_title_wins_over_title_element_and_repeated_names_are_listed() -> None:
    doc = html(
        '<html><head><title>Page title</title><meta name="TITLE" content="Meta title">'
        '<meta name="tags" content="a"><meta name="tags" content="b"><meta property="og:x" content="y">'
        "</head><body><p>x</p></body></html>"
    )
    assert doc.metadata == {"title": "Meta title", "tags": ["a", "b"]}


def test_article_header_kept_page_header_dropped_and_nested_lists() -> None:
    doc = html(
        "<body><header>Site banner</header><article><header><h1>Title</h1></header>"
        "<ul><li>One<ul><li>One.a</li></ul></li><li>Two</li></ul>"
        '<ol start="3"><li>Three</li></ol>'
        "<footer>Article note</footer></article><footer>Site footer</footer></body>"
    )
    assert outline(doc) == [
        ("heading", "Title", 1, ("Title",)),
        ("list", "- One\n  - One.a\n- Two", 0, ("Title",)),
        ("list", "3. Three", 0, ("Title",)),
        ("paragraph", "Article note", 0, ("Title",)),
    ]


def test_loose_text_and_inline_markup_join_without_extra_spaces() -> None:
    doc = html("<div>Intro <b>bold</b>ly said<br>next line<div>Inner block</div>tail</div>")
    assert outline(doc) == [
        ("paragraph", "Intro boldly said next line", 0, ()),
        ("paragraph", "Inner block", 0, ()),
        ("paragraph", "tail", 0, ()),
    ]


def test_table_with_header_section_and_empty_rows() -> None:
    doc = html(
        "<table><thead><tr><th>a</th><th>b</th><th>c</th></tr></thead>"
        "<tbody><tr><td>1</td><td> 2 </td><td>3</td></tr><tr><td></td></tr></tbody></table>"
    )
    assert outline(doc) == [("table", "a | b | c\n1 | 2 | 3", 0, ())]


def test_declared_charset_is_used() -> None:
    source = '<html><head><meta charset="iso-8859-1"></head><body><p>Caf\u00e9</p></body></html>'
    doc = parse_bytes(source.encode("latin-1"), "a.html")
    assert doc.text == "Caf\u00e9"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"<html><body><nav>menu</nav><script>x()</script></body></html>", "no text"),
        (b"<p>caf\xe9</p>", "not UTF-8"),
        (b"<p>a\x00b</p>", "binary file"),
    ],
)
def test_unreadable_html(data: bytes, reason: str) -> None:
    with pytest.raises(UnreadableFile, match=reason):
        parse_bytes(data, "a.htm")


def test_hidden_elements_and_chrome_landmarks_dropped() -> None:
    doc = html(
        '<body><div role="navigation">Menu</div><main><h1>Title</h1><p>Shown.</p>'
        '<p hidden>Hidden.</p><p aria-hidden="true">Aria hidden.</p><p style="display: none">Styled away.</p>'
        '</main><div id="cookie-banner" hidden>We use cookies. <button>OK</button></div>'
        '<div role="contentinfo">Footer</div></body>'
    )
    assert doc.text == "Title\n\nShown."
