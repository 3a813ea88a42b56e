"""Properties every chunker keeps on random documents: exact spans, order, coverage, IDs."""

from __future__ import annotations

import re
from bisect import bisect_left
from datetime import date

from hypothesis import given, settings as hypothesis_settings, strategies as st

from ingest.chunk import chunk_document
from ingest.model import Block, DocumentMeta, ParsedDocument, SourceDocument
from ingest.settings import ChunkSettings

META = DocumentMeta(doc_id="doc", version="1", title="Doc", access="public", effective_from=date(2026, 1, 1))
TOKENS = ["alpha", "Beta", "gamma.", "Delta!", "eps?", "3.5", "e.g.", "Zeta.", "42", "|", "-", "ünï", "Ärger."]
KINDS = ["heading", "paragraph", "paragraph", "paragraph", "list", "table", "code"]
SEPARATORS = ["\n\n", "\n\n", "\n\n\n", " \n\n ", "\n\n---\n\n"]  # "---": text no block covers


@st.composite
def documents(draw) -> ParsedDocument:
    text, blocks, path = "", [], []
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(KINDS))
        size = draw(st.integers(1, 6) if kind == "heading" else st.integers(1, 120))
        tokens = draw(st.lists(st.sampled_from(TOKENS), min_size=size, max_size=size))
        joiners = draw(st.lists(st.sampled_from([" ", " ", " ", "\n", "  "]), min_size=size, max_size=size))
        body = "".join(tok + (joiners[i] if i < size - 1 else "") for i, tok in enumerate(tokens))
        if kind == "heading":
            body = " ".join(body.split())
        start = len(text) + (len(sep := draw(st.sampled_from(SEPARATORS))) if text else 0)
        text = f"{text}{sep}{body}" if text else body
        if kind == "heading":
            level = draw(st.integers(1, 3))
            path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, body)]
            blocks.append(Block("heading", start, len(text), level, tuple(t for _, t in path)))
        else:
            blocks.append(Block(kind, start, len(text), 0, tuple(t for _, t in path)))
    return ParsedDocument("markdown", text, tuple(blocks))


chunk_settings = st.builds(
    lambda chunker, size, share: ChunkSettings(chunker, size, int(size * share)),
    st.sampled_from(["structure", "fixed", "overlap"]),
    st.integers(10, 300),
    st.floats(0, 0.9),
)


def section_index(doc: ParsedDocument) -> list[tuple[int, int, int, Block]]:
    """(start, end, section number, block) for every block. Each heading opens a section,
    except one that comes straight under a shallower heading with nothing between them."""
    rows, number, open_heading_level = [], 0, None
    for block in doc.blocks:
        if block.kind == "heading":
            if open_heading_level is None or open_heading_level >= block.level:
                number += 1
            open_heading_level = block.level
        else:
            open_heading_level = None
        rows.append((block.start, block.end, number, block))
    return rows


@hypothesis_settings(max_examples=200, deadline=None)
@given(documents(), chunk_settings, st.integers(0, 1))
def test_every_chunker_keeps_its_invariants(doc, settings, small):
    if small:  # small sizes exercise the splitting paths more often
        settings = ChunkSettings(settings.chunker, 10, min(settings.overlap, 9))
    source = SourceDocument("documents/doc.md", "0" * 64, doc, META)
    chunks = chunk_document(source, settings)
    text = doc.text
    word_starts = [m.start() for m in re.finditer(r"\S+", text)]

    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    assert (len(chunks) == 0) == (len(word_starts) == 0)
    for c in chunks:
        assert c.text == text[c.start:c.end]
        assert c.text and not c.text[0].isspace() and not c.text[-1].isspace()
        assert c.word_count == len(c.text.split())
        assert c.section == (c.heading_path[-1] if c.heading_path else "")
        assert c.chunker == settings.describe()

    covered = set()
    for c in chunks:  # the indices of the words that start inside the chunk
        covered.update(range(bisect_left(word_starts, c.start), bisect_left(word_starts, c.end)))
    assert covered == set(range(len(word_starts)))

    if settings.chunker in ("structure", "fixed"):
        for before, after in zip(chunks, chunks[1:]):
            assert before.end <= after.start
    else:
        for before, after in zip(chunks, chunks[1:]):
            assert before.start < after.start and before.end < after.end
    if settings.chunker in ("fixed", "overlap"):
        assert all(c.word_count <= settings.size for c in chunks)

    if settings.chunker == "structure":
        rows = section_index(doc)
        for c in chunks:
            touched = [(number, block) for s, e, number, block in rows if s < c.end and e > c.start]
            assert len({number for number, _ in touched}) <= 1, "a chunk crosses a section"
            heading_words = 0
            if touched and touched[0][1].kind == "heading" and touched[0][1].start == c.start:
                leading = [block for _, block in touched]
                leading = leading[: next((i for i, b in enumerate(leading) if b.kind != "heading"), len(leading))]
                head = leading[-1]
                heading_words = sum(len(text[b.start:b.end].split()) for b in leading)
                if c.end == head.end:  # a heading ends the chunk only when its section is empty
                    later = [block for s, _, _, block in rows if s >= head.end]
                    assert not later or later[0].kind == "heading"
            assert c.word_count <= settings.size + heading_words
