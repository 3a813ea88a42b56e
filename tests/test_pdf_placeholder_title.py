"""A placeholder PDF title (what a producer writes when the author gave none: "untitled", "Microsoft
Word - report.docx", the file's name) counts as missing: the inventory's title fills it, and with none
the document is rejected for a missing title, never indexed under "untitled"."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfWriter
from reportlab.pdfgen import canvas

from ingest.parse import parse_bytes, read_metadata
from tests.helpers import pdf_with_xmp_packet, xmp_packet
from tests.test_metadata_read_holes import corpus_with, validate_problems

PLACEHOLDERS = [
    "untitled",  # reportlab's default
    "Untitled document",
    "Untitled-1",
    "Microsoft Word - report.docx",
    "Microsoft PowerPoint - Q3 review",
    "report.pdf",
    "doc1.tex",
    "dvips.dvi",  # dvips and pdfTeX write the file's name
    r"C:\Users\kim\Documents\Annual report.docx",
    "Document1",
    "   ",
]

TITLES = ["Title 42 Public Health", "Untitled Love Song", "Using config.md", "The dvipscol package", "Q3 review"]


def _pdf(title: str | None, keywords: str = "doc_id=memo; version=1; access=public") -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    if title is not None:
        pdf.setTitle(title)
    pdf.setKeywords(keywords)
    pdf.drawString(72, 720, "The crownjewel memo on the page.")
    pdf.save()
    return buffer.getvalue()


@pytest.mark.parametrize("title", PLACEHOLDERS)
def test_a_placeholder_title_is_no_title(title: str) -> None:
    assert "title" not in parse_bytes(_pdf(title), "memo.pdf").metadata
    assert "title" not in read_metadata(_pdf(title), "memo.pdf")


def test_reportlab_s_default_title_is_no_title() -> None:
    assert "title" not in parse_bytes(_pdf(None), "memo.pdf").metadata


@pytest.mark.parametrize("title", TITLES)
def test_a_real_title_is_kept(title: str) -> None:
    assert parse_bytes(_pdf(title), "memo.pdf").metadata["title"] == title


@pytest.mark.parametrize("title", ["untitled", "dvips.dvi", "Microsoft Word - memo.docx"])
def test_the_inventory_title_fills_a_placeholder(tmp_path, title: str) -> None:
    # was: "title: file has 'dvips.dvi' but inventory.yaml has 'Memo'", the document rejected
    corpus = corpus_with(tmp_path, "memo.pdf", _pdf(title), entry="{title: Memo}")
    assert validate_problems(corpus) == (0, [])


def test_a_placeholder_and_no_inventory_title_is_a_missing_title(tmp_path) -> None:
    corpus = corpus_with(tmp_path, "memo.pdf", _pdf("untitled"), entry="{}")
    assert validate_problems(corpus) == (1, ["documents/memo.pdf: title: missing required field"])


def test_the_keywords_title_stands_beside_a_placeholder() -> None:
    data = _pdf("Untitled", keywords="doc_id=memo; version=1; access=public; title=Board memo")
    assert parse_bytes(data, "memo.pdf").metadata["title"] == "Board memo"


def test_a_placeholder_xmp_title_is_no_title() -> None:
    writer = PdfWriter(clone_from=io.BytesIO(_pdf("")))
    packet = xmp_packet(
        '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        "<dc:title><rdf:Alt><rdf:li xml:lang='x-default'>Microsoft Word - memo.docx</rdf:li></rdf:Alt></dc:title>"
        "</rdf:Description>"
    )
    assert "title" not in parse_bytes(pdf_with_xmp_packet(writer, packet), "memo.pdf").metadata
