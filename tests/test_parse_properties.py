"""Properties of every parser: offsets exact, parsing deterministic, any bytes handled."""

from __future__ import annotations

import io
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reportlab.pdfgen import canvas

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse import parse_bytes

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

lower_word = st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=8)
title_word = st.builds(lambda head, tail: head + tail, st.sampled_from(string.ascii_uppercase), lower_word)
words = st.lists(lower_word, min_size=1, max_size=6)
title = st.lists(title_word, min_size=1, max_size=4).map(" ".join)


def expected_paths(blocks: list[tuple[str, str, int]]) -> list[tuple[str, ...]]:
    """The reference heading-path rule: a heading pops headings of its level or deeper."""
    stack: list[tuple[int, str]] = []
    paths = []
    for kind, text, level in blocks:
        if kind == "heading":
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, text))
        paths.append(tuple(text for _, text in stack))
    return paths


def merge_lists(blocks: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """Lists separated only by blank lines are one list."""
    merged: list[tuple[str, str, int]] = []
    for block in blocks:
        if merged and merged[-1][0] == "list" and block[0] == "list":
            merged[-1] = ("list", merged[-1][1] + "\n" + block[1], 0)
        else:
            merged.append(block)
    return merged


def check(doc: ParsedDocument, expected: list[tuple[str, str, int]]) -> None:
    assert [(b.kind, doc.text[b.start : b.end], b.level) for b in doc.blocks] == expected
    assert [b.heading_path for b in doc.blocks] == expected_paths(expected)
    assert doc.text == "\n\n".join(text for _, text, _ in expected)


def check_consistent(doc: ParsedDocument) -> None:
    """Whatever the input: blocks in order, separated by exactly two newlines, covering the text."""
    position = 0
    for index, block in enumerate(doc.blocks):
        assert block.start == position + (2 if index else 0)
        assert doc.text[position : block.start] == ("\n\n" if index else "")
        assert block.end > block.start
        assert doc.text[block.start : block.end].strip()
        position = block.end
    assert position == len(doc.text)


# ---------------------------------------------------------------------------- generated documents

markdown_block = st.one_of(
    st.tuples(st.just("heading"), st.integers(1, 6), title),
    st.tuples(st.just("paragraph"), st.just(0), st.lists(words.map(" ".join), min_size=1, max_size=3)),
    st.tuples(st.just("list"), st.just(0), st.lists(words.map(" ".join), min_size=1, max_size=4)),
    st.tuples(st.just("table"), st.integers(1, 4), st.lists(st.lists(lower_word, min_size=4, max_size=4), min_size=2, max_size=4)),
    st.tuples(st.just("code"), st.just(0), st.lists(words.map(" ".join), min_size=1, max_size=3)),
)


def render_markdown(spec: tuple) -> tuple[str, tuple[str, str, int]]:
    kind, number, content = spec
    if kind == "heading":
        return f"{'#' * number} {content}", ("heading", content, number)
    if kind == "paragraph":
        return "\n".join(content), ("paragraph", "\n".join(content), 0)
    if kind == "list":
        text = "\n".join(f"- {item}" for item in content)
        return text, ("list", text, 0)
    if kind == "table":
        rows = [row[:number] for row in content]
        source = [f"| {' | '.join(rows[0])} |", "|" + "---|" * number] + [f"| {' | '.join(row)} |" for row in rows[1:]]
        return "\n".join(source), ("table", "\n".join(" | ".join(row) for row in rows), 0)
    return "```\n" + "\n".join(content) + "\n```", ("code", "\n".join(content), 0)


@FAST
@given(st.lists(markdown_block, min_size=1, max_size=8), st.booleans())
def test_generated_markdown(specs: list[tuple], with_front_matter: bool) -> None:
    rendered = [render_markdown(spec) for spec in specs]
    source = "\n\n".join(text for text, _ in rendered) + "\n"
    if with_front_matter:
        source = "---\ntitle: Generated\nversion: 3\n---\n" + source
    doc = parse_bytes(source.encode(), "gen.md")
    check(doc, merge_lists([expected for _, expected in rendered]))
    assert doc.metadata == ({"title": "Generated", "version": "3"} if with_front_matter else {})
    assert parse_bytes(source.encode(), "gen.md") == doc


spaces = st.text(alphabet=" \n\t", min_size=1, max_size=3)
html_block = st.one_of(
    st.tuples(st.just("heading"), st.integers(1, 6), title),
    st.tuples(st.just("paragraph"), spaces, words),
    st.tuples(st.just("list"), st.sampled_from(["ul", "ol"]), st.lists(words.map(" ".join), min_size=1, max_size=4)),
    st.tuples(st.just("table"), st.integers(1, 4), st.lists(st.lists(lower_word, min_size=4, max_size=4), min_size=1, max_size=4)),
    st.tuples(st.just("code"), st.just(0), st.lists(words.map(" ".join), min_size=1, max_size=3)),
)


def render_html(spec: tuple) -> tuple[str, tuple[str, str, int]]:
    kind, number, content = spec
    if kind == "heading":
        return f"<h{number}>{content}</h{number}>", ("heading", content, number)
    if kind == "paragraph":
        return f"<p>{number.join(content)}</p>", ("paragraph", " ".join(content), 0)
    if kind == "list":
        items = "".join(f"<li>{item}</li>" for item in content)
        markers = [f"{i}." if number == "ol" else "-" for i in range(1, len(content) + 1)]
        text = "\n".join(f"{marker} {item}" for marker, item in zip(markers, content))
        return f"<{number}>{items}</{number}>", ("list", text, 0)
    if kind == "table":
        rows = [row[:number] for row in content]
        source = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
        return f"<table>{source}</table>", ("table", "\n".join(" | ".join(row) for row in rows), 0)
    return "<pre>" + "\n".join(content) + "</pre>", ("code", "\n".join(content), 0)


@FAST
@given(st.lists(html_block, min_size=1, max_size=8), st.booleans())
def test_generated_html(specs: list[tuple], with_chrome: bool) -> None:
    rendered = [render_html(spec) for spec in specs]
    body = "\n".join(text for text, _ in rendered)
    if with_chrome:
        body = f"<nav>menu</nav><script>var a;</script><div>{body}</div><footer>footer</footer>"
    source = f'<html><head><meta name="doc_id" content="gen"></head><body>{body}</body></html>'
    doc = parse_bytes(source.encode(), "gen.html")
    check(doc, [expected for _, expected in rendered])
    assert doc.metadata == {"doc_id": "gen"}
    assert parse_bytes(source.encode(), "gen.html") == doc


text_block = st.one_of(
    st.tuples(st.just("underlined"), st.integers(1, 2), title),
    st.tuples(st.just("caps"), st.just(1), title.map(str.upper)),
    st.tuples(st.just("numbered"), st.lists(st.integers(1, 9), min_size=1, max_size=3), title),
    st.tuples(st.just("paragraph"), st.just(0), st.lists(words.map(" ".join), min_size=1, max_size=3)),
    st.tuples(st.just("list"), st.sampled_from("-*\u2022"), st.lists(words.map(" ".join), min_size=1, max_size=4)),
    st.tuples(st.just("table"), st.sampled_from([" ...... ", "\t", "     "]), st.lists(st.tuples(words, words), min_size=2, max_size=4)),
)


def render_text(spec: tuple) -> tuple[str, tuple[str, str, int]]:
    kind, number, content = spec
    if kind == "underlined":
        return f"{content}\n{('=' if number == 1 else '-') * max(3, len(content))}", ("heading", content, number)
    if kind == "caps":
        return content, ("heading", content, 1)
    if kind == "numbered":
        label = ".".join(map(str, number)) + ("." if len(number) == 1 else "")
        return f"{label} {content}", ("heading", f"{label} {content}", len(number))
    if kind == "paragraph":
        return "\n".join(content), ("paragraph", " ".join(content), 0)
    if kind == "table":
        source = "\n".join(f"{' '.join(left)}{number}{' '.join(right)}" for left, right in content)
        return source, ("table", "\n".join(f"{' '.join(left)} | {' '.join(right)}" for left, right in content), 0)
    text = "\n".join(f"{number} {item}" for item in content)
    return text, ("list", text, 0)


@FAST
@given(st.lists(text_block, min_size=1, max_size=8))
def test_generated_text(specs: list[tuple]) -> None:
    rendered = [render_text(spec) for spec in specs]
    expected = merge_lists([block for _, block in rendered])
    source = "\n\n\n".join(text for text, _ in rendered) + "\n"
    doc = parse_bytes(source.encode(), "gen.txt")
    check(doc, expected)
    assert parse_bytes(source.encode(), "gen.txt") == doc


# ---------------------------------------------------------------------------- arbitrary input

SUFFIXES = ["a.md", "a.html", "a.txt", "a.pdf"]


def parse_or_unreadable(data: bytes, name: str) -> None:
    try:
        doc = parse_bytes(data, name)
    except UnreadableFile as exc:
        assert str(exc)
        return
    check_consistent(doc)
    assert parse_bytes(data, name) == doc


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400), st.sampled_from(SUFFIXES))
def test_arbitrary_bytes(data: bytes, name: str) -> None:
    parse_or_unreadable(data, name)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400), st.sampled_from(SUFFIXES))
def test_arbitrary_text(text: str, name: str) -> None:
    parse_or_unreadable(text.encode("utf-8", errors="surrogatepass"), name)


markup = st.lists(
    st.sampled_from(
        ["---\n", "# ", "## ", "- ", "* ", "1. ", "| a | b |\n|---|---|\n", "```\n", "\n", "\n\n", "\f", "PAGE 1\n",
         "<p>", "</p>", "<h2>", "<ul><li>", "<table><tr><td>", "<pre>", "<script>", "===\n", "title: x\n", "&a [*a]",
         "word ", "Word", "regu-\n", "- 3 -\n", "\u2022 ", "   ", "\t", "\ufeff", "caf\u00e9 "]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(markup, st.sampled_from(SUFFIXES[:3]))
def test_markup_soup(text: str, name: str) -> None:
    parse_or_unreadable(text.encode("utf-8", errors="surrogatepass"), name)


def small_pdf() -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    for page in (1, 2):
        pdf.setFont("Helvetica", 9)
        pdf.drawString(72, 800, "Header")
        pdf.setFont("Helvetica-Bold", 16)
        pdf.drawString(72, 760, f"Heading {page}")
        pdf.setFont("Helvetica", 11)
        pdf.drawString(72, 740, "Some body text here.")
        pdf.drawString(72, 720, "cell")
        pdf.drawString(300, 720, "other cell")
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


SMALL_PDF = small_pdf()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(SMALL_PDF) - 1), st.integers(0, 255)), min_size=1, max_size=8))
def test_damaged_pdf(changes: list[tuple[int, int]]) -> None:
    data = bytearray(SMALL_PDF)
    for position, value in changes:
        data[position] = value
    parse_or_unreadable(bytes(data), "damaged.pdf")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(SMALL_PDF)), st.binary(max_size=200))
def test_truncated_pdf(cut: int, tail: bytes) -> None:
    parse_or_unreadable(SMALL_PDF[:cut] + tail, "cut.pdf")
