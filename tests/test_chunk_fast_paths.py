"""The chunker's fast paths give exactly what their plain definitions give.

Word counts by ``str.split`` per span, counts remembered from a chunk's parts, and the term
check's window scan are shortcuts; here each is held against the definition it replaces
(``re.finditer(r"\\S+")`` offsets with bisection, the long-run regex) on text that mixes every
Unicode white space character with words, and on blocks that touch, overlap or cut words.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from datetime import date

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

import ingest.chunk as chunk_module
from ingest.chunk import ChunkLimitExceeded, WordIndex, _may_hold_long_run, check_terms, chunk_document
from ingest.model import Block, DocumentMeta, ParsedDocument, SourceDocument
from ingest.settings import MAX_TERM_BYTES, ChunkSettings

WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
META = DocumentMeta(doc_id="doc", version="1", title="Doc", access="public", effective_from=date(2026, 1, 1))
WORDS = ["alpha", "Beta.", "ünï", "Ärger!", "3.5", "e.g.", "Zeta?", "x", "日本語", "—", "a-b", "Q."]
KINDS = ["heading", "paragraph", "paragraph", "list", "table", "code", "note", "definition"]


class PlainWordIndex:
    """The definition: every ``\\S+`` match's offsets, counted by bisection."""

    def __init__(self, text: str) -> None:
        matches = list(re.finditer(r"\S+", text))
        self.starts = [m.start() for m in matches]
        self.ends = [m.end() for m in matches]

    @classmethod
    def of(cls, text: str) -> PlainWordIndex:
        return cls(text)

    def __len__(self) -> int:
        return len(self.starts)

    def count(self, start: int, end: int) -> int:
        if end <= start:
            return 0
        n = bisect_left(self.starts, end) - bisect_left(self.starts, start)
        before = bisect_right(self.starts, start) - 1
        if before >= 0 and self.starts[before] < start < self.ends[before]:
            n += 1
        return n

    def at_most(self, start: int, end: int, limit: int) -> bool:
        return self.count(start, end) <= limit

    def remember(self, start: int, end: int, count: int) -> None:
        assert count == self.count(start, end), (start, end, count)

    def spans(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        first = max(bisect_right(self.starts, start) - 1, 0)
        for i in range(first, bisect_left(self.starts, end)):
            s, e = max(self.starts[i], start), min(self.ends[i], end)
            if s < e:
                yield s, e


def test_the_regex_and_str_agree_on_what_white_space_is() -> None:
    # The fast paths split with str.split / str.isspace where the definition uses \s and \S.
    assert [c for c in map(chr, range(sys.maxunicode + 1)) if re.fullmatch(r"\s", c)] == WHITESPACE


texts = st.lists(
    st.one_of(st.sampled_from(WORDS), st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=3).map("".join)),
    max_size=120,
).map("".join)


@hypothesis_settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400), st.integers(1, 30)), max_size=30))
def test_word_index_counts_and_spans_as_the_definition(text: str, queries: list[tuple[int, int, int]]) -> None:
    fast, plain = WordIndex.of(text), PlainWordIndex(text)
    assert bool(fast) == bool(plain.starts)
    assert len(fast) == len(plain)
    for start, end, limit in queries:
        start, end = min(start, len(text)), min(end, len(text))
        assert fast.count(start, end) == plain.count(start, end) == len(text[start:end].split())
        assert fast.at_most(start, end, limit) == plain.at_most(start, end, limit)
        assert fast.count(start, end) == plain.count(start, end)  # again, from what at_most remembered
        assert list(fast.spans(start, end)) == list(plain.spans(start, end))
    assert (fast.starts, fast.ends) == (plain.starts, plain.ends)


@st.composite
def documents(draw: st.DrawFn) -> ParsedDocument:
    """Text of words and any white space; blocks at random offsets: touching, overlapping,
    cutting words, leaving text uncovered."""
    text = draw(texts)
    blocks = []
    path: list[tuple[int, str]] = []
    for _ in range(draw(st.integers(0, 12))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 200)))
        kind = draw(st.sampled_from(KINDS))
        if kind == "heading":
            level = draw(st.integers(1, 3))
            path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, " ".join(text[start:end].split()))]
            blocks.append(Block("heading", start, end, level, tuple(t for _, t in path)))
        else:
            blocks.append(Block(kind, start, end, 0, tuple(t for _, t in path)))
    return ParsedDocument("markdown", text, tuple(sorted(blocks, key=lambda b: b.start)))


chunkings = st.builds(
    lambda chunker, size, max_bytes: ChunkSettings(chunker, size, size // 3, max_bytes),
    st.sampled_from(["structure", "structure", "fixed", "overlap"]),
    st.integers(1, 25),
    st.sampled_from([65_536, 40, 12]),
)


@hypothesis_settings(max_examples=300, deadline=None)
@given(documents(), chunkings)
def test_chunks_are_those_of_the_plain_word_index(doc: ParsedDocument, settings: ChunkSettings) -> None:
    source = SourceDocument("documents/doc.md", "0" * 64, doc, META)
    fast = chunk_document(source, settings)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chunk_module, "WordIndex", PlainWordIndex)
        plain = chunk_document(source, settings)
    assert fast == plain
    for chunk in fast:
        assert chunk.word_count == len(chunk.text.split())


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["a", "é", "日"]), st.sampled_from(WHITESPACE)), max_size=60).map("".join))
def test_the_long_run_scan_finds_what_the_regex_finds(text: str) -> None:
    for length in range(1, 9):
        assert _may_hold_long_run(text, length) == bool(re.search(rf"(?<!\S)\S{{{length},}}", text)), length


@pytest.mark.parametrize(
    ("run", "refused"),
    [
        ("a" * MAX_TERM_BYTES, False),
        ("a" * (MAX_TERM_BYTES + 1), True),
        ("é" * (MAX_TERM_BYTES // 2), False),  # 2 bytes a character: at the limit
        ("é" * (MAX_TERM_BYTES // 2 + 1), True),
        ("\U0001d11e" * (MAX_TERM_BYTES // 4 + 1), True),  # 4 bytes a character: the shortest run looked at
        ("\U0001d11e" * (MAX_TERM_BYTES // 4), False),
        ("日" * (MAX_TERM_BYTES // 3 + 1), True),
    ],
)
@pytest.mark.parametrize("space", [" ", "\u3000", "\xa0", "\u2028"])
def test_the_term_check_refuses_exactly_the_runs_over_the_limit(run: str, refused: bool, space: str) -> None:
    text = f"before{space}{run}{space}after " * 2
    doc = SourceDocument("documents/doc.md", "0" * 64, ParsedDocument("markdown", text, ()), META)
    regex_refuses = any(len(m.group().encode()) > MAX_TERM_BYTES for m in re.finditer(r"(?<!\S)\S{8192,}", text))
    assert regex_refuses == refused
    if refused:
        with pytest.raises(ChunkLimitExceeded, match="single token"):
            check_terms(text, doc)
    else:
        check_terms(text, doc)
