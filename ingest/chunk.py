"""Chunkers: pure functions from a validated document to its chunks; owns chunk boundaries and limits.

Every chunk is a span ``[start, end)`` of the document's parsed text, trimmed to
non-space characters at both ends, so ``chunk.text == parsed.text[start:end]``
and the chunk ID (a hash of doc_id, version, start, end) is stable for as long
as the parsed text and the settings stay the same.

- ``structure`` packs blocks within one section (a heading and the blocks under
  it up to the next heading); a long section is split at block, then sentence
  (paragraphs) or line (tables, lists, code) boundaries, then at words.
- ``fixed`` cuts the text into consecutive windows of ``size`` words.
- ``overlap`` slides a ``size``-word window forward by ``size - overlap`` words.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from ingest.model import Block, Chunk, ParsedDocument, SourceDocument, chunk_id, made
from ingest.settings import MAX_TERM_BYTES, ChunkSettings

Span = tuple[int, int]

WORD = re.compile(r"\S+")
# A sentence ends at . ! or ? (plus closing quotes/brackets) followed by whitespace;
# it is a break only when the next character is upper-case or a digit (checked in code,
# because `re` has no Unicode upper-case class).
SENTENCE_BREAK = re.compile(r"[.!?][\"'”’)\]]*(\s+)(?=\w)")
LINE_SPLIT_KINDS = ("table", "list", "code")  # split at lines, not sentences, when too long
# A note (admonition) or a definition (term, then description) too long for one chunk is cut at
# lines and sentences, but never right after its first line: a title or term opens the chunk
# that holds the start of what it introduces.
TITLED_KINDS = ("note", "definition")


class WordIndex:
    """The whitespace-separated words of a text (maximal runs of ``\\S``), counted per span.

    Counting a span splits it in C (``str.split`` and the ``\\S`` of ``re`` agree on what
    whitespace is); the offsets of every word are found only when a chunker needs them by
    index (the window chunkers): finding them costs a Python object per word, more than
    the rest of the structure chunker.
    """

    __slots__ = ("_counted", "_ends", "_starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        self._ends: list[int] | None = None
        self._counted: dict[Span, int] = {}  # spans counted whole: a section is often its chunk

    @classmethod
    def of(cls, text: str) -> WordIndex:
        return cls(text)

    def _index(self) -> None:
        matches = list(WORD.finditer(self.text))
        self._starts = list(map(re.Match.start, matches))
        self._ends = list(map(re.Match.end, matches))

    @property
    def starts(self) -> list[int]:
        """Where each word starts, in order."""
        if self._starts is None:
            self._index()
        assert self._starts is not None
        return self._starts

    @property
    def ends(self) -> list[int]:
        """Where each word ends, in order."""
        if self._ends is None:
            self._index()
        assert self._ends is not None
        return self._ends

    def __len__(self) -> int:
        return len(self.starts) if self._starts is not None else len(self.text.split())

    def __bool__(self) -> bool:
        return not (not self.text or self.text.isspace())

    def count(self, start: int, end: int) -> int:
        """Words in ``text[start:end]``, a word cut by either end counted as one."""
        if end <= start:
            return 0
        counted = self._counted.get((start, end))
        if counted is None:
            counted = self._counted[start, end] = len(self.text[start:end].split())
        return counted

    def at_most(self, start: int, end: int, limit: int) -> bool:
        """Whether ``text[start:end]`` holds at most ``limit`` words; a long span is split no
        further than its first ``limit`` words."""
        if end <= start:
            return True
        counted = self._counted.get((start, end))
        if counted is None:
            found = len(self.text[start:end].split(None, limit))
            if found <= limit:  # all of them: the span's count
                self._counted[start, end] = found
            return found <= limit
        return counted <= limit

    def remember(self, start: int, end: int, count: int) -> None:
        """The word count of a span, known from its parts: :meth:`count` need not split it."""
        self._counted[start, end] = count

    def spans(self, start: int, end: int) -> Iterator[Span]:
        """Each word overlapping ``[start, end)``, clipped to it."""
        # ``endpos`` ends the text there for the pattern, ``pos`` starts the search there: a
        # word cut by either end is matched as its part inside.
        return map(re.Match.span, WORD.finditer(self.text, start, end))


def chunk_document(doc: SourceDocument, settings: ChunkSettings, *, checked: bool = False) -> list[Chunk]:
    """The chunks of one document, in document order, positions 0, 1, 2 …

    ``checked``: the caller ran ``check_terms`` and ``check_headings`` on this document (the scan
    does, for ``validate``); they are not run twice. Content blocks carry only the parse's headings.
    """
    parsed = doc.parsed
    text = parsed.text
    words = WordIndex.of(text)
    if not words:
        return []
    if not checked:
        check_terms(text, doc)
    blocks = content_blocks(parsed)
    if not checked:
        check_headings(blocks)
    size = max(settings.size, 1)  # settings are checked on load (≥ 10); never loop on 0
    if settings.chunker == "structure":
        spans = structure_spans(text, blocks, words, size)
    elif settings.chunker == "fixed":
        spans = window_spans(words, size, size)
    elif settings.chunker == "overlap":
        spans = window_spans(words, size, size - settings.overlap)
    else:
        raise ValueError(f"unknown chunker {settings.chunker!r}")
    spans = bounded_spans(text, spans, words, settings.max_chunk_bytes)
    if len(spans) > settings.max_chunks_per_document:
        raise ChunkLimitExceeded(
            f"too many chunks: {len(spans)}, over the limit of {settings.max_chunks_per_document} per document "
            "(chunking.max_chunks_per_document in ingest.toml); split the file or raise the limit"
        )
    block_starts = [b.start for b in blocks]
    shared = _DocumentFields.of(doc, settings)
    return [
        make_chunk(doc, settings, position, start, end, blocks, block_starts, words, shared)
        for position, (start, end) in enumerate(spans)
    ]


# --- limits ---------------------------------------------------------------------------
# Checked here, before any write, so that every store accepts and refuses the same
# documents (Elasticsearch would refuse an immense term; SQLite would take anything).


class ChunkLimitExceeded(ValueError):
    """A document its chunks cannot represent within the limits: refused with this reason."""


# A run of non-space characters long enough that it may exceed the term limit (≤ 4 bytes a character).
_LONG_RUN = re.compile(rf"(?<!\S)\S{{{MAX_TERM_BYTES // 4 + 1},}}")  # from token starts only: linear


def _excerpt(value: str) -> str:
    return repr(value[:40] + ("…" if len(value) > 40 else ""))


def _may_hold_long_run(text: str, length: int = MAX_TERM_BYTES // 4 + 1) -> bool:
    """Whether the text holds a run of non-space characters long enough to be looked at.

    The regex would walk every character in Python's regex engine; this looks at windows of
    that length instead, each from its end back to its last space (in C): a run that long
    lies in a window with no space, and a run starting before a window's last space is
    shorter than the window.
    """
    at, total = 0, len(text)
    while total - at >= length:  # a run that long would start at or after ``at``
        window = text[at : at + length]
        if window[-1].isspace():
            at += length
            continue
        last_word = window.rsplit(None, 1)[-1]
        if len(last_word) == length:
            return True
        at += length - len(last_word)
    return False


def check_terms(text: str, doc: SourceDocument) -> None:
    """Refuse a whitespace-free run of text, or a metadata value stored as one keyword, over
    Lucene's term limit: it can be neither indexed as one term nor cut without changing it."""
    for match in _LONG_RUN.finditer(text) if _may_hold_long_run(text) else ():
        size = len(match.group().encode("utf-8"))
        if size > MAX_TERM_BYTES:
            raise ChunkLimitExceeded(
                f"a single token of {size} bytes with no whitespace at characters {match.start()}–{match.end()} "
                f"({_excerpt(match.group())}) is over the {MAX_TERM_BYTES}-byte term limit of the search index"
            )
    meta = doc.meta
    for name, values in (("title", [meta.title]), ("tags", list(meta.tags)), ("source", [doc.source])):
        for value in values:
            if len(value) > MAX_TERM_BYTES // 4 and len(value.encode("utf-8")) > MAX_TERM_BYTES:
                raise ChunkLimitExceeded(
                    f"{name} {_excerpt(value)} is over the {MAX_TERM_BYTES}-byte term limit of the search index"
                )


def check_headings(blocks: Sequence[Block]) -> None:
    """Headings are stored whole as keywords (section, sections, heading_path): one over the
    term limit would be refused by Elasticsearch."""
    seen: set[str] = set()
    for block in blocks:
        for heading in block.heading_path:
            if heading in seen or len(heading) <= MAX_TERM_BYTES // 4:
                continue
            seen.add(heading)
            size = len(heading.encode("utf-8"))
            if size > MAX_TERM_BYTES:
                raise ChunkLimitExceeded(
                    f"a heading of {size} bytes ({_excerpt(heading)}) is over the {MAX_TERM_BYTES}-byte term limit "
                    "of the search index (headings are stored whole)"
                )


def bounded_spans(text: str, spans: Sequence[Span], words: WordIndex, max_bytes: int) -> list[Span]:
    """The spans, each one over ``max_bytes`` UTF-8 bytes cut between words into pieces that fit.

    Every word is at most MAX_TERM_BYTES (checked first) and max_bytes is above that, so
    each piece holds at least one word and the cutting ends.
    """
    out: list[Span] = []
    for start, end in spans:
        if (end - start) * 4 <= max_bytes or len(text[start:end].encode("utf-8")) <= max_bytes:
            out.append((start, end))  # the common case: no encoding needed
            continue
        piece_start, piece_end, size = None, 0, 0
        for word_start, word_end in words.spans(start, end):
            added = len(text[piece_end if piece_start is not None else word_start : word_end].encode("utf-8"))
            if piece_start is not None and size + added > max_bytes:
                out.append((piece_start, piece_end))
                piece_start = None
                added = len(text[word_start:word_end].encode("utf-8"))
            if piece_start is None:
                piece_start, size = word_start, 0
            size += added
            piece_end = word_end
        if piece_start is not None:
            out.append((piece_start, piece_end))
    return out


# --- blocks ---------------------------------------------------------------------------


def trim(text: str, start: int, end: int) -> Span:
    """The span without leading and trailing whitespace (empty when it is all space)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def content_blocks(parsed: ParsedDocument) -> list[Block]:
    """The document's blocks in order, trimmed to non-space, never overlapping, with any
    text no block covers added as a paragraph under the preceding block's headings, so
    that every word of the text lies in exactly one block."""
    text = parsed.text
    result: list[Block] = []
    covered = 0  # offset up to which the text is accounted for

    def add_gap(until: int) -> None:
        start, end = trim(text, covered, until)
        if start < end:
            path = result[-1].heading_path if result else ()
            result.append(Block("paragraph", start, end, heading_path=path, pages=parsed.pages_of(start, end)))

    for block in sorted(parsed.blocks, key=lambda b: (b.start, -b.end)):
        start, end = trim(text, max(block.start, covered), min(block.end, len(text)))
        if start >= end:
            continue  # empty, or wholly inside a block already taken
        add_gap(start)
        result.append(block if (start, end) == (block.start, block.end) else _reshaped(block, start, end))
        covered = end
    add_gap(len(text))
    return result


def _reshaped(block: Block, start: int, end: int) -> Block:
    return Block(block.kind, start, end, block.level, block.heading_path, block.pages)


def sections_of(blocks: Sequence[Block]) -> list[list[Block]]:
    """Blocks grouped into sections: each heading starts one; text before the first heading is one too.

    A heading with nothing under it but a deeper heading (a title straight over its first
    subsection) opens that subsection's section instead of standing alone as a chunk of
    a few words: the subsection lies inside it, so no section boundary is crossed.
    """
    sections: list[list[Block]] = []
    for block in blocks:
        if block.kind == "heading" and sections and _only_shallower_headings(sections[-1], block):
            sections[-1].append(block)
        elif block.kind == "heading" or not sections:
            sections.append([block])
        else:
            sections[-1].append(block)
    return sections


def _only_shallower_headings(section: Sequence[Block], heading: Block) -> bool:
    return all(b.kind == "heading" for b in section) and section[-1].level < heading.level


# --- structure chunker ----------------------------------------------------------------


class _Packer:
    """Greedy accumulator of consecutive spans into chunks of at most ``size`` words.

    A chunk that holds only a heading so far always takes the next span, even past
    ``size``: a heading never ends a chunk while content follows it.

    The spans put are trimmed, in order, and only white space lies between them, so a
    chunk's words are theirs, less one for each span that touches the one before it (a
    word cut in two by a block boundary): remembered in ``index`` for the chunk's record.
    """

    def __init__(self, size: int, index: WordIndex) -> None:
        self.size = size
        self.index = index
        self.spans: list[Span] = []
        self.start: int | None = None
        self.end = 0
        self.words = 0  # the sum of the spans' words: what the packing decides by
        self.exact = 0  # the chunk's words
        self.heading_only = False

    def flush(self) -> None:
        if self.start is not None:
            self.spans.append((self.start, self.end))
            self.index.remember(self.start, self.end, self.exact)
        self.start, self.words, self.heading_only = None, 0, False

    def put(self, start: int, end: int, words: int, heading: bool = False) -> None:
        if self.start is None:
            self.start, self.heading_only, self.exact = start, heading, words
        else:
            self.heading_only = self.heading_only and heading
            self.exact += words - (start == self.end)
        self.end = end
        self.words += words

    def place(self, start: int, end: int, words: int) -> None:
        """Add a span here if it fits, else start a new chunk with it."""
        if self.words + words > self.size and not self.heading_only:
            self.flush()
        self.put(start, end, words)


def structure_spans(text: str, blocks: Sequence[Block], words: WordIndex, size: int) -> list[Span]:
    spans: list[Span] = []
    for section in sections_of(blocks):
        spans.extend(section_spans(text, section, words, size))
    return spans


def section_spans(text: str, section: Sequence[Block], words: WordIndex, size: int) -> list[Span]:
    """One section's chunks: whole if it fits, else packed blocks, sentences/lines, words."""
    start, end = section[0].start, section[-1].end
    if words.at_most(start, end, size):
        return [(start, end)]
    packer = _Packer(size, words)
    # A block or piece over ``size`` words is never counted whole (``at_most`` stops there):
    # it is cut, and its parts are counted.
    for block in section:
        if block.kind == "heading":
            packer.put(block.start, block.end, words.count(block.start, block.end), heading=True)
        elif words.at_most(block.start, block.end, size):
            packer.place(block.start, block.end, words.count(block.start, block.end))
        else:
            for piece_start, piece_end in pieces(text, block):
                if words.at_most(piece_start, piece_end, size):
                    packer.place(piece_start, piece_end, words.count(piece_start, piece_end))
                else:  # a sentence or line longer than a chunk: cut between words
                    for word_start, word_end in words.spans(piece_start, piece_end):
                        packer.place(word_start, word_end, 1)
    packer.flush()
    return packer.spans


def pieces(text: str, block: Block) -> list[Span]:
    """A too-long block cut into sentences (paragraphs) or lines (tables, lists, code);
    notes and definitions at both, with their first line kept on the piece after it."""
    if block.kind in TITLED_KINDS:
        first_line = text.find("\n", block.start, block.end)
        keep_from = block.end if first_line == -1 else first_line + 1
        cuts = sorted({*line_cuts(text, block.start, block.end), *sentence_cuts(text, block.start, block.end)})
        inner = [cut for cut in cuts if cut > keep_from]
        # The title's piece runs to the first cut after the title's own line.
        bounds = [block.start, *inner, block.end]
    else:
        cut = line_cuts if block.kind in LINE_SPLIT_KINDS else sentence_cuts
        bounds = [block.start, *cut(text, block.start, block.end), block.end]
    spans = [trim(text, s, e) for s, e in itertools.pairwise(bounds)]
    return [(s, e) for s, e in spans if s < e]


def sentence_cuts(text: str, start: int, end: int) -> Iterator[int]:
    for m in SENTENCE_BREAK.finditer(text, start, end):
        following = text[m.end(1)]
        if following.isupper() or following.isdigit():
            yield m.start(1)


def line_cuts(text: str, start: int, end: int) -> Iterator[int]:
    at = text.find("\n", start, end)
    while at != -1:
        yield at
        at = text.find("\n", at + 1, end)


# --- window chunkers ------------------------------------------------------------------


def window_spans(words: WordIndex, size: int, step: int) -> list[Span]:
    """Windows of ``size`` words starting every ``step`` words; the last one ends at the
    last word, and none lies wholly inside the one before it."""
    step = max(step, 1)
    total = len(words)
    spans: list[Span] = []
    for first in range(0, total, step):
        last = min(first + size, total)
        spans.append((words.starts[first], words.ends[last - 1]))
        if last == total:
            break
    return spans


# --- records --------------------------------------------------------------------------


def make_chunk(
    doc: SourceDocument,
    settings: ChunkSettings,
    position: int,
    start: int,
    end: int,
    blocks: Sequence[Block],
    block_starts: Sequence[int],
    words: WordIndex,
    shared: _DocumentFields | None = None,
) -> Chunk:
    first = max(bisect_right(block_starts, start) - 1, 0)
    # A chunk that opens on headings with no text between them (a title straight over its first
    # subsection) is cited under the deepest of them: its text sits under that one.
    lead = first
    while lead + 1 < len(blocks) and blocks[lead].kind == "heading" and blocks[lead + 1].start < end:
        lead += 1
    heading_path = blocks[lead].heading_path if blocks else ()
    meta, parsed = doc.meta, doc.parsed
    fixed = shared if shared is not None else _DocumentFields.of(doc, settings)
    # made, not Chunk(...): a frozen dataclass's __init__ sets its 22 fields one object.__setattr__ at a
    # time, a tenth of chunking a small document; every field is given here, as ``made`` needs
    return made(
        Chunk,
        {
            "chunk_id": chunk_id(meta.doc_id, meta.version, start, end),
            "doc_id": meta.doc_id,
            "version": meta.version,
            "title": meta.title,
            "section": heading_path[-1] if heading_path else "",
            "sections": sections_touched(blocks, first, end),
            "heading_path": heading_path,
            "position": position,
            "start": start,
            "end": end,
            "pages": parsed.pages_of(start, end),
            "text": parsed.text[start:end],
            "word_count": words.count(start, end),
            "access": meta.access,
            "effective_from": fixed.effective_from,
            "effective_to": fixed.effective_to,
            "status": meta.status,
            "superseded_by": meta.superseded_by,
            "tags": fixed.tags,
            "source": doc.source,
            "source_sha256": doc.sha256,
            "chunker": fixed.chunker,
        },
    )


class _DocumentFields(NamedTuple):
    """What every chunk of one document carries alike, worked out once per document."""

    effective_from: str | None
    effective_to: str | None
    tags: tuple[str, ...]
    chunker: str

    @classmethod
    def of(cls, doc: SourceDocument, settings: ChunkSettings) -> _DocumentFields:
        meta = doc.meta
        return cls(
            meta.effective_from.isoformat() if meta.effective_from else None,
            meta.effective_to.isoformat() if meta.effective_to else None,
            tuple(meta.tags),
            settings.describe(),
        )


def sections_touched(blocks: Sequence[Block], first: int, end: int) -> tuple[str, ...]:
    """The distinct non-empty sections of the blocks from index ``first`` that begin before ``end``."""
    seen: list[str] = []
    for index in range(first, len(blocks)):  # indexing, not slicing: no copy per chunk
        block = blocks[index]
        if block.start >= end:
            break
        if block.section and block.section not in seen:
            seen.append(block.section)
    return tuple(seen)
