"""PDF parsing: information fields, running lines removed, headings, a table over a page break."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader, PdfWriter
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse import parse_bytes, read_metadata
from tests.helpers import pdf_with_xmp_packet, xmp_packet

WIDTH, HEIGHT = A4
TABLE = [("Product", "Years", "Region")] + [(f"Item {i}", str(i % 3 + 1), "EU") for i in range(1, 41)]


def make_policy_pdf() -> bytes:
    """Two pages: running header, "Page N of 2" footers, bold headings, a table over the break
    (its header row repeated on page 2)."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setTitle("Warranty Policy")
    pdf.setKeywords("access=staff; effective_from=2026-01-01")
    page = 1

    def chrome() -> None:
        pdf.setFont("Helvetica", 9)
        pdf.drawString(72, HEIGHT - 40, "ACME Corp - Internal")
        pdf.drawCentredString(WIDTH / 2, 30, f"Page {page} of 2")

    chrome()
    pdf.setFont("Helvetica-Bold", 18)
    pdf.drawString(72, HEIGHT - 90, "Warranty terms")
    pdf.setFont("Helvetica", 11)
    y = HEIGHT - 120
    for line in (
        "Every product carries a warranty of two years from the date",
        "of purchase. Claims must be regu-",
        "larly filed in writing.",
    ):
        pdf.drawString(72, y, line)
        y -= 14
    y -= 14
    pdf.setFont("Helvetica-Bold", 14)
    pdf.drawString(72, y, "Coverage table")
    y -= 24
    pdf.setFont("Helvetica", 11)
    for row in TABLE:
        if y < 500 and page == 1 and row[0] == "Item 20":
            pdf.showPage()
            page = 2
            chrome()
            pdf.setFont("Helvetica", 11)
            y = HEIGHT - 80
            for x, cell in zip((72, 250, 400), TABLE[0], strict=False):  # the header row, repeated
                pdf.drawString(x, y, cell)
            y -= 14
        for x, cell in zip((72, 250, 400), row, strict=False):
            pdf.drawString(x, y, cell)
        y -= 14
    y -= 14
    pdf.setFont("Helvetica-Bold", 14)
    pdf.drawString(72, y, "Contacts")
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, y - 24, "Write to support.")
    pdf.save()
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(buffer.getvalue())))
    writer.add_metadata({"/doc_id": "warranty-policy", "/Version": "5"})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def policy() -> ParsedDocument:
    return parse_bytes(make_policy_pdf(), "policy.pdf")


def test_blocks_kinds_paths_and_pages(policy: ParsedDocument) -> None:
    rows = "\n".join(" | ".join(row) for row in TABLE)
    terms, cov, contacts = ("Warranty terms",), ("Warranty terms", "Coverage table"), ("Warranty terms", "Contacts")
    outline = [(b.kind, policy.text[b.start : b.end], b.level, b.heading_path, b.pages) for b in policy.blocks]
    assert outline == [
        ("heading", "Warranty terms", 1, terms, (1,)),
        (
            "paragraph",
            "Every product carries a warranty of two years from the date of purchase. "
            "Claims must be regularly filed in writing.",
            0,
            terms,
            (1,),
        ),
        ("heading", "Coverage table", 2, cov, (1,)),
        ("table", rows, 0, cov, (1, 2)),
        ("heading", "Contacts", 2, contacts, (2,)),
        ("paragraph", "Write to support.", 0, contacts, (2,)),
    ]
    assert policy.text == "\n\n".join(text for _, text, *_ in outline)


def test_running_header_and_page_numbers_removed(policy: ParsedDocument) -> None:
    assert "ACME Corp" not in policy.text
    assert "Page 1" not in policy.text and "of 2" not in policy.text


def test_page_starts_split_the_table_at_the_page_break(policy: ParsedDocument) -> None:
    assert policy.page_starts[0] == 0
    second = policy.page_starts[1]
    assert policy.text[second:].startswith("Item 20 | 3 | EU\n")
    assert policy.text[:second].endswith("Item 19 | 2 | EU\n")
    table = policy.blocks[3]
    assert policy.pages_of(table.start, table.end) == (1, 2)


def test_information_fields(policy: ParsedDocument) -> None:
    assert policy.metadata["title"] == "Warranty Policy"
    assert policy.metadata["doc_id"] == "warranty-policy"
    assert policy.metadata["version"] == "5"
    assert policy.metadata["access"] == "staff"  # from /Keywords
    assert policy.metadata["effective_from"] == "2026-01-01"


def test_same_bytes_same_parse() -> None:
    data = make_policy_pdf()
    assert parse_bytes(data, "a.pdf") == parse_bytes(data, "a.pdf")


def test_encrypted_pdf_is_unreadable() -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_policy_pdf())))
    writer.encrypt("secret", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    with pytest.raises(UnreadableFile, match="encrypted PDF"):
        parse_bytes(out.getvalue(), "secret.pdf")


def test_pdf_without_text_is_unreadable() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.rect(100, 100, 200, 200, fill=1)
    pdf.showPage()
    pdf.save()
    with pytest.raises(UnreadableFile, match="PDF has no extractable text"):
        parse_bytes(buffer.getvalue(), "scan.pdf")


@pytest.mark.parametrize("data", [b"# Just markdown\n", b"%PDF-1.7\n garbage \x00\x01", b"%PDF-"])
def test_not_a_pdf(data: bytes) -> None:
    with pytest.raises(UnreadableFile, match="not a PDF"):
        parse_bytes(data, "fake.pdf")


def test_single_page_bullets_and_bold_body_heading() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setFont("Helvetica-Bold", 11)
    pdf.drawString(72, 760, "Eligibility")
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 740, "Who may claim:")
    pdf.drawString(72, 726, "\u2022 customers with a receipt")
    pdf.drawString(72, 712, "\u2022 resellers, within thirty days of")
    pdf.drawString(82, 698, "delivery")
    pdf.drawString(72, 670, "Anything else is refused.")
    pdf.save()
    doc = parse_bytes(buffer.getvalue(), "one.pdf")
    assert [(b.kind, doc.text[b.start : b.end], b.pages) for b in doc.blocks] == [
        ("heading", "Eligibility", (1,)),
        ("paragraph", "Who may claim:", (1,)),
        ("list", "\u2022 customers with a receipt\n\u2022 resellers, within thirty days of delivery", (1,)),
        ("paragraph", "Anything else is refused.", (1,)),
    ]
    assert doc.page_starts == (0,)


def hand_made_pdf(content: bytes, info: bytes | None = None, extra: tuple[bytes, ...] = ()) -> bytes:
    """A one-page PDF around a raw content stream (Helvetica as /F1, Helvetica-Bold as /F2),
    with ``info`` written verbatim as its document information dictionary (object 7) and the
    ``extra`` objects after it (8, 9, …; ``info`` given)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
    ]
    if info is not None:
        objects.append(info)
        objects.extend(extra)
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info_entry = b"/Info 7 0 R " if info is not None else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info_entry, xref)
    return out


def test_font_scaled_by_text_matrix() -> None:
    # "1 Tf" with the size in the text matrix, as many producers write it.
    content = b"""BT /F2 1 Tf 18 0 0 18 72 700 Tm (Big Title) Tj ET
BT /F1 1 Tf 11 0 0 11 72 670 Tm (Hello world this is body text) Tj ET
BT /F1 1 Tf 11 0 0 11 72 656 Tm (and more body text here) Tj ET
BT /F1 1 Tf 11 0 0 11 72 630 Tm (cell one) Tj ET BT /F1 1 Tf 11 0 0 11 300 630 Tm (cell two) Tj ET
BT /F1 1 Tf 11 0 0 11 72 616 Tm (cell three) Tj ET BT /F1 1 Tf 11 0 0 11 300 616 Tm (cell four) Tj ET
"""
    doc = parse_bytes(hand_made_pdf(content), "scaled.pdf")
    assert [(b.kind, doc.text[b.start : b.end], b.level) for b in doc.blocks] == [
        ("heading", "Big Title", 1),
        ("paragraph", "Hello world this is body text and more body text here", 0),
        ("table", "cell one | cell two\ncell three | cell four", 0),
    ]


def test_blank_first_page_starts_where_the_text_does() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.showPage()
    for text in ("Second page text.", "Third page text."):
        pdf.setFont("Helvetica", 11)
        pdf.drawString(72, 700, text)
        pdf.showPage()
    pdf.save()
    doc = parse_bytes(buffer.getvalue(), "blank-first.pdf")
    assert doc.text == "Second page text.\n\nThird page text."
    assert doc.page_starts == (0, 0, 19)
    assert [b.pages for b in doc.blocks] == [(2,), (3,)]


def test_one_page_header_and_page_number_removed() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setFont("Helvetica", 8)
    pdf.drawString(56, HEIGHT - 34, "Northwind Marine")
    pdf.drawCentredString(WIDTH / 2, 28, "Page 1 of 1")
    pdf.setFont("Helvetica-Bold", 18)
    pdf.drawString(62, HEIGHT - 86, "Safety Recall")
    pdf.setFont("Helvetica", 10)
    pdf.drawString(62, HEIGHT - 110, "Northwind Marine is recalling engines.")
    pdf.save()
    doc = parse_bytes(buffer.getvalue(), "recall.pdf")
    assert doc.text == "Safety Recall\n\nNorthwind Marine is recalling engines."


def test_a_field_given_twice_with_different_values_is_refused():
    import io

    from pypdf import PdfWriter
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    c.setTitle("The Draft Title")  # (a placeholder such as "Untitled" is no title: test_pdf_placeholder_title)
    c.setKeywords("doc_id=two-titles; title=The Real Title; version=2;")
    c.drawString(72, 720, "Some text on the page.")
    c.save()
    with pytest.raises(
        UnreadableFile,
        match="PDF metadata gives title twice: 'The Draft Title' in the document information and 'The Real Title' in "
        "/Keywords",
    ):
        parse_bytes(buf.getvalue(), "x.pdf")
    writer = PdfWriter(clone_from=io.BytesIO(buf.getvalue()))
    writer.add_metadata({"/Title": "The Real Title", "/version": "2"})
    out = io.BytesIO()
    writer.write(out)
    assert parse_bytes(out.getvalue(), "x.pdf").metadata["title"] == "The Real Title"  # same value twice is fine


@pytest.mark.parametrize(
    ("entries", "given"),
    [
        (b"/access (public) /access (staff)", ["public", "staff"]),  # pypdf keeps the first, MuPDF the last
        (b"/Access (public) % a comment\n/access (staff)", ["public", "staff"]),  # one field once lowercased
    ],
)
def test_a_key_given_twice_in_the_information_dictionary_is_a_problem(entries: bytes, given: list[str]) -> None:
    from ingest.metadata import resolve_metadata
    from ingest.settings import Settings

    info = b"<< /Title (Minutes) /doc_id (minutes) /version (1) " + entries + b" >>"
    pdf = hand_made_pdf(b"BT /F1 12 Tf 72 700 Td (Board minutes: layoffs planned.) Tj ET", info)
    metadata = parse_bytes(pdf, "dupkey.pdf").metadata
    assert metadata["access"] == given
    meta, problems, _ = resolve_metadata("dupkey.pdf", metadata, None, Settings())
    assert meta is None
    assert problems == ["dupkey.pdf: access: given 2 times: ['public', 'staff']"]
    single = parse_bytes(
        hand_made_pdf(b"BT /F1 12 Tf 72 700 Td (Minutes.) Tj ET", info.replace(b"/access (staff)", b"")), "x.pdf"
    )
    assert single.metadata["access"] == "public"


@pytest.mark.parametrize("entries", [b"/Title (LaTeX News) /Title ()", b"/Title () /Title (LaTeX News)"])
def test_an_empty_repeat_of_a_key_declares_nothing(entries: bytes) -> None:
    """hyperref writes `/Title (LaTeX News)` and later `/Title ()` in one dictionary (49 TeX Live
    manuals): the empty value gives nothing, so the title stands and nothing is rejected."""
    info = b"<< " + entries + b" /doc_id (news) /version (1) /access (public) >>"
    pdf = hand_made_pdf(b"BT /F1 12 Tf 72 700 Td (News of the release.) Tj ET", info)
    assert parse_bytes(pdf, "news.pdf").metadata["title"] == "LaTeX News"


def test_metadata_objects_that_are_not_text_stay_structured_for_the_checks():
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, NumberObject

    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    c.drawString(72, 720, "Some text on the page.")
    c.save()
    writer = PdfWriter(clone_from=io.BytesIO(buf.getvalue()))
    writer.add_metadata({"/version": "1"})
    info = writer._info.get_object()
    info[NameObject("/Title")] = ArrayObject([NumberObject(1), NumberObject(2)])
    info[NameObject("/doc_id")] = NumberObject(7)
    info[NameObject("/tags")] = DictionaryObject({NameObject("/a"): NumberObject(1)})
    out = io.BytesIO()
    writer.write(out)
    metadata = parse_bytes(out.getvalue(), "x.pdf").metadata
    # a number is its text as written (test_pdf_info_numbers); inside an array or dictionary it stays a number
    assert (metadata["title"], metadata["doc_id"], metadata["tags"]) == ([1, 2], "7", {"/a": 1})


def test_a_document_of_one_alike_line_a_page_is_kept_not_stripped_to_nothing():
    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    for page in range(1, 4):
        c.drawString(72, 720, f"Page {page} text about torque settings for the engine.")
        c.showPage()
    c.save()
    doc = parse_bytes(buf.getvalue(), "x.pdf")
    assert "Page 3 text about torque settings for the engine." in doc.text


def test_line_end_hyphen_kept_where_the_hyphenated_word_is_used_elsewhere() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, invariant=1)
    pdf.setFont("Helvetica", 11)
    for y, line in (
        (700, "The unit is self-"),
        (686, "contained; every self-contained unit is regu-"),
        (672, "larly tested."),
    ):
        pdf.drawString(72, y, line)
    pdf.save()
    doc = parse_bytes(buffer.getvalue(), "hyphens.pdf")
    # "selfcontained" is nowhere in the document and "self-contained" is: the hyphen is the
    # word's; "regularly" is an ordinary word broken at the line end.
    assert doc.text == "The unit is self-contained; every self-contained unit is regularly tested."


def _with_xmp_titles(*items: str) -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(hand_made_pdf(b"BT /F1 12 Tf 72 700 Td (Minutes.) Tj ET")))
    packet = xmp_packet(
        '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        + "".join(f"<dc:title><rdf:Alt>{item}</rdf:Alt></dc:title>" for item in items)
        + "</rdf:Description>"
    )
    return pdf_with_xmp_packet(writer, packet)


def test_an_xmp_title_given_twice_in_one_language_keeps_both_values() -> None:
    def title(*items: str) -> object:
        return parse_bytes(_with_xmp_titles(*items), "x.pdf").metadata.get("title")

    one = '<rdf:li xml:lang="x-default">Minutes</rdf:li>'
    assert title(one) == "Minutes"
    assert title(one + '<rdf:li xml:lang="de">Protokoll</rdf:li>') == "Minutes"  # languages are not repeats
    # pypdf's dc_title keeps the last x-default silently; both go to the "given 2 times" problem
    assert title(one + '<rdf:li xml:lang="x-default">Layoffs</rdf:li>') == ["Minutes", "Layoffs"]
    assert title(one, '<rdf:li xml:lang="x-default">Layoffs</rdf:li>') == ["Minutes", "Layoffs"]
    assert title(one, one) == "Minutes"  # the same value twice is one value


def test_word_counts_for_line_end_hyphens_match_counting_every_word() -> None:
    """The hyphen decisions count a hyphenated word only in the lines holding a hyphen, and a
    plain word by searching until enough were asked: both must give every word's true count."""
    from collections import Counter

    from ingest.parse.pdf_running import _WORD, SEARCHES_BEFORE_SPLITTING, _WordCounts

    lines = [
        "Self-Contained units; a self-contained unit is SELF-CONTAINED.",
        "selfcontained? No: re-entry, re-\u00e9crit, Stra\u00dfe-Bahn and strasse-bahn; x-1 is no word.",
        "well-known-fact and well--known are words of another shape; -leading and trailing-",
    ] + [f"word{n} alpha{n % 7}beta gamma-delta{n % 3} epsilon" for n in range(3 * SEARCHES_BEFORE_SPLITTING)]
    text = "\n".join(lines)
    truth = Counter(word.casefold() for word in _WORD.findall(text))
    asked = ["self-contained", "selfcontained", "re-entry", "re-\u00e9crit", "stra\u00dfe-bahn", "strasse-bahn"]
    asked += ["well-known-fact", "well-known", "well", "known", "leading", "trailing", "x-1", "missing-word"]
    asked += [f"alpha{n}beta" for n in range(7)] + ["gamma-delta", "gamma", "delta", "epsilon", "word"]
    asked += [f"plain{n}" for n in range(2 * SEARCHES_BEFORE_SPLITTING)]  # past the searches: split once
    counts = _WordCounts(text)
    assert {word: counts[word] for word in asked} == {word: truth[word] for word in asked}
    # (Straße folds to strasse)
    assert counts["self-contained"] == 3 and counts["strasse-bahn"] == 2 and counts["well-known"] == 0


def test_outline_titles_compare_ascii_and_other_lines_alike() -> None:
    from ingest.parse.pdf import _NON_ALNUM, _comparable

    for text in (
        "3.1 Caf\u00e9 \u201cquotes\u201d",
        "Chapter 2: The_End",
        "A",
        "Stra\u00dfe 12",
        "\u2014",
        "x86-64 ABI (v2)",
    ):
        whole = _NON_ALNUM.sub("", text).casefold()
        assert whole in _comparable(text) or not whole


@pytest.mark.parametrize(
    ("info", "fields"),
    [
        # the dictionary heads a stream pypdf cannot read (no /Length, no line end): pypdf refuses it,
        # so nothing of it is taken, though its entries alone would read; pdfium reads access
        # public there, so the file is refused as ambiguous (None), not indexed without it
        (b"<< /Title (Minutes) /access (public) >>\nstreamX", None),
        # a well-formed stream's dictionary: pypdf reads it, and a key given twice keeps both values
        (
            b"<< /Title (Minutes) /access (public) /access (staff) /Length 3 >>\nstream\nabc\nendstream",
            {"title": "Minutes", "access": ["public", "staff"], "length": "3"},  # a number as written
        ),
    ],
)
def test_an_information_dictionary_pypdf_refuses_gives_no_fields(info: bytes, fields: dict[str, object] | None) -> None:
    pdf = hand_made_pdf(b"BT /F1 12 Tf 72 700 Td (Board minutes.) Tj ET", info)
    if fields is None:
        for read in (parse_bytes, read_metadata):
            with pytest.raises(UnreadableFile, match="ambiguous: access: not given as pypdf reads the file, 'public'"):
                read(pdf, "minutes.pdf")
        return
    assert parse_bytes(pdf, "minutes.pdf").metadata == fields
    assert read_metadata(pdf, "minutes.pdf") == fields
