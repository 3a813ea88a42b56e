"""A PDF line is a running header or footer only when it repeats as it is in one height band of the
pages, or carries the page's number (arabic or roman: ``7``, ``- 7 -``, ``Page 7 of 9``, ``7 / 9``,
``vii``): numbered lines of the text at the top of each page ("3 Obligations", "Clause 4.3", a list
item) are kept, even where their number counts with the page or their words repeat elsewhere."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from ingest.parse import parse_bytes

PAGES = 8
WIDTH, HEIGHT = A4
TITLES = ["Scope", "Definitions", "Obligations", "Payment", "Termination", "Liability", "Notices", "Governing law"]
ROMAN = ["i", "ii", "iii", "iv", "v", "vi", "vii", "viii"]
ROWS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
]

Line = Callable[[int], str]


def _pdf(top: Line | None = None, bottom: Line | None = None, top_y: Callable[[int], float] | None = None) -> bytes:
    """Eight pages of plain text; ``top`` and ``bottom`` give each page's first and last line
    (``top_y``: the first line's height on each page, 60 points below the top edge by default). A tab
    parts a line's left text from its text set flush right, as a header's fields are."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    for page in range(1, PAGES + 1):
        pdf.setFont("Helvetica", 11)
        if top is not None:
            _draw(pdf, top(page), top_y(page) if top_y else HEIGHT - 60)
        for row in range(12):
            word = ("alpha", "beta", "gamma", "delta", "omega", "sigma")[(row + page) % 6]
            pdf.drawString(72, HEIGHT - 130 - row * 16, f"The {word} rule applies to the {ROWS[row]} row here.")
        if bottom is not None:
            _draw(pdf, bottom(page), 40)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def _draw(pdf: canvas.Canvas, text: str, y: float) -> None:
    if "\t" in text:
        left, right = text.split("\t")
        pdf.drawString(72, y, left)
        pdf.drawRightString(WIDTH - 72, y, right)
    else:
        pdf.drawCentredString(WIDTH / 2, y, text) if y < 100 else pdf.drawString(72, y, text)


def _lines(data: bytes) -> list[str]:
    return parse_bytes(data, "contract.pdf").text.split("\n")


def _shown(label: str, lines: list[str]) -> bool:
    """Whether ``label`` is in the text as words of its own (a page number may join a paragraph)."""
    return re.search(rf"(?<!\w){re.escape(label)}(?!\w)", "\n".join(lines)) is not None


TEXT_LINES: dict[str, Line] = {
    "numbered heading without a dot": lambda page: f"{page} {TITLES[page - 1]}",
    "decimal clause number": lambda page: f"Clause 4.{page} Payment terms",
    "subsection number": lambda page: f"2.{page} Returns and refunds",
    "article with a roman number": lambda page: f"Article {ROMAN[page - 1].upper()} Duties of the parties",
    "parenthesised item": lambda page: f"({page}) The supplier delivers the goods.",
}


@pytest.mark.parametrize("top", TEXT_LINES.values(), ids=TEXT_LINES.keys())
def test_a_numbered_line_of_the_text_at_the_top_of_each_page_is_kept(top: Line) -> None:
    lines = _lines(_pdf(top=top, bottom=lambda page: f"- {page} -"))
    for page in range(1, PAGES + 1):
        assert any(line.startswith(top(page)) for line in lines), (page, lines[:6])
        assert not _shown(f"- {page} -", lines)  # the page numbers still go


def test_the_same_line_at_different_heights_is_text() -> None:
    # a form's first item on every page, set where the page's content puts it: not page furniture
    item = "1. Remove the cover and check the seal."
    lines = _lines(_pdf(top=lambda page: item, top_y=lambda page: HEIGHT - 60 - 5 * page))
    assert lines.count(item) == PAGES


PAGE_NUMBER_LINES: dict[str, Line] = {
    "roman": lambda page: ROMAN[page - 1],
    "roman with Page": lambda page: f"Page {ROMAN[page - 1]}",
    "roman between dashes": lambda page: f"– {ROMAN[page - 1]} –",
    "arabic between dashes": lambda page: f"- {page} -",
    "of the pages": lambda page: f"{page} / {PAGES}",
    "Word's bar": lambda page: f"{page} | Page",
}


@pytest.mark.parametrize("bottom", PAGE_NUMBER_LINES.values(), ids=PAGE_NUMBER_LINES.keys())
def test_page_number_lines_are_dropped(bottom: Line) -> None:
    lines = _lines(_pdf(bottom=bottom))
    assert not [page for page in range(1, PAGES + 1) if _shown(bottom(page), lines)], lines
    assert _shown("The delta rule applies to the first row here.", lines)


def test_roman_front_matter_and_arabic_body_are_both_page_numbers() -> None:
    # LaTeX's \frontmatter, Word's section numbering: i-iii, then 1-5 in the same place
    numbers = [*ROMAN[:3], *map(str, range(1, 6))]
    lines = _lines(_pdf(bottom=lambda page: numbers[page - 1]))
    assert not [number for number in numbers if _shown(number, lines)], lines


def test_running_heads_with_a_title_and_the_page_number_are_dropped() -> None:
    # a two-sided book's heads (LaTeX "headings", texinfo): the page number set apart on the outside
    def head(page: int) -> str:
        chapter = "CHAPTER 2. INSTALLATION" if page < 5 else "CHAPTER 3. USAGE"
        return f"{page}\t{chapter}" if page % 2 == 0 else f"{chapter}\t{page}"

    lines = _lines(_pdf(top=head))
    assert not [line for line in lines if "CHAPTER" in line], lines[:4]


def test_a_chromium_print_header_and_footer_are_dropped() -> None:
    lines = _lines(
        _pdf(
            top=lambda page: "12/2/26, 3:04 PM\tTravel expenses",
            bottom=lambda page: f"file:///home/me/travel.html\t{page}/{PAGES}",
        )
    )
    assert not [line for line in lines if "travel" in line.lower()], lines[:4]
