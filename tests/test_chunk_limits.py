"""Limits the chunker enforces before any write, identically for every store: a chunk over
the byte limit is split between words, a token or heading over Lucene's term limit and a
document with too many chunks are refused with a reason naming what and where."""

from __future__ import annotations

import pytest

from ingest.chunk import ChunkLimitExceeded, chunk_document
from ingest.parse import parse_bytes
from ingest.settings import MAX_TERM_BYTES, ChunkSettings, SettingsError, settings_from_dict
from tests.test_chunk import META, parsed, source


def chunks_of(parts, settings=ChunkSettings()):
    doc = source(parsed(parts))
    return doc, chunk_document(doc, settings)


@pytest.mark.parametrize("chunker", ["structure", "fixed", "overlap"])
def test_a_huge_line_of_long_words_is_split_under_the_byte_limit(chunker):
    # 60 words of 30,000 bytes each on one line: under 200 words, it would be one 1.8 MB chunk.
    line = " ".join(f"{i:05d}" + "w" * 29_995 for i in range(60))
    settings = ChunkSettings(chunker, 200, 40)
    doc, chunks = chunks_of([("paragraph", line)], settings)
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk.text.encode("utf-8")) <= settings.max_chunk_bytes
        assert chunk.text == doc.parsed.text[chunk.start:chunk.end]
    assert [c.position for c in chunks] == list(range(len(chunks)))
    # every word is in some chunk
    covered = " ".join(c.text for c in chunks)
    assert all(f"{i:05d}" in covered for i in range(60))


def test_multibyte_text_is_measured_in_utf8_bytes():
    line = " ".join("ü" * 10_000 for _ in range(50))  # 20,000 bytes a word, 10,000 characters
    doc, chunks = chunks_of([("paragraph", line)])
    assert max(len(c.text.encode("utf-8")) for c in chunks) <= ChunkSettings().max_chunk_bytes
    assert max(len(c.text) for c in chunks) <= ChunkSettings().max_chunk_bytes // 2


def test_a_token_over_the_term_limit_is_refused_with_where_it_is():
    with pytest.raises(ChunkLimitExceeded) as refused:
        chunks_of([("h1", "Data"), ("paragraph", "before " + "A" * 40_000 + " after")])
    message = str(refused.value)
    assert "single token of 40000 bytes" in message and f"{MAX_TERM_BYTES}-byte term limit" in message
    assert "characters 13–40013" in message


def test_a_token_just_under_the_term_limit_is_kept_whole():
    token = "b" * MAX_TERM_BYTES
    doc, chunks = chunks_of([("paragraph", f"start {token} end")])
    assert any(token in c.text for c in chunks)


def test_a_heading_over_the_term_limit_is_refused():
    heading = " ".join(["word"] * 7_000)  # 34,999 bytes, every word short
    with pytest.raises(ChunkLimitExceeded, match="a heading of 34999 bytes"):
        chunks_of([("h1", heading), ("paragraph", "text under it")])


def test_too_many_chunks_is_refused_and_the_limit_is_configurable():
    parts = [p for i in range(50) for p in (("h2", f"Heading {i}"), ("paragraph", f"body {i}"))]
    assert len(chunks_of(parts)[1]) == 50
    with pytest.raises(ChunkLimitExceeded, match="too many chunks: 50, over the limit of 49 per document"):
        chunks_of(parts, ChunkSettings(max_chunks_per_document=49))


def test_markdown_with_a_flood_of_headings_is_refused_not_chunked():
    data = "".join(f"# h{i}\n\nx\n\n" for i in range(3_000)).encode()  # 3,000 tiny sections
    doc = source(parse_bytes(data, "flood.md"))
    with pytest.raises(ChunkLimitExceeded, match="too many chunks: 3000, over the limit of 2000"):
        chunk_document(doc, ChunkSettings(max_chunks_per_document=2_000))


def test_limits_are_read_from_ingest_toml_and_checked():
    settings = settings_from_dict({"chunking": {"max_chunk_bytes": 40_000, "max_chunks_per_document": 500}})
    assert (settings.chunking.max_chunk_bytes, settings.chunking.max_chunks_per_document) == (40_000, 500)
    # both are part of the fingerprint: one shapes chunks, the other decides whether a document is taken
    assert settings.chunking.describe() == "structure:200:bytes40000:chunks500"
    assert ChunkSettings().describe() == "structure:200"  # the default leaves stored records as they were
    with pytest.raises(SettingsError, match="above Lucene's term limit"):
        settings_from_dict({"chunking": {"max_chunk_bytes": 1000}})
    with pytest.raises(SettingsError, match="max_chunks_per_document 0 must be ≥ 1"):
        settings_from_dict({"chunking": {"max_chunks_per_document": 0}})
    with pytest.raises(SettingsError, match="whole number"):
        settings_from_dict({"chunking": {"max_chunk_bytes": "big"}})
