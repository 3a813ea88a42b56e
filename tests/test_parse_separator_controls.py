"""Separator controls (vertical tab, form feed, the file/group/record/unit separators, NEL, U+2028 and
U+2029) keep the words on either side apart in every format, and no control character reaches a chunk.
In plain text and Markdown the line separators end a line (as ``str.splitlines`` reads them) and U+2029
ends a paragraph; in HTML, where white space is collapsed, they are spaces (in ``<pre>`` too)."""

from __future__ import annotations

import re

import pytest

from ingest.chunk import chunk_document
from ingest.model import DocumentMeta, SourceDocument
from ingest.parse import parse_bytes
from ingest.settings import ChunkSettings

SEPARATORS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028", "\u2029"]
LINE_SEPARATORS = ["\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028"]  # str.splitlines' line breaks but \f
IDS = {s: f"U+{ord(s):04X}" for s in SEPARATORS}


def _pages(separator: str) -> dict[str, bytes]:
    words = f"Alpha words{separator}beta words"
    return {
        "t.txt": f"{words}\n\nGamma.\n".encode(),
        "t.md": f"# Head\n\n{words}\n\nGamma.\n".encode(),
        "t.html": f"<html><head><title>T</title></head><body><p>{words}</p></body></html>".encode(),
    }


@pytest.mark.parametrize("separator", SEPARATORS, ids=IDS.get)
@pytest.mark.parametrize("name", ["t.txt", "t.md", "t.html"])
def test_a_separator_keeps_two_words_apart(separator: str, name: str) -> None:
    doc = parse_bytes(_pages(separator)[name], name)
    assert re.search(r"words\s+beta", doc.text), repr(doc.text)
    assert separator not in doc.text


@pytest.mark.parametrize("name", ["t.txt", "t.md", "t.html"])
def test_no_control_character_reaches_the_text(name: str) -> None:
    doc = parse_bytes(_pages("\x01\x07\x1b")[name], name)
    assert not any(ord(c) < 0x20 and c not in "\n\t" for c in doc.text), repr(doc.text)
    assert "Alpha words" in doc.text
    assert all(0 <= block.start < block.end <= len(doc.text) for block in doc.blocks)


def _blocks(data: str, name: str) -> list[tuple[str, str]]:
    doc = parse_bytes(data.encode(), name)
    return [(block.kind, doc.text[block.start : block.end]) for block in doc.blocks]


@pytest.mark.parametrize("separator", LINE_SEPARATORS, ids=IDS.get)
def test_a_line_separator_ends_a_line_of_plain_text(separator: str) -> None:
    text = f"Intro.\n\n- first item{separator}- second item\n\nCode:\n\n    one = 1{separator}    two = 2\n"
    assert _blocks(text, "t.txt") == [
        ("paragraph", "Intro."),
        ("list", "- first item\n- second item"),
        ("paragraph", "Code:"),
        ("code", "one = 1\ntwo = 2"),
    ]


@pytest.mark.parametrize("separator", LINE_SEPARATORS, ids=IDS.get)
def test_a_line_separator_ends_a_line_of_markdown(separator: str) -> None:
    text = f"# Head\n\n- first item{separator}- second item\n\n```\none = 1{separator}two = 2\n```\n"
    assert _blocks(text, "t.md") == [
        ("heading", "Head"),
        ("list", "- first item\n- second item"),
        ("code", "one = 1\ntwo = 2"),
    ]


@pytest.mark.parametrize("name", ["t.txt", "t.md"])
def test_a_paragraph_separator_ends_a_paragraph(name: str) -> None:
    assert _blocks("First paragraph here.\u2029Second paragraph here.\n", name) == [
        ("paragraph", "First paragraph here."),
        ("paragraph", "Second paragraph here."),
    ]


@pytest.mark.parametrize("separator", SEPARATORS, ids=IDS.get)
def test_html_preformatted_text_has_spaces_for_separators(separator: str) -> None:
    page = f"<html><head><title>T</title></head><body><pre>one = 1{separator}two = 2</pre></body></html>"
    assert _blocks(page, "t.html") == [("code", "one = 1 two = 2")]


@pytest.mark.parametrize("separator", SEPARATORS, ids=IDS.get)
@pytest.mark.parametrize("name", ["t.txt", "t.md", "t.html"])
def test_chunks_index_the_parsed_text_and_read_the_same_lines_every_way(separator: str, name: str) -> None:
    body = f"Alpha words{separator}beta words.\n\n    code{separator}    more code\n\n- a{separator}- b\n"
    data = (
        f"<html><head><title>T</title></head><body><p>{body}</p><pre>{body}</pre></body></html>"
        if name == "t.html"
        else body
    ).encode()
    doc = parse_bytes(data, name)
    # a reader splitting a chunk into lines (str.splitlines) finds the lines the offsets were taken on
    assert doc.text.splitlines() == doc.text.split("\n"), repr(doc.text)
    meta = DocumentMeta(doc_id="d", version="1", title="T", access="public")
    for chunker in ("structure", "fixed"):
        chunks = chunk_document(SourceDocument(name, "0" * 64, doc, meta), ChunkSettings(chunker, 3))
        assert chunks and all(chunk.text == doc.text[chunk.start : chunk.end] for chunk in chunks)
        assert not any(separator in chunk.text for chunk in chunks)
