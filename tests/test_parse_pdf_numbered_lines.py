"""A numbered line at the top of every page is text when its number numbers a part of it ("Section 3",
"3. Results", "§ 3"), even where that number counts with the page; a page number, a running header
carrying one, and a line repeated as it is on every page stay furniture."""

from __future__ import annotations

import io

import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from ingest.parse import parse_bytes

PAGES = 6


def _pdf(top: str, bottom: str | None = "{page}") -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    width, height = A4
    for page in range(1, PAGES + 1):
        pdf.setFont("Helvetica", 11)
        pdf.drawString(72, height - 60, top.format(page=page))
        pdf.setFont("Helvetica", 11)
        for row in range(12):
            words = ("alpha", "beta", "gamma", "delta", "omega", "sigma")[(row + page) % 6]
            pdf.drawString(72, height - 130 - row * 16, f"The {words} rule applies to row {row} in plain words.")
        if bottom is not None:
            pdf.drawCentredString(width / 2, 40, bottom.format(page=page))
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


@pytest.mark.parametrize(
    "top",
    [
        "Section {page}",
        "{page}. Results of stage",
        "{page}) Results of stage",
        "§ {page} Duties",
        "Step {page}: Remove it",
        "Day {page}",
        "Task {page}",
        "Phase {page}",
        "Kapitel {page}",
    ],
)
def test_a_numbered_line_that_counts_with_the_page_is_kept(top: str) -> None:
    text = parse_bytes(_pdf(top), "steps.pdf").text
    for page in range(1, PAGES + 1):
        assert top.format(page=page) in text, (page, text[:400])


@pytest.mark.parametrize("top", ["Owner's Manual {page}", "Page {page} of 6", "Acme Corp. Confidential"])
def test_running_headers_and_page_numbers_are_dropped(top: str) -> None:
    text = parse_bytes(_pdf(top), "manual.pdf").text
    assert top.format(page=3) not in text
    assert "The delta rule applies to row 0 in plain words." in text
    assert "\n3\n" not in f"\n{text}\n"
