"""Tagged PDFs: headings from the structure tree (H, H1-H6, role-mapped types), alone and with an
outline; hostile structure trees (cycles, depth, size) cost bounded work and never fail a parse.

The tagged documents come from real generators (LibreOffice with tagged export and no bookmarks,
Chromium's print-to-PDF), made by tests/fixtures/generators/make_pdfs.py. Their headings are set so
that font statistics alone get them wrong (a heading set like body text, a bold stand-alone line
that is no heading), so only the tags can give the expected structure.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    ArrayObject,
    BooleanObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    NumberObject,
    TextStringObject,
)

from ingest.model import ParsedDocument
from ingest.parse import parse_bytes, parse_file
from ingest.parse import pdf_tags
from ingest.parse.pdf_lines import OutlineEntry
from ingest.parse.pdf_tags import document_headings

DOCUMENTS = Path(__file__).parent / "fixtures" / "generators" / "documents"


def headings(doc: ParsedDocument) -> list[tuple[str, int]]:
    return [(doc.text[b.start : b.end], b.level) for b in doc.blocks if b.kind == "heading"]


def block_of(doc: ParsedDocument, phrase: str) -> tuple[str, tuple[str, ...]]:
    offset = doc.text.index(phrase)
    block = next(b for b in doc.blocks if b.start <= offset < b.end)
    return block.kind, block.heading_path


def outline_titles(name: str) -> list[str]:
    return [item.title for item in PdfReader(DOCUMENTS / name).outline if not isinstance(item, list)]


def test_libreoffice_tagged_export_without_bookmarks_takes_its_headings_from_the_tags() -> None:
    assert outline_titles("libreoffice-tagged.pdf") == []  # the structure tree is all there is
    doc = parse_file(DOCUMENTS / "libreoffice-tagged.pdf")
    assert headings(doc) == [
        ("Warranty terms", 1),
        ("What is covered", 2),
        ("Wear parts", 3),  # set in body size, not bold: only its H3 tag makes it a heading
        ("Making a claim", 2),
    ]
    # A bold stand-alone paragraph is text (fonts alone would make it a heading).
    assert block_of(doc, "Keep the receipt with the unit") == ("paragraph", ("Warranty terms", "What is covered"))
    assert block_of(doc, "Seals and impellers are wear parts.") == (
        "paragraph",
        ("Warranty terms", "What is covered", "Wear parts"),
    )
    # The bold header row stays the table's first row, under the section the table is in.
    kind, path = block_of(doc, "Warranty period")
    assert kind == "table" and path == ("Warranty terms", "What is covered", "Wear parts")
    assert "Part | Warranty period\nMotor | 24 months\nSeals | 6 months" in doc.text
    assert block_of(doc, "Making a claim")[1] == ("Warranty terms", "Making a claim")


def test_chromium_print_to_pdf_is_tagged_and_its_tags_give_the_headings() -> None:
    assert outline_titles("chromium-tagged.pdf") == []
    doc = parse_file(DOCUMENTS / "chromium-tagged.pdf")
    assert headings(doc) == [
        ("Expense claims", 1),
        ("Submitting a claim", 2),
        ("Lost receipts", 4),  # an h4 styled like body text
        ("Mileage rates", 2),
    ]
    assert block_of(doc, "Attach every receipt") == ("paragraph", ("Expense claims", "Submitting a claim"))
    assert block_of(doc, "A lost receipt is replaced by a signed statement.") == (
        "paragraph",
        ("Expense claims", "Submitting a claim", "Lost receipts"),
    )
    assert block_of(doc, "Rate per mile") == ("table", ("Expense claims", "Mileage rates"))
    assert "Vehicle | Rate per mile\nCar | 45p\nMotorcycle | 24p" in doc.text


def test_an_outline_shallower_than_the_tags_is_completed_by_them() -> None:
    """The outline lists only the top level; the tagged headings below it are kept, at their levels."""
    assert outline_titles("chromium-shallow-outline.pdf") == ["Expense claims"]
    shallow = parse_file(DOCUMENTS / "chromium-shallow-outline.pdf")
    tagged = parse_file(DOCUMENTS / "chromium-tagged.pdf")
    assert headings(shallow) == headings(tagged)
    assert block_of(shallow, "A lost receipt") == block_of(tagged, "A lost receipt")


def test_document_headings_prefers_the_outline_and_adds_deeper_tagged_headings_with_its_levels() -> None:
    outline = [OutlineEntry("Chapter 1 Pumps", 1, 1), OutlineEntry("Cover photo", 1, 1)]
    tagged = [
        OutlineEntry("Chapter 1 Pumps", 2, 1),  # the tags start at H2: the outline's level wins
        OutlineEntry("Checks", 3, 2),
        OutlineEntry("Checks", 3, 2),  # two sections of one page may share a title: both stay
        OutlineEntry("Impellers", 3, 3),
    ]
    assert document_headings(outline, tagged) == [
        OutlineEntry("Chapter 1 Pumps", 1, 1),
        OutlineEntry("Cover photo", 1, 1),
        OutlineEntry("Checks", 2, 2),
        OutlineEntry("Checks", 2, 2),
        OutlineEntry("Impellers", 2, 3),
    ]
    assert document_headings(outline, []) == outline
    assert document_headings([], tagged[1:]) == tagged[1:]


# ---------------------------------------------------------------- hand-built structure trees

BODY = "The pump must be switched off before any part of it is opened and checked by a technician."


def tagged_pdf(shape: str) -> bytes:
    """A one-page tagged PDF: a large "Pump care" line (MCID 0) and a body line (MCID 1), under a
    structure tree of the given shape."""
    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
    )
    content = DecodedStreamObject()
    content.set_data(
        b"/Chapter <</MCID 0>> BDC BT /F1 11 Tf 72 700 Td (Pump care) Tj ET EMC\n"
        b"/P <</MCID 1>> BDC BT /F1 11 Tf 72 680 Td (" + BODY.encode() + b") Tj ET EMC\n"
    )
    page[NameObject("/Contents")] = writer._add_object(content)
    page[NameObject("/StructParents")] = NumberObject(0)
    page_ref = page.indirect_reference

    def element(kind: str, kids: list) -> DictionaryObject:
        return DictionaryObject(
            {
                NameObject("/Type"): NameObject("/StructElem"),
                NameObject("/S"): NameObject(f"/{kind}"),
                NameObject("/Pg"): page_ref,
                NameObject("/K"): ArrayObject(kids),
            }
        )

    root = DictionaryObject({NameObject("/Type"): NameObject("/StructTreeRoot")})
    root_ref = writer._add_object(root)
    heading = element("Chapter", [NumberObject(0)])
    paragraph = element("P", [NumberObject(1)])
    heading_ref, paragraph_ref = writer._add_object(heading), writer._add_object(paragraph)
    top = element("Document", [heading_ref, paragraph_ref])
    top_ref = writer._add_object(top)
    parent = top_ref
    if shape == "deep":  # the document's content under 3,000 nested Div elements
        for _ in range(3000):
            div = element("Div", [parent])
            parent = writer._add_object(div)
    if shape == "cyclic":  # the heading and the document each other's kid
        heading[NameObject("/K")] = ArrayObject([NumberObject(0), top_ref])
        top[NameObject("/K")].append(top_ref)
    on_page = [heading_ref, paragraph_ref]
    if shape == "wide":  # 2,000 more headings listed for the page (each over the first line)
        extra = [writer._add_object(element("H1", [NumberObject(0)])) for _ in range(2_000)]
        top[NameObject("/K")] = ArrayObject([*extra, heading_ref, paragraph_ref])
        on_page += extra
    heading[NameObject("/P")], paragraph[NameObject("/P")], top[NameObject("/P")] = top_ref, top_ref, root_ref
    role_map = {"/Chapter": "/ChapterHead", "/ChapterHead": "/H1"}
    if shape == "role-cycle":
        role_map = {"/Chapter": "/ChapterHead", "/ChapterHead": "/Chapter"}
    root[NameObject("/K")] = ArrayObject([parent])
    root[NameObject("/RoleMap")] = DictionaryObject({NameObject(k): NameObject(v) for k, v in role_map.items()})
    root[NameObject("/ParentTree")] = writer._add_object(
        DictionaryObject(
            {NameObject("/Nums"): ArrayObject([NumberObject(0), ArrayObject(on_page)])}
        )
    )
    root[NameObject("/ParentTreeNextKey")] = NumberObject(1)
    writer._root_object[NameObject("/StructTreeRoot")] = root_ref
    writer._root_object[NameObject("/MarkInfo")] = DictionaryObject({NameObject("/Marked"): BooleanObject(True)})
    writer.add_metadata({"/Title": TextStringObject("Pump care")})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_custom_type_role_mapped_to_h1_in_two_steps_is_a_heading() -> None:
    doc = parse_bytes(tagged_pdf("plain"), "care.pdf")
    # "Pump care" is set in the body's size and weight: only its tag (Chapter → ChapterHead → H1) says heading.
    assert headings(doc) == [("Pump care", 1)]
    assert block_of(doc, BODY) == ("paragraph", ("Pump care",))


@pytest.mark.parametrize("shape", ["deep", "cyclic", "wide", "role-cycle"])
def test_hostile_structure_trees_never_fail_the_parse(shape: str) -> None:
    doc = parse_bytes(tagged_pdf(shape), "care.pdf")
    assert BODY in doc.text and "Pump care" in doc.text
    if shape == "role-cycle":  # a role map that goes round in circles maps to no heading
        assert headings(doc) == []


def test_a_tree_larger_than_the_walk_budget_is_read_no_further(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf_tags, "MAX_TAG_ELEMENTS", 1)  # the Document element, not its heading kid
    doc = parse_bytes(tagged_pdf("plain"), "care.pdf")
    assert headings(doc) == []
    assert BODY in doc.text and "Pump care" in doc.text
