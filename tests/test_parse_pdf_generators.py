"""PDFs from other generators (pdflatex with and without bookmarks, LibreOffice, Chromium,
reportlab in two justified columns): headings with their levels, sections and text.

The PDFs are committed with the script that makes them: tests/fixtures/generators/make_pdfs.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.model import ParsedDocument
from ingest.parse import parse_file

DOCUMENTS = Path(__file__).parent / "fixtures" / "generators" / "documents"


def parsed(name: str) -> ParsedDocument:
    return parse_file(DOCUMENTS / name)


def headings(doc: ParsedDocument) -> list[tuple[str, int]]:
    return [(doc.text[b.start : b.end], b.level) for b in doc.blocks if b.kind == "heading"]


def section_of(doc: ParsedDocument, phrase: str) -> tuple[str, ...]:
    """The heading path of the block holding ``phrase``."""
    offset = doc.text.index(phrase)
    block = next(b for b in doc.blocks if b.start <= offset < b.end)
    return block.heading_path


LATEX_SECTIONS = [
    ("1 Introduction", 1),
    ("1.1 Scope of the guide", 2),
    ("2 Installation", 1),
    ("2.1 Mounting the pump", 2),
    ("2.2 Electrical connection", 2),
    ("3 Troubleshooting", 1),
    ("3.1 The pump does not start", 2),
]


@pytest.mark.parametrize(
    "name",
    [
        "latex-outline.pdf",
        "latex-plain.pdf",
        "latex-t1.pdf",
        "libreoffice.pdf",
        "chromium.pdf",
        "reportlab.pdf",
        "libreoffice-tagged.pdf",
        "chromium-tagged.pdf",
        "chromium-shallow-outline.pdf",
        "latex-news.pdf",
        "libreoffice-wrapped-table.pdf",
        "chromium-wrapped-table.pdf",
    ],
)
def test_spec_metadata_is_read_from_every_generator(name: str) -> None:
    metadata = parsed(name).metadata
    assert metadata["doc_id"] and metadata["version"] and metadata["title"] and metadata["access"]


def test_latex_with_bookmarks_takes_its_headings_and_levels_from_the_outline() -> None:
    doc = parsed("latex-outline.pdf")
    # The title made by \maketitle is not in the outline: it is found as the largest line above
    # the first section and heads the front matter; the author line below it is text.
    assert headings(doc) == [("Pump Maintenance Guide", 1), *LATEX_SECTIONS]
    assert section_of(doc, "Field Service") == ("Pump Maintenance Guide",)
    assert section_of(doc, "Fix the base plate") == ("2 Installation", "2.1 Mounting the pump")


def test_latex_t1_font_encoding_keeps_its_ligatures() -> None:
    """T1 (EC) fonts put fi/fl/ff at codes 0x1B-0x1F with no Unicode mapping: the same source must
    read the same words as with the default encoding ("Classified", not "Classied")."""
    t1, ot1 = parsed("latex-t1.pdf"), parsed("latex-outline.pdf")
    assert t1.text.split() == ot1.text.split()
    assert any(ligature in t1.text for ligature in ("fi", "ff", "fl"))
    assert headings(t1) == [("Pump Maintenance Guide", 1), *LATEX_SECTIONS]


def test_latex_without_bookmarks_finds_cmbx_headings_with_the_number_set_apart() -> None:
    doc = parsed("latex-plain.pdf")
    found = headings(doc)
    # The title (larger, not bold) ranks above the sections, the sections above the subsections.
    assert found[0] == ("Pump Maintenance Guide", 1)
    assert found[1:] == [(text, level + 1) for text, level in LATEX_SECTIONS]
    assert section_of(doc, "Connect the suction pipe") == (
        "Pump Maintenance Guide",
        "2 Installation",
        "2.1 Mounting the pump",
    )


@pytest.mark.parametrize("name", ["latex-outline.pdf", "latex-plain.pdf"])
def test_latex_running_heads_that_change_per_section_and_page_side_are_removed(name: str) -> None:
    doc = parsed(name)
    # "headings" page style: "2 INSTALLATION" with the page number, left and right pages.
    assert "INSTALLATION" not in doc.text and "INTRODUCTION" not in doc.text
    lists = [doc.text[b.start : b.end] for b in doc.blocks if b.kind == "list"]
    assert lists == ["• Fix the base plate to a level concrete floor.\n• Connect the suction pipe before the discharge pipe."]
    assert "self-contained pump units and their well-known failure modes" in doc.text


def test_libreoffice_heading_styles_bold_phrase_list_and_table() -> None:
    doc = parsed("libreoffice.pdf")
    assert headings(doc) == [("Returns policy", 1), ("Eligible items", 2), ("Refund amounts", 2), ("Exchanges", 1)]
    # a bold phrase inside body text stays in its paragraph
    assert section_of(doc, "thirty days") == ("Returns policy",)
    assert "Items must be returned within thirty days of delivery." in doc.text
    kinds = {doc.text[b.start : b.end]: b.kind for b in doc.blocks}
    assert kinds["• Unopened spare parts in their original packaging.\n• Tools that arrived damaged, reported within two days."] == "list"
    assert kinds["Condition | Refund\nUnopened | Full price\nOpened | Half price"] == "table"
    assert section_of(doc, "Half price") == ("Returns policy", "Refund amounts")


def test_chromium_print_to_pdf_headings_table_and_characters_outside_the_bmp() -> None:
    doc = parsed("chromium.pdf")
    assert headings(doc) == [
        ("Travel expenses", 1),
        ("Booking travel", 2),
        ("Rail and air", 3),
        ("Daily allowances", 2),
    ]
    assert section_of(doc, "seven days") == ("Travel expenses", "Booking travel")
    assert section_of(doc, "EUR 31") == ("Travel expenses", "Daily allowances")
    assert "For a trip of 𝑛 days the allowance is 𝑛 × 𝑎, where 𝑎 is the daily rate." in doc.text
    assert "\ufffd" not in doc.text


def test_reportlab_two_justified_columns_with_bold_phrases_and_italic_lead_ins() -> None:
    doc = parsed("reportlab.pdf")
    assert headings(doc) == [
        ("1 Protective equipment", 1),
        ("Helmets", 2),
        ("Gloves and eye protection", 2),
        ("2 Working at height", 1),
        ("Ladders", 2),
        ("Scaffolding", 2),
        ("3 Reporting incidents", 1),
        ("Near misses", 2),
        ("Injuries", 2),
    ]
    # Justified lines are prose, never tables; bold phrases and italic lead-ins stay in it.
    assert {b.kind for b in doc.blocks} == {"heading", "paragraph"}
    assert section_of(doc, "Keep a written record") == ("1 Protective equipment", "Helmets")
    # The running header names the chapter and alternates sides; the footer counts pages.
    assert "Safety handbook" not in doc.text and "Page 1" not in doc.text
    # A paragraph carried over to the next column stays one paragraph.
    paragraphs = [doc.text[b.start : b.end] for b in doc.blocks if b.kind == "paragraph"]
    assert all(text.startswith("In short: ") for text in paragraphs)
    assert len(paragraphs) == 18


def test_latex_paragraphs_keep_their_hyphenated_lines_and_last_line_with_a_flush_right_note() -> None:
    """pdfium joins a line that ends in a hyphen with the next one, so the line after sits two
    baselines lower; and "corrected.  (issue 702)" pushed flush right is no table row. Neither
    splits a paragraph before its last line."""
    doc = parsed("latex-news.pdf")
    paragraphs = [doc.text[b.start : b.end] for b in doc.blocks if b.kind == "paragraph"]
    assert [(text.split()[0], text.split()[-2:]) for text in paragraphs] == [
        ("The", ["(issue", "701)"]),
        ("Previously", ["(issue", "702)"]),
        ("Uncharacteristically", ["(issue", "703)"]),
    ]
    assert "the documentation of the electromechanical characteristics was reorganized" in paragraphs[0]


@pytest.mark.parametrize(
    ("name", "table", "section"),
    [
        (
            "libreoffice-wrapped-table.pdf",
            "Part | Warranty period in months from delivery | Replacement part number\n"
            "Motor | 24 | AB-CD-123\nSeals | 6 | AB-CD-456",
            ("Warranty terms", "What is covered", "Wear parts"),
        ),
        (
            "chromium-wrapped-table.pdf",
            "Vehicle | Rate per mile from the first journey | Replacement part number\n"
            "Car | 45p | First 10,000 miles\nMotorcycle | 24p | Any distance\nBicycle | 20p | Any distance",
            ("Mileage rates",),
        ),
    ],
)
def test_table_rows_whose_cells_wrap_stay_rows_not_headings_or_paragraphs(
    name: str, table: str, section: tuple[str, ...]
) -> None:
    """A header row whose cells wrap (drawn cell by cell: down one cell, back up for the next;
    or vertically centred) is the table's first row, never headings or loose paragraphs."""
    doc = parsed(name)
    tables = [doc.text[b.start : b.end] for b in doc.blocks if b.kind == "table"]
    assert tables == [table]
    assert section_of(doc, "Replacement part number") == section
    assert all("part number" not in heading for heading, _ in headings(doc))
