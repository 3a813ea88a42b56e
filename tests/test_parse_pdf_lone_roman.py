"""A lone roman numeral set apart at the foot of a page is a page number only where it can number front
matter: near the start of the file, no greater than the page's place in it. ``xx`` ending an example on
page 12 (LuaTeX's manual: a discretionary-ligature table's last cell) is the text's; ``iii`` under the
table of contents on page 3 is the page's number."""

from __future__ import annotations

import io

import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from ingest.parse import parse_bytes

PAGES = 12


def _pdf(page_of_lone: int, lone: str) -> bytes:
    """Twelve pages of body text with a page number at the foot; page ``page_of_lone`` also has
    ``lone`` on a line of its own, set apart below its text."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    for page in range(1, PAGES + 1):
        pdf.setFont("Helvetica", 11)
        for row in range(8):
            pdf.drawString(72, 760 - row * 15, f"Line {row} of the body text of page {page}, with its words.")
        if page == page_of_lone:
            pdf.drawString(72, 500, lone)
        pdf.drawCentredString(297, 40, str(page))
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def _lines(data: bytes) -> list[str]:
    return parse_bytes(data, "manual.pdf").text.split("\n")


def test_a_lone_roman_numeral_deep_in_the_document_is_text() -> None:
    assert "xx" in _lines(_pdf(12, "xx"))


@pytest.mark.parametrize(("page", "lone"), [(3, "iii"), (3, "i"), (1, "i")])
def test_a_lone_roman_page_number_in_the_front_matter_is_dropped(page: int, lone: str) -> None:
    assert lone not in _lines(_pdf(page, lone))
