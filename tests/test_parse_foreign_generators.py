"""Documents from generators the parsers were not first written for (Javadoc, Doxygen, pandoc's
HTML to GFM, man pages formatted as text, pdflatex footnotes): each fixture is the generator's own
output for a small source committed beside it (tests/fixtures/generators/)."""

from __future__ import annotations

from pathlib import Path

from ingest.model import ParsedDocument
from ingest.parse import parse_file

GENERATORS = Path(__file__).parent / "fixtures" / "generators"


def headings(doc: ParsedDocument) -> list[tuple[str, int]]:
    return [(doc.text[b.start : b.end], b.level) for b in doc.blocks if b.kind == "heading"]


def section_of(doc: ParsedDocument, phrase: str) -> tuple[str, ...]:
    offset = doc.text.index(phrase)
    return next(b for b in doc.blocks if b.start <= offset < b.end).heading_path


def test_javadoc_member_lists_keep_their_headings() -> None:
    """Javadoc lays a class page out as lists whose items hold sections (h2, h3 per member): the
    headings are headings, not words inside one list block (javadoc of javadoc-lamp.java, JDK 25)."""
    doc = parse_file(GENERATORS / "html" / "javadoc-lamp.html")
    found = headings(doc)
    for heading in [("Constructor Details", 2), ("Method Details", 2), ("switchOn", 3), ("dim", 3)]:
        assert heading in found
    assert section_of(doc, "The bulb warms up") == ("Class Lamp", "Method Details", "switchOn")
    assert section_of(doc, "clamped to the dimmer") == ("Class Lamp", "Method Details", "dim")
    assert not any(b.kind == "list" and "Method Details" in doc.text[b.start : b.end] for b in doc.blocks)


def test_doxygen_permalink_symbol_is_not_in_the_heading() -> None:
    """Doxygen marks each member heading with a link to itself drawn as "◆" (doxygen 1.9 of doxygen-lamp.h)."""
    doc = parse_file(GENERATORS / "html" / "doxygen-lamp.html")
    found = [text for text, _ in headings(doc)]
    assert "LAMP_FULL" in found and "lamp_dim()" in found
    assert not any("◆" in text for text in found)
    assert section_of(doc, "two seconds after switching on")[-1] == "LAMP_FULL"


def test_pandoc_gfm_heading_anchor_tags_are_not_heading_text() -> None:
    """pandoc -f html -t gfm keeps a heading's anchor as `<span id=…></span>`: not shown, not in the heading."""
    doc = parse_file(GENERATORS / "markdown" / "pandoc-gfm-anchors.md")
    assert headings(doc) == [("Chapter 2. Users and Groups", 1), ("2.1 Static ids", 2)]
    assert section_of(doc, "allocated by base-passwd") == ("Chapter 2. Users and Groups", "2.1 Static ids")


def test_man_page_text_headings_set_left_of_the_text() -> None:
    """`man -l lampctl.1 | col -bx`: "NAME", "DESCRIPTION" … at the margin over their indented text."""
    doc = parse_file(GENERATORS / "text" / "lampctl.1.txt")
    assert headings(doc) == [
        ("NAME", 1),
        ("SYNOPSIS", 1),
        ("DESCRIPTION", 1),
        ("EXIT STATUS", 1),
        ("SEE ALSO", 1),
    ]
    assert section_of(doc, "warms up for two seconds") == ("DESCRIPTION",)
    assert section_of(doc, "switch the lamp off") == ("DESCRIPTION",)


def test_latex_footnote_marks_are_set_apart_and_keep_the_paragraph_whole() -> None:
    """pdflatex footnote marks (raised, smaller) after a word are not glued to it, and the text after a
    mark that pdfium broke its line at stays in the paragraph (make_pdfs.py: latex-footnotes.pdf)."""
    doc = parse_file(GENERATORS / "documents" / "latex-footnotes.pdf")
    assert "release cadence 1 ." in doc.text
    assert "the release process 2. Older branches are abandoned." in doc.text
    assert "(Review 34, Approved)" in doc.text
    paragraph = next(b for b in doc.blocks if "release process" in doc.text[b.start : b.end])
    assert "Older branches are abandoned" in doc.text[paragraph.start : paragraph.end]
    assert "1 See the calendar. 2 Published by the vendor." in doc.text
