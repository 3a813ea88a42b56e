"""Filled PDF form fields (AcroForm) are text of the page their field sits on: what a claimant typed
into a claim form is searchable and cited with its page, beside its label. Fields not shown (hidden,
a password) are not text. The PDFs are made by tests/fixtures/generators/make_form_pdfs.py."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from reportlab.pdfgen import canvas

from ingest.model import ParsedDocument
from ingest.parse import parse_bytes, parse_file

DOCUMENTS = Path(__file__).parent / "fixtures" / "generators" / "documents"
FILLED = ["form-reportlab.pdf", "form-pypdf.pdf", "form-pypdf-no-appearance.pdf"]
DESCRIPTION = (
    "Water came through the ceiling of the north basement and soaked the archive boxes stored along the east wall."
)


def block_with(doc: ParsedDocument, phrase: str) -> tuple[str, tuple[int, ...]]:
    """The text and pages of the block holding ``phrase``."""
    offset = doc.text.index(phrase)
    block = next(b for b in doc.blocks if b.start <= offset < b.end)
    return doc.text[block.start : block.end], block.pages


@pytest.mark.parametrize("name", FILLED)
def test_filled_values_are_text_of_their_page_beside_their_label(name: str) -> None:
    doc = parse_file(DOCUMENTS / name)
    for label, value, page in [
        ("Claimant:", "Jane Quimby", 1),
        ("Policy number:", "HX-4471-220", 1),
        ("Cause of damage:", "Burst pipe", 1),  # a combo box's choice
        ("Estimated cost (EUR):", "18400", 2),
    ]:
        text, pages = block_with(doc, value)
        assert label in text, (value, text)
        assert pages == (page,), (value, pages)


@pytest.mark.parametrize("name", FILLED)
def test_a_multi_line_value_is_one_paragraph_of_its_page(name: str) -> None:
    doc = parse_file(DOCUMENTS / name)
    assert block_with(doc, "Water came through") == (DESCRIPTION, (2,))


@pytest.mark.parametrize("name", FILLED)
def test_fields_not_shown_are_not_text(name: str) -> None:
    text = parse_file(DOCUMENTS / name).text
    assert "adjuster-note-zebrafish" not in text  # a hidden field
    assert "hunter2" not in text  # a password field, shown masked
    assert "Yes" not in text.split()  # a checkbox's state is no text value


def test_an_empty_form_adds_nothing() -> None:
    doc = parse_file(DOCUMENTS / "form-empty.pdf")
    assert block_with(doc, "Claimant:") == ("Claimant:", (1,))
    assert "Off" not in doc.text.split()


def test_a_page_whose_only_text_is_a_filled_field_is_readable() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.acroForm.textfield(name="note", value="Meter reading 04512 taken on site", x=72, y=700, width=300, height=18)
    pdf.showPage()
    pdf.save()
    doc = parse_bytes(buffer.getvalue(), "note.pdf")
    assert doc.text == "Meter reading 04512 taken on site"
    assert [b.pages for b in doc.blocks] == [(1,)]
