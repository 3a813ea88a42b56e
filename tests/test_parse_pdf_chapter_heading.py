"""A chapter heading whose text is also its chapter's running header ("Troubleshooting" at the top of
pages 3-5, the heading on page 3) is the text's: the header repeats in its own height band and is
dropped there, the heading sits lower, once, and stays the heading of its page (attack 13, #11)."""

from __future__ import annotations

import io

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from ingest.parse import parse_bytes

WOODS = ["alder", "birch", "cedar", "dogwood", "elm"]
CHAPTERS = {1: "Maintenance", 3: "Troubleshooting"}  # the page each chapter opens on


def _manual() -> bytes:
    """Five pages: a running header naming the chapter, the chapter's heading on its first page,
    body lines, a page number at the foot."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    for page in range(1, 6):
        pdf.setFont("Helvetica", 9)
        pdf.drawString(60, 805, "Maintenance" if page <= 2 else "Troubleshooting")
        pdf.drawCentredString(297, 30, str(page))
        y = 760.0
        if page in CHAPTERS:
            pdf.setFont("Helvetica-Bold", 14)
            pdf.drawString(60, y, CHAPTERS[page])
            y -= 25
        pdf.setFont("Helvetica", 11)
        for row in range(5):
            pdf.drawString(60, y, f"Body sentence {row} about the {WOODS[page - 1]} pump, written on page {page} only.")
            y -= 15
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def test_a_chapter_heading_equal_to_its_running_header_is_kept() -> None:
    doc = parse_bytes(_manual(), "manual.pdf")
    headings = [(doc.text[b.start : b.end], b.pages) for b in doc.blocks if b.kind == "heading"]
    assert headings == [("Maintenance", (1,)), ("Troubleshooting", (3,))]
    # the running headers themselves are still dropped: each chapter's name is in the text once
    assert doc.text.count("Troubleshooting") == 1
    assert doc.text.count("Maintenance") == 1
    cedar = next(b for b in doc.blocks if "cedar" in doc.text[b.start : b.end])
    assert cedar.heading_path == ("Troubleshooting",)
