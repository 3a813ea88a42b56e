"""The chunkers, on hand-made parsed documents: exact texts, offsets, IDs and records."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from ingest.chunk import chunk_document
from ingest.model import Block, DocumentMeta, ParsedDocument, SourceDocument, chunk_id
from ingest.settings import ChunkSettings

META = DocumentMeta(
    doc_id="warranty-policy",
    version="5",
    title="Warranty policy",
    access="partner",
    effective_from=date(2026, 1, 1),
    effective_to=None,
    tags=("warranty", "returns"),
)


def parsed(parts: list[tuple[str, str]], page_starts: tuple[int, ...] = (), fmt: str = "markdown") -> ParsedDocument:
    """A parsed document from (kind, text) parts joined by blank lines; kind "h1".."h6" is a heading."""
    text, blocks, path = "", [], []
    for kind, body in parts:
        start = len(text) + (2 if text else 0)
        text = f"{text}\n\n{body}" if text else body
        end = len(text)
        if kind.startswith("h"):
            level = int(kind[1:])
            path = [(lvl, title) for lvl, title in path if lvl < level] + [(level, body)]
            blocks.append(Block("heading", start, end, level, tuple(t for _, t in path)))
        else:
            blocks.append(Block(kind, start, end, 0, tuple(t for _, t in path)))
    doc = ParsedDocument(format=fmt, text=text, blocks=tuple(blocks), page_starts=page_starts)
    if page_starts:
        doc = replace(doc, blocks=tuple(replace(b, pages=doc.pages_of(b.start, b.end)) for b in blocks))
    return doc


def source(doc: ParsedDocument, meta: DocumentMeta = META) -> SourceDocument:
    return SourceDocument(source="documents/warranty.md", sha256="ab" * 32, parsed=doc, meta=meta)


def spans(chunks) -> list[tuple[int, int, str]]:
    return [(c.start, c.end, c.text) for c in chunks]


SMALL = parsed(
    [
        ("h1", "Returns"),
        ("paragraph", "Items may be returned within 30 days. Keep the receipt."),
        ("h2", "Refunds"),
        ("paragraph", "Refunds go to the original card."),
        ("h2", "Exchanges"),
        ("paragraph", "Exchanges are free."),
    ]
)


def words(prefix: str, n: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(1, n + 1))


def sentence(prefix: str, n: int) -> str:
    """A sentence of n words that starts upper-case and ends with a full stop."""
    return f"{prefix.upper()}{words(prefix, n)[len(prefix):]}."


def test_chunk_id_matches_the_spec_example():
    assert chunk_id("warranty-policy", "5", 1517, 1967).startswith("a4dc9ec49818")
    assert len(chunk_id("warranty-policy", "5", 1517, 1967)) == 20


def test_structure_small_document_gives_one_chunk_per_section():
    chunks = chunk_document(source(SMALL), ChunkSettings("structure", 12))
    assert spans(chunks) == [
        (0, 64, "Returns\n\nItems may be returned within 30 days. Keep the receipt."),
        (66, 107, "Refunds\n\nRefunds go to the original card."),
        (109, 139, "Exchanges\n\nExchanges are free."),
    ]
    assert [c.section for c in chunks] == ["Returns", "Refunds", "Exchanges"]
    assert [c.sections for c in chunks] == [("Returns",), ("Refunds",), ("Exchanges",)]
    assert [c.heading_path for c in chunks] == [("Returns",), ("Returns", "Refunds"), ("Returns", "Exchanges")]
    assert [c.word_count for c in chunks] == [11, 7, 4]
    assert [c.position for c in chunks] == [0, 1, 2]
    assert all(c.chunker == "structure:12" for c in chunks)


def test_fixed_small_document_cuts_every_n_words_ignoring_structure():
    chunks = chunk_document(source(SMALL), ChunkSettings("fixed", 10))
    assert spans(chunks) == [
        (0, 55, "Returns\n\nItems may be returned within 30 days. Keep the"),
        (56, 129, "receipt.\n\nRefunds\n\nRefunds go to the original card.\n\nExchanges\n\nExchanges"),
        (130, 139, "are free."),
    ]
    assert [c.word_count for c in chunks] == [10, 10, 2]
    assert chunks[1].section == "Returns"  # it starts inside the first section's paragraph
    assert chunks[1].sections == ("Returns", "Refunds", "Exchanges")
    assert chunks[1].heading_path == ("Returns",)
    assert (chunks[2].section, chunks[2].sections) == ("Exchanges", ("Exchanges",))
    assert all(c.chunker == "fixed:10" for c in chunks)


def test_overlap_small_document_slides_size_minus_overlap_words():
    chunks = chunk_document(source(SMALL), ChunkSettings("overlap", 10, 4))
    assert spans(chunks) == [
        (0, 55, "Returns\n\nItems may be returned within 30 days. Keep the"),
        (38, 92, "30 days. Keep the receipt.\n\nRefunds\n\nRefunds go to the"),
        (75, 139, "Refunds go to the original card.\n\nExchanges\n\nExchanges are free."),
    ]
    assert [c.section for c in chunks] == ["Returns", "Returns", "Refunds"]
    assert chunks[2].sections == ("Refunds", "Exchanges")
    assert all(c.chunker == "overlap:10:4" for c in chunks)


def test_overlap_last_window_ends_at_the_last_word():
    doc = parsed([("paragraph", words("w", 25))])
    chunks = chunk_document(source(doc), ChunkSettings("overlap", 10, 3))
    windows = (range(1, 11), range(8, 18), range(15, 25), range(22, 26))
    assert [c.text for c in chunks] == [" ".join(f"w{i}" for i in window) for window in windows]


def test_overlap_adds_no_window_contained_in_the_previous_one():
    doc = parsed([("paragraph", words("w", 20))])
    chunks = chunk_document(source(doc), ChunkSettings("overlap", 10, 0))
    assert [c.text for c in chunks] == [words("w", 10), " ".join(f"w{i}" for i in range(11, 21))]
    chunks = chunk_document(source(doc), ChunkSettings("overlap", 15, 5))
    assert [(c.text.split()[0], c.text.split()[-1]) for c in chunks] == [("w1", "w15"), ("w11", "w20")]


def test_record_fields_are_copied_from_the_document():
    chunk = chunk_document(source(SMALL), ChunkSettings())[0]
    assert chunk.chunk_id == chunk_id("warranty-policy", "5", 0, 64)
    assert (chunk.doc_id, chunk.version, chunk.title, chunk.access) == (
        "warranty-policy", "5", "Warranty policy", "partner")
    assert (chunk.effective_from, chunk.effective_to) == ("2026-01-01", None)
    assert (chunk.status, chunk.superseded_by, chunk.tags) == ("current", None, ("warranty", "returns"))
    assert (chunk.source, chunk.source_sha256) == ("documents/warranty.md", "ab" * 32)
    assert chunk.chunker == "structure:200"
    assert chunk.pages == ()


LONG_SECTION = parsed(
    [
        ("h1", "Coverage"),
        ("paragraph", sentence("a", 8)),
        ("paragraph", f"{sentence('b', 10)} {sentence('c', 10)} {sentence('d', 10)}"),
        ("table", "| e1 | e2 | e3 |\n| e4 | e5 | e6 |"),
        ("paragraph", sentence("f", 45)),
    ]
)


def test_structure_splits_a_long_section_at_paragraphs_then_sentences_then_words():
    chunks = chunk_document(source(LONG_SECTION), ChunkSettings("structure", 20))
    text = LONG_SECTION.text
    assert [c.text for c in chunks] == [
        f"Coverage\n\n{sentence('a', 8)}\n\n{sentence('b', 10)}",  # packed up to a sentence boundary
        f"{sentence('c', 10)} {sentence('d', 10)}",
        "| e1 | e2 | e3 |\n| e4 | e5 | e6 |\n\nF1 f2 f3 f4 f5 f6",  # table whole, then words
        words("f", 26)[len(words("f", 6)) + 1:],
        words("f", 45)[len(words("f", 26)) + 1:] + ".",
    ]
    assert [c.word_count for c in chunks] == [19, 20, 20, 20, 19]
    assert all(c.text == text[c.start:c.end] for c in chunks)
    assert all(c.section == "Coverage" and c.sections == ("Coverage",) for c in chunks)
    assert all(c.heading_path == ("Coverage",) for c in chunks)


def test_structure_does_not_cut_sentences_at_abbreviations_or_decimals():
    body = "The fee is 3.5 percent of the price, e.g. for cards. Refunds take five days! Ask us? 2 forms apply."
    doc = parsed([("paragraph", body)])
    chunks = chunk_document(source(doc), ChunkSettings("structure", 12))
    assert [c.text for c in chunks] == [
        "The fee is 3.5 percent of the price, e.g. for cards.",
        "Refunds take five days! Ask us? 2 forms apply.",
    ]


def test_structure_keeps_a_table_whole_when_it_fits_and_splits_it_at_lines_when_not():
    table = "\n".join(f"| {words(f'r{row}c', 6)} |" for row in range(1, 6))  # 5 lines of 8 words
    doc = parsed([("h2", "Prices"), ("paragraph", sentence("p", 15)), ("table", table)])
    chunks = chunk_document(source(doc), ChunkSettings("structure", 40))
    assert [c.text for c in chunks] == [f"Prices\n\n{sentence('p', 15)}", table]
    chunks = chunk_document(source(doc), ChunkSettings("structure", 20))
    lines = table.split("\n")
    assert [c.text for c in chunks] == [
        f"Prices\n\n{sentence('p', 15)}",
        "\n".join(lines[:2]),
        "\n".join(lines[2:4]),
        lines[4],
    ]


def test_structure_never_crosses_a_section_and_text_before_the_first_heading_is_its_own():
    doc = parsed([("paragraph", "Read this first."), ("h1", "Scope"), ("paragraph", "All products."),
                  ("h2", "Limits"), ("paragraph", "None at all.")])
    chunks = chunk_document(source(doc), ChunkSettings("structure", 200))
    assert [(c.text, c.section, c.heading_path) for c in chunks] == [
        ("Read this first.", "", ()),
        ("Scope\n\nAll products.", "Scope", ("Scope",)),
        ("Limits\n\nNone at all.", "Limits", ("Scope", "Limits")),
    ]
    assert chunks[0].sections == ()


def test_structure_never_leaves_a_heading_alone_at_the_end_of_a_chunk():
    # 4 heading words + an 18-word paragraph exceed 20, yet the heading goes with the paragraph
    doc = parsed([("h1", "Big heading words here"), ("paragraph", sentence("a", 18)), ("paragraph", sentence("b", 5))])
    chunks = chunk_document(source(doc), ChunkSettings("structure", 20))
    assert [c.text for c in chunks] == [f"Big heading words here\n\n{sentence('a', 18)}", sentence("b", 5)]
    assert [c.section for c in chunks] == ["Big heading words here"] * 2


def test_a_title_straight_over_its_first_subsection_opens_that_section():
    doc = parsed([("h1", "Policy"), ("h2", "Scope"), ("paragraph", "All products."), ("h2", "Returns"), ("paragraph", "Thirty days.")])
    chunks = chunk_document(source(doc), ChunkSettings("structure", 200))
    # Its text sits under "Scope": that is the section a citation names (not the title above it).
    assert [(c.text, c.section, c.sections, c.heading_path) for c in chunks] == [
        ("Policy\n\nScope\n\nAll products.", "Scope", ("Policy", "Scope"), ("Policy", "Scope")),
        ("Returns\n\nThirty days.", "Returns", ("Returns",), ("Policy", "Returns")),
    ]


def test_an_empty_section_between_siblings_stays_its_own_chunk():
    doc = parsed([("h2", "Empty"), ("h2", "Full"), ("paragraph", "Text.")])
    chunks = chunk_document(source(doc), ChunkSettings("structure", 200))
    assert [c.text for c in chunks] == ["Empty", "Full\n\nText."]


def test_text_outside_every_block_is_still_chunked_under_the_preceding_heading():
    text = "Intro\n\nFirst part.\n\n* * *\n\nSecond part."
    blocks = (Block("heading", 0, 5, 1, ("Intro",)), Block("paragraph", 7, 18, 0, ("Intro",)),
              Block("paragraph", 27, 39, 0, ("Intro",)))
    doc = ParsedDocument("markdown", text, blocks)
    chunks = chunk_document(source(doc), ChunkSettings("structure", 200))
    assert [(c.start, c.end, c.section) for c in chunks] == [(0, 39, "Intro")]


def test_a_document_without_words_has_no_chunks():
    assert chunk_document(source(ParsedDocument("text", "  \n\n ", ())), ChunkSettings()) == []


def test_chunking_is_deterministic_and_ids_depend_on_the_version():
    settings = ChunkSettings("structure", 20)
    first = chunk_document(source(LONG_SECTION), settings)
    assert chunk_document(source(LONG_SECTION), settings) == first
    bumped = chunk_document(source(LONG_SECTION, replace(META, version="6")), settings)
    assert [(c.start, c.end, c.text) for c in bumped] == [(c.start, c.end, c.text) for c in first]
    assert not {c.chunk_id for c in bumped} & {c.chunk_id for c in first}
    assert all(c.chunk_id == chunk_id("warranty-policy", "6", c.start, c.end) for c in bumped)


def test_an_identical_section_in_two_versions_gets_different_ids():
    v5 = parsed([("h1", "Scope"), ("paragraph", "All products.")])
    v6 = parsed([("h1", "New"), ("paragraph", "Added."), ("h1", "Scope"), ("paragraph", "All products.")])
    five = chunk_document(source(v5), ChunkSettings())
    six = chunk_document(source(v6, replace(META, version="6")), ChunkSettings())
    assert five[0].text == six[1].text == "Scope\n\nAll products."
    assert five[0].chunk_id != six[1].chunk_id


def test_pages_of_chunks_in_a_pdf_like_document():
    parts = [("paragraph", sentence("a", 10)), ("paragraph", sentence("b", 10)), ("paragraph", sentence("c", 10))]
    plain = parsed(parts)
    b_middle = plain.text.index("b6")
    c_start = plain.text.index("C1")
    doc = parsed(parts, page_starts=(0, b_middle, c_start), fmt="pdf")
    chunks = chunk_document(source(doc), ChunkSettings("fixed", 10))
    assert [c.pages for c in chunks] == [(1,), (1, 2), (3,)]
    chunks = chunk_document(source(doc), ChunkSettings("fixed", 12))
    assert [c.pages for c in chunks] == [(1,), (1, 2, 3), (3,)]
    assert chunk_document(source(doc), ChunkSettings("structure", 200))[0].pages == (1, 2, 3)


@pytest.mark.parametrize("chunker", ["structure", "fixed", "overlap"])
def test_large_document_is_chunked_quickly(chunker):
    import time

    parts = []
    for n in range(2000):
        parts += [("h2", f"Section {n}"), ("paragraph", " ".join([sentence("w", 12)] * 6))]
    doc = parsed(parts)  # ~1 MB of text, 2000 sections
    began = time.perf_counter()
    chunks = chunk_document(source(doc), ChunkSettings(chunker, 50, 10))
    assert time.perf_counter() - began < 10
    assert len(chunks) > 2000 if chunker == "structure" else len(chunks) > 100


def test_chunks_of_a_parsed_markdown_file():
    from ingest.parse import parse_bytes

    data = (b"# Title\n\nIntro text here. More text.\n\n## Part\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
            b"- one\n- two\n\n## Empty\n\n## Last\n\nThe end.\n")
    doc = parse_bytes(data, "x.md")
    chunks = chunk_document(source(doc), ChunkSettings())
    assert [c.text for c in chunks] == [doc.text[c.start:c.end] for c in chunks]
    assert [(c.section, c.heading_path) for c in chunks] == [
        ("Title", ("Title",)),
        ("Part", ("Title", "Part")),
        ("Empty", ("Title", "Empty")),
        ("Last", ("Title", "Last")),
    ]
    assert chunks[0].text.startswith("Title") and chunks[0].text.endswith("More text.")
    assert chunks[1].text.startswith("Part") and "1 | 2" in chunks[1].text and chunks[1].text.endswith("two")
    assert chunks[2].text == "Empty"
    assert chunks[3].text.endswith("The end.")


def test_a_chunk_record_as_json_is_every_field_in_declared_order() -> None:
    """Chunk.to_json is written out for speed: it must stay the generic record walk's JSON (every
    field, tuples as lists, the dataclass's order), or stores would hold another record."""
    from ingest.model import json_fields

    meta = replace(META, effective_to=date(2026, 12, 31), superseded_by=None)
    paged = replace(SMALL, page_starts=(0, 40), blocks=tuple(replace(b, pages=(1,)) for b in SMALL.blocks))
    chunks = chunk_document(source(paged), ChunkSettings(size=10)) + chunk_document(source(SMALL, meta), ChunkSettings())
    assert len(chunks) > 2 and any(chunk.pages for chunk in chunks)
    for chunk in chunks:
        expected = json_fields(chunk)
        assert list(chunk.to_json().items()) == list(expected.items())
        assert all(type(value) is not tuple for value in chunk.to_json().values())
