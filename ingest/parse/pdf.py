"""PDF: document information through pypdf, text, positions, fonts and outline through pdfium.

Characters come from pdfium's text page in content order, grouped into lines at its line
breaks. Per line we read the baseline, the font size, weight and pitch, and where text
objects lie a cell gap apart, the gaps between words (a wide gap separates table cells;
alike wide gaps in a justified line do not). Running headers and footers (repeated, or
carrying the page number in one height band of many pages) are removed. Headings are the
document's outline entries, found on their pages, when it has an outline; otherwise lines
clearly larger than the prose, or bold and short, that do not read like a sentence. Lines
are grouped into headings, paragraphs, lists and tables; a paragraph or table that runs
over a page (or column) break stays one block and lists both pages.
"""

from __future__ import annotations

import ctypes
import dataclasses
import io
import logging
import re
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pypdf import PdfReader
from pypdf.generic import BooleanObject, FloatObject, IndirectObject, NameObject, NumberObject

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse._common import (
    Draft,
    EdgeLine,
    assemble,
    collapse_spaces,
    join_line_offsets,
    running_line_indices,
    strip_controls,
)

# A horizontal gap wider than this many font sizes separates table cells. Gaps that pdfium
# bridged with a space of its own (the words were drawn apart) need less than real spaces.
CELL_GAP = 2.0
CELL_GAP_GENERATED = 1.0
JUSTIFIED_GAP = 2.5
PARAGRAPH_GAP = 1.6  # a baseline step larger than this many font sizes starts a new block
LIST_ITEM_GAP = 2.2  # the same for the step from one list item to the next
HEADING_SIZE_STEP = 1.0  # points above the body size that make a line a heading
HEADER_GAP = 3.0  # a small-font top line this many body sizes above the rest is a page header
RUNNING_ZONE = 2  # lines at the top and bottom of a page that may be running headers
MAX_HEADING_CHARS = 200
MAX_BOLD_HEADING_CHARS = 100
_MARKER = re.compile(r"[•●▪■◦‣∙·*\-–]|\d{1,3}[.)]")
# A bullet drawn from a symbol font without a Unicode mapping comes out as a C1 control
# (TeX's cmsy bullet: U+0088) or a private-use character (OpenSymbol: U+F095).
_UNMAPPED_BULLET = re.compile(r"^[\x80-\x9f\ue000-\uf8ff](?=\s|$)")
_BULLET = re.compile(rf"(?:{_MARKER.pattern})\s+\S")
_KEYWORD_FIELD = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*=\s*([^;]*)")
_SENTENCE_END = ".!?:;"
_PAGE_LABEL = re.compile(r"(?:page\s+)?[-–—]?\s*\d{1,5}\s*[-–—]?(?:\s*(?:of|/)\s*\d{1,5})?", re.IGNORECASE)
_SOFT_HYPHEN = re.compile(r"[\x02\ufffe]\s*(\S?)")
# Bold by name: "-Bold", "Semibold", "Black", "Heavy", "Demi", URW's "-Medi", and TeX's
# bold extended faces (CMBX12, CMSSBX10, cm-super SFBX1200, EC ECBX1200, CMB10).
_BOLD_NAME = re.compile(r"bold|black|heavy|demi|-medi|(?:cm|ec|sf|tc)(?:ss|tt)?bx|cmb\d", re.IGNORECASE)
_MONO_NAME = re.compile(
    r"mono|courier|consol|menlo|typewriter|(?:cm|sf|ec|tc)(?:s|i|sl)?tt\d|lmtt|inconsolata", re.IGNORECASE
)
_FIXED_PITCH = 1
_FORCE_BOLD = 1 << 18
_SECTION_NUMBER = re.compile(r"(?:\d{1,3}|[A-Z])(?:\.\d{1,3}){0,5}\.?")
_SHY = "\u00ad"  # a line-end hyphen pdfium joined, until the document decides (see _clean)
_SHY_PAIR = re.compile(r"([^\W\d_]+)\u00ad([^\W\d_]+)")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_HYPHEN_END = re.compile(r"([^\W\d_]+)-$")
_LEADING_LETTERS = re.compile(r"[^\W\d_]+")
_NON_ALNUM = re.compile(r"[\W_]+")
_OUTLINE_NUMBER = re.compile(
    r"^(?:(?:\d+|[A-Z]|[IVXLC]+)(?:\.\d+)*\.?|(?:chapter|part|section|appendix)\s+\S+?[.:]?)\s+", re.IGNORECASE
)
MAX_OUTLINE_ENTRIES = 5000
OUTLINE_FOUND_SHARE = 0.5  # below this share of entries found, font statistics find headings too
MAX_HEADING_WORDS = 16

# pypdf logs a warning for every repair it makes to a damaged file; a file we cannot
# read becomes an UnreadableFile with its reason, so those warnings are only noise.
logging.getLogger("pypdf").setLevel(logging.ERROR)


@dataclass(frozen=True)
class Line:
    """One text line of a page: what it says, where it sits, and in which font."""

    page: int
    text: str
    cells: tuple[str, ...]  # the text split at wide gaps; one cell for ordinary lines
    x: float  # left edge
    y: float  # baseline, PDF units from the page bottom
    size: float  # font size, rounded to half points
    bold: bool
    mono: bool = False  # set in a fixed-pitch (code) font
    keep_hyphen: bool = False  # a line-end hyphen that is part of the word (self-contained)


def read_pdf_metadata(data: bytes) -> dict[str, Any]:
    """Only the document information: what a sync needs for a file it already holds."""
    return _read_information(data)


def parse_pdf(data: bytes) -> ParsedDocument:
    metadata = _read_information(data)
    pages, outline = _read_pages_and_outline(data)
    if not any(pages):
        raise UnreadableFile("PDF has no extractable text")
    lines = [line for page in _without_running_lines(pages) for line in page]
    if not lines:
        raise UnreadableFile("PDF has no extractable text")
    lines = _with_hyphens_resolved(lines)
    return assemble("pdf", _drafts(lines, outline), metadata, page_count=len(pages))


# ---------------------------------------------------------------------------- metadata


def _read_information(data: bytes) -> dict[str, Any]:
    """The document information entries (and key=value pairs in /Keywords, and XMP dc:title)."""
    if b"%PDF-" not in data[:1024]:
        raise UnreadableFile("not a PDF")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader = _open_reader(data)
        return _information_fields(reader)


@dataclass(frozen=True)
class OutlineEntry:
    """One bookmark: its title, depth (1 = top level) and destination page (1-based; 0 unknown)."""

    title: str
    level: int
    page: int


def _open_reader(data: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        encrypted = reader.is_encrypted
    except Exception:  # noqa: BLE001 - pypdf raises many kinds of errors on damaged files
        raise UnreadableFile("not a PDF") from None
    if encrypted:
        raise UnreadableFile("encrypted PDF")
    return reader


def _information_fields(reader: PdfReader) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    try:
        info = reader.metadata
        for key in list(info.keys()) if info is not None else ():
            name = str(key).lstrip("/").lower()
            if name and info is not None:
                fields[name] = _plain_value(info[key])
    except Exception:  # noqa: BLE001 - a damaged information dictionary yields no fields, not a failure
        fields = {}
    keywords = fields.get("keywords")
    if isinstance(keywords, str) and "=" in keywords:
        for part in keywords.split(";"):
            match = _KEYWORD_FIELD.fullmatch(part)
            if match and match.group(2).strip():
                name, value = match.group(1).lower(), match.group(2).strip()
                given = fields.get(name)
                if given not in (None, "") and str(given).strip() != value:
                    # Two values for one field in one file: never pick one silently.
                    raise UnreadableFile(
                        f"PDF metadata gives {name} twice: {str(given).strip()!r} in the document "
                        f"information and {value!r} in /Keywords"
                    )
                fields[name] = value
    if not fields.get("title"):
        title = _xmp_title(reader)
        if title:
            fields["title"] = title
    return fields


def _plain_value(value: Any) -> Any:
    if isinstance(value, IndirectObject):
        value = value.get_object()
    if isinstance(value, BooleanObject):
        return bool(value)
    if isinstance(value, NumberObject):
        return int(value)
    if isinstance(value, FloatObject):
        return float(value)
    if isinstance(value, NameObject):
        return str(value).lstrip("/")
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    # Arrays and dictionaries stay structured, so the metadata check refuses them
    # instead of indexing their Python text ("[1, 2]") as a title.
    if isinstance(value, list):
        return [_plain_value(item) for item in value[:1000]]
    if isinstance(value, dict):
        return {str(k): _plain_value(v) for k, v in list(value.items())[:1000]}
    return str(value)


def _xmp_title(reader: PdfReader) -> str | None:
    try:
        xmp = reader.xmp_metadata
        titles = xmp.dc_title if xmp is not None else None
    except Exception:  # noqa: BLE001 - malformed XMP is ignored
        return None
    if not titles:
        return None
    title = titles.get("x-default") or next(iter(titles.values()), None)
    return str(title) if title else None


# ---------------------------------------------------------------------------- lines


def _read_pages_and_outline(data: bytes) -> tuple[list[list[Line]], list[OutlineEntry]]:
    """Every page's text lines, in pdfium's (content) order, and the document's outline."""
    try:
        document = pdfium.PdfDocument(data)
    except Exception:  # noqa: BLE001 - pdfium refuses what it cannot open
        raise UnreadableFile("not a PDF") from None
    try:
        pages: list[list[Line]] = []
        fonts: dict[tuple[bytes, int], tuple[bool, bool]] = {}  # one document's fonts, looked at once
        for index in range(len(document)):
            page = document[index]
            try:
                textpage = page.get_textpage()
                try:
                    pages.append(_page_lines(textpage, index + 1, fonts))
                finally:
                    textpage.close()
            finally:
                page.close()
        return pages, _outline(document)
    except pdfium.PdfiumError as exc:
        raise UnreadableFile(f"PDF text cannot be read: {exc}") from None
    finally:
        document.close()


def _outline(document: pdfium.PdfDocument) -> list[OutlineEntry]:
    """The document's bookmarks in order (read by pdfium, which follows GoTo actions and
    named destinations); a damaged outline is no outline: headings then come from fonts."""
    entries: list[OutlineEntry] = []
    try:
        for bookmark in document.get_toc(max_depth=12):
            if len(entries) >= MAX_OUTLINE_ENTRIES:
                break
            title = collapse_spaces(strip_controls((bookmark.get_title() or "").translate(_T1_LIGATURES)))
            destination = bookmark.get_dest()
            page = destination.get_index() if destination is not None else None
            if title:
                entries.append(OutlineEntry(title, bookmark.level + 1, page + 1 if page is not None else 0))
    except Exception:  # noqa: BLE001 - pdfium errors on a damaged outline: keep what was read
        return entries
    return entries


def _page_chars(textpage: pdfium.PdfTextPage) -> str:
    """The page's characters, one per pdfium char index (generated spaces and breaks included).

    pdfium gives a character outside the Basic Multilingual Plane (math italic 𝑥) as two
    char indices, a UTF-16 surrogate pair: the pair becomes the character at the first
    index and a NUL (dropped with the other controls) at the second, so indices stay aligned.
    """
    count = textpage.count_chars()
    if count <= 0:
        return ""
    text: str = textpage.get_text_range(0, count)
    if len(text) == count:
        return text
    # pdfium excluded or inserted characters: ask for each one, keeping indices aligned.
    raw = textpage.raw
    codes = [pdfium_c.FPDFText_GetUnicode(raw, index) for index in range(count)]
    chars: list[str] = []
    index = 0
    while index < count:
        code = codes[index]
        if 0xD800 <= code <= 0xDBFF and index + 1 < count and 0xDC00 <= codes[index + 1] <= 0xDFFF:
            chars.append(chr(0x10000 + ((code - 0xD800) << 10) + (codes[index + 1] - 0xDC00)))
            chars.append("\x00")
            index += 2
            continue
        chars.append(_safe_char(code))
        index += 1
    return "".join(chars)


def _safe_char(code: int) -> str:
    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return "\ufffd"
    return chr(code)


_LINE = re.compile(r"[^\r\n]+")


class _PageReader:
    """pdfium's per-character queries for one text page, with the ctypes buffers made once."""

    def __init__(self, textpage: pdfium.PdfTextPage, fonts: dict[tuple[bytes, int], tuple[bool, bool]]) -> None:
        self.raw = textpage.raw
        self.left, self.right = ctypes.c_double(), ctypes.c_double()
        self.bottom, self.top = ctypes.c_double(), ctypes.c_double()
        self.name = ctypes.create_string_buffer(256)
        self.flags = ctypes.c_int(0)
        self.matrix = pdfium_c.FS_MATRIX()
        self.fonts = fonts

    def wide_gap_between_rects(self, count: int, size: float) -> bool:
        """Whether two consecutive text rectangles (of the range last given to
        FPDFText_CountRects) lie further apart than a cell gap."""
        raw, get_rect = self.raw, pdfium_c.FPDFText_GetRect
        left, top, right, bottom = self.left, self.top, self.right, self.bottom
        limit = CELL_GAP_GENERATED * max(size, 1.0)
        get_rect(raw, 0, left, top, right, bottom)
        previous_right = right.value
        for index in range(1, count):
            get_rect(raw, index, left, top, right, bottom)
            if left.value - previous_right > limit:
                return True
            previous_right = right.value
        return False

    def origin(self, index: int) -> tuple[float, float]:
        pdfium_c.FPDFText_GetCharOrigin(self.raw, index, self.left, self.bottom)
        return self.left.value, self.bottom.value

    def font_size(self, index: int) -> float:
        """The size the character is drawn at: its font size scaled by its text and page matrices.

        pdfium's font size is the ``Tf`` operand alone; many producers use ``1 Tf`` and scale
        with the text matrix instead.
        """
        size = pdfium_c.FPDFText_GetFontSize(self.raw, index)
        if pdfium_c.FPDFText_GetMatrix(self.raw, index, self.matrix):
            matrix = self.matrix
            scale = abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
            if scale > 0:
                size *= scale
        return float(size)

    def font(self, index: int) -> tuple[bool, bool]:
        """(bold, monospace) of the character's font, from its weight, flags and name.

        A font's name and flags identify it: its weight is asked for once per document.
        """
        length = pdfium_c.FPDFText_GetFontInfo(self.raw, index, self.name, len(self.name), self.flags)
        key = (self.name.value, self.flags.value) if length > 0 else (b"", 0)
        found = self.fonts.get(key)
        if found is None:
            weight = pdfium_c.FPDFText_GetFontWeight(self.raw, index)
            name, flags = key[0].decode("latin-1"), key[1]
            bold = weight >= 600 or bool(flags & _FORCE_BOLD) or bool(_BOLD_NAME.search(name))
            mono = bool(flags & _FIXED_PITCH) or bool(_MONO_NAME.search(name))
            found = self.fonts[key] = (bold, mono)
        return found


# Characters that need more than spaces collapsed (see _clean); a page without any is
# cleaned by splitting at whitespace alone.
_NEEDS_CLEANING = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ue000-\uf8ff\ufffd\ufffe]")


def _page_lines(
    textpage: pdfium.PdfTextPage, page: int, fonts: dict[tuple[bytes, int], tuple[bool, bool]]
) -> list[Line]:
    chars = _page_chars(textpage)
    reader = _PageReader(textpage, fonts)
    plain = _NEEDS_CLEANING.search(chars) is None
    lines: list[Line] = []
    for match in _LINE.finditer(chars):
        segment = match.group()
        if plain:
            words = segment.split()
            if not words:
                continue
            text = " ".join(words)
        else:
            stripped = segment.strip()
            if not stripped or not strip_controls(stripped).strip():
                continue
            text = _clean(stripped)
        first = match.start() + (len(segment) - len(segment.lstrip()))
        last = match.start() + len(segment.rstrip()) - 1
        lines.append(_line(reader, chars, page, text, first, last))
    return lines


def _line(reader: _PageReader, chars: str, page: int, text: str, first: int, last: int) -> Line:
    size = reader.font_size(first)
    # pdfium's text rectangles of a line break where its text object changes. Word gaps
    # are measured one by one only when two objects lie a cell gap apart (table cells,
    # "1 Introduction" in most generators); a line whose objects follow each other
    # closely is prose, and skipping the measuring saves most of pdfium's calls.
    rects = pdfium_c.FPDFText_CountRects(reader.raw, first, last - first + 1)
    if rects > 1 and reader.wide_gap_between_rects(rects, size):
        cells = _cells(reader, chars, first, last, size) or (text,)
    else:
        cells = (text,)
    origin_x, origin_y = reader.origin(first)
    first_bold, first_mono = reader.font(first)
    # a line drawn by one text object has one font
    last_bold, last_mono = reader.font(last) if last != first and rects != 1 else (first_bold, first_mono)
    # positional arguments: measurably cheaper than keywords, and this runs once per line
    return Line(
        page,  # page
        text,  # text
        cells,  # cells
        round(origin_x, 1),  # x
        round(origin_y, 1),  # y
        round(size * 2) / 2,  # size
        first_bold and last_bold,  # bold
        first_mono and last_mono,  # mono
    )


_GAP = re.compile(r"\s+")


def _cells(reader: _PageReader, chars: str, first: int, last: int, size: float) -> tuple[str, ...]:
    """The line's text split where the gap between two words is wider than CELL_GAP font sizes.

    A justified line, whose every word gap is wide but all of them alike and below
    JUSTIFIED_GAP font sizes (a loose narrow column), is prose: one cell.
    """
    line = chars[first : last + 1]
    if " " not in line and "\t" not in line and "\xa0" not in line:
        text = _clean(line)
        return (text,) if text else ()
    # pdfium's calls bound to locals: this loop runs for every word gap of such lines
    raw, char_box = reader.raw, pdfium_c.FPDFText_GetCharBox
    left, right, bottom, top = reader.left, reader.right, reader.bottom, reader.top
    generated_limit = CELL_GAP_GENERATED * max(size, 1.0)
    drawn_limit = CELL_GAP * max(size, 1.0)
    cuts: list[tuple[int, int]] = []
    widths: list[float] = []
    gaps = 0
    for gap in _GAP.finditer(line):
        gaps += 1
        gap_start, gap_end = gap.span()
        before, after = first + gap_start - 1, first + gap_end
        char_box(raw, before, left, right, bottom, top)
        before_right = right.value
        char_box(raw, after, left, right, bottom, top)
        width = left.value - before_right
        if width <= generated_limit:
            continue
        # pdfium marks the spaces it inserted itself; a drawn space needs a wider gap.
        if width <= drawn_limit and (
            gap_end - gap_start > 1 or line[gap_start] != " " or not pdfium_c.FPDFText_IsGenerated(raw, before + 1)
        ):
            continue
        cuts.append((before + 1, after))
        widths.append(width)
    justified = len(cuts) == gaps >= 3 and max(widths) <= min(1.6 * min(widths), JUSTIFIED_GAP * max(size, 1.0))
    if not cuts or justified:
        text = _clean(line)
        return (text,) if text else ()
    cells: list[str] = []
    cell_start = first
    for end, start in cuts:
        cells.append(chars[cell_start:end])
        cell_start = start
    cells.append(chars[cell_start : last + 1])
    texts = [text for text in map(_clean, cells) if text]
    if len(texts) > 1 and _MARKER.fullmatch(texts[0]):
        texts[:2] = [f"{texts[0]} {texts[1]}"]  # a list bullet set apart from its item
    return tuple(texts)


# TeX's T1 (Cork) font encoding puts the ff, fi, fl, ffi and ffl ligatures at 0x1B-0x1F; a PDF
# without a ToUnicode entry for them gives those control codes, which would otherwise be dropped
# ("Classified" read as "Classied"). Other encodings leave these codes unused in text.
_T1_LIGATURES = {0x1B: "ff", 0x1C: "fi", 0x1D: "fl", 0x1E: "ffi", 0x1F: "ffl"}
_T1_LIGATURE_CODES = re.compile(r"[\x1b-\x1f]")


def _clean(text: str) -> str:
    """Line text with pdfium's line-end hyphen marks resolved, controls dropped, spaces collapsed.

    pdfium joins a line ending in a hyphen with the next one and marks the hyphen as
    U+FFFE (or U+0002): before a lower-case letter it becomes a soft hyphen, which
    ``_with_hyphens_resolved`` turns into "-" or nothing once the whole document is read;
    it stays "-" otherwise.
    """
    text = _SOFT_HYPHEN.sub(lambda m: (_SHY if m.group(1)[:1].islower() else "-") + m.group(1), text)
    if "\ufffd" in text:  # a glyph the PDF maps to no character: nothing to read or find
        text = text.replace("\ufffd", "")
    if _T1_LIGATURE_CODES.search(text):
        text = text.translate(_T1_LIGATURES)
    return _UNMAPPED_BULLET.sub("•", collapse_spaces(strip_controls(text)))


# ---------------------------------------------------------------------------- running lines


def _without_running_lines(pages: list[list[Line]]) -> list[list[Line]]:
    """Pages without their running headers and footers (see ``running_line_indices``)."""
    tops: list[list[EdgeLine]] = []
    bottoms: list[list[EdgeLine]] = []
    for number, page in enumerate(pages, start=1):
        heights = [-line.y for line in page]
        order = sorted(range(len(page)), key=heights.__getitem__)
        tops.append([_edge_line(page, order, p, number) for p in range(min(RUNNING_ZONE, len(order)))])
        bottoms.append(
            [_edge_line(page, order, p, number) for p in range(max(len(order) - RUNNING_ZONE, 0), len(order))]
        )
    drops = running_line_indices([tops, bottoms], len(pages))
    kept = [[line for i, line in enumerate(page) if i not in drop] for page, drop in zip(pages, drops, strict=True)]
    if not any(kept):
        # Every line "repeats": one line a page, all alike. That is the document, not its
        # furniture; refusing it as "no extractable text" would lose it.
        kept = [list(page) for page in pages]
    body_size = _body_size([line for page in kept for line in page])
    return [_without_page_furniture(page, body_size) for page in kept]


def _edge_line(page: list[Line], order: list[int], position: int, number: int) -> EdgeLine:
    """The line at ``position`` from the top of page ``number`` (``order``: its lines from the
    top down), and whether it stands a paragraph gap apart from the lines above and below."""
    line = page[order[position]]
    neighbours = [page[order[p]] for p in (position - 1, position + 1) if 0 <= p < len(order)]
    apart = all(abs(line.y - other.y) > PARAGRAPH_GAP * max(line.size, other.size) for other in neighbours)
    return EdgeLine(number, order[position], line.text, band=line.y, apart=apart)


def _without_page_furniture(page: list[Line], body_size: float) -> list[Line]:
    """Drop what is page furniture even when not repeated (say, on a one-page document).

    A page number (``3``, ``- 3 -``, ``Page 3 of 9``) standing apart at the top or bottom,
    and a top line in a smaller font than the body set well apart above everything else.
    """
    if len(page) < 2:
        return page
    by_height = sorted(page, key=lambda line: -line.y)
    drop: list[Line] = []
    top, below_top = by_height[0], by_height[1]
    bottom, above_bottom = by_height[-1], by_height[-2]
    for edge, neighbour in ((top, below_top), (bottom, above_bottom)):
        apart = abs(edge.y - neighbour.y) > PARAGRAPH_GAP * max(edge.size, neighbour.size)
        if apart and _PAGE_LABEL.fullmatch(edge.text):
            drop.append(edge)
    if top not in drop and top.size < body_size and top.y - below_top.y > HEADER_GAP * body_size:
        drop.append(top)
    if not drop:
        return page
    dropped = {id(line) for line in drop}
    return [line for line in page if id(line) not in dropped]


def _body_size(lines: Sequence[Line]) -> float:
    """The font size most of the prose is set in (code and table lines left out, unless
    there is nothing else)."""
    sizes: Counter[float] = Counter()
    for line in lines:
        if not line.mono and len(line.cells) == 1:
            sizes[line.size] += len(line.text)
    if not sizes:
        for line in lines:
            sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


# ---------------------------------------------------------------------------- hyphens


def _with_hyphens_resolved(lines: list[Line]) -> list[Line]:
    """A line-end hyphen before a lower-case word part is kept when the hyphenated form is
    the word (``self-`` + ``contained``: "selfcontained" is nowhere else in the document,
    "self-contained" is) and dropped otherwise, by ending the line without it or with it.

    Lines whose hyphen stays are marked ``keep_hyphen``; the joining does the rest.
    """
    candidates = [
        index
        for index in range(len(lines) - 1)
        if lines[index].text.endswith("-")
        and lines[index + 1].text[:1].islower()
        and _HYPHEN_END.search(lines[index].text[-64:])
    ]
    joined_by_pdfium = [index for index, line in enumerate(lines) if _SHY in line.text]
    if not candidates and not joined_by_pdfium:
        return lines
    # one search over the whole text (a word never spans a line break, "\n" is no letter)
    words: Counter[str] = Counter(map(str.casefold, _WORD.findall("\n".join([line.text for line in lines]))))

    def resolve(match: re.Match[str]) -> str:
        left, right = match.group(1), match.group(2)
        hyphen = words[(left + right).casefold()] == 0 and words[f"{left}-{right}".casefold()] > 0
        return f"{left}-{right}" if hyphen else left + right

    result = list(lines)
    for index in joined_by_pdfium:
        line = lines[index]
        cells = tuple(_SHY_PAIR.sub(resolve, cell).replace(_SHY, "") for cell in line.cells)
        result[index] = dataclasses.replace(line, text=_SHY_PAIR.sub(resolve, line.text).replace(_SHY, ""), cells=cells)
    for index in candidates:
        left_match = _HYPHEN_END.search(lines[index].text[-64:])
        right_match = _LEADING_LETTERS.match(lines[index + 1].text)
        if not left_match or not right_match:  # (left always matches: candidates were chosen so)
            continue
        left = left_match.group(1)
        right = right_match.group()
        joined, hyphenated = (left + right).casefold(), f"{left}-{right}".casefold()
        if words[joined] == 0 and words[hyphenated] > 0:
            result[index] = dataclasses.replace(result[index], keep_hyphen=True)
    return result


# ---------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class _Style:
    """How the document's body text looks, and the heading styles ranked largest first."""

    body_size: float
    body_bold: bool
    heading_levels: dict[tuple[float, bool], int]


def _document_style(lines: Sequence[Line]) -> _Style:
    body_size = _body_size(lines)
    prose = [line for line in lines if not line.mono]
    bold_chars = sum(len(line.text) for line in prose if line.bold)
    body_bold = bold_chars * 2 > sum(len(line.text) for line in prose)
    style = _Style(body_size, body_bold, {})
    heading_styles = sorted(
        {(line.size, line.bold) for line in lines if _heading_style(line, style)},
        key=lambda key: (-key[0], not key[1]),
    )
    return _Style(body_size, body_bold, {key: min(rank + 1, 6) for rank, key in enumerate(heading_styles)})


def _larger(line: Line, style: _Style) -> bool:
    return line.size >= style.body_size + HEADING_SIZE_STEP and line.size >= style.body_size * 1.1


def _heading_style(line: Line, style: _Style) -> bool:
    """A line that looks like a heading: clearly larger than the body, or bold and short;
    never code, never a sentence, never a table row (but "1 Introduction" set with a wide
    gap after its number is a heading)."""
    larger = _larger(line, style)
    if not larger and (not line.bold or style.body_bold):  # most lines: the cheap test first
        return False
    if line.mono or not any(char.isalpha() for char in line.text):
        return False
    if len(line.cells) > 1 and not (len(line.cells) == 2 and _SECTION_NUMBER.fullmatch(line.cells[0])):
        return False
    words = len(line.text.split())
    if words > MAX_HEADING_WORDS or len(line.text) > MAX_HEADING_CHARS:
        return False
    last = line.text[-1]
    if larger:
        return last not in ",;" and not (last == "." and words > 3)
    return (
        line.bold
        and not style.body_bold
        and line.size >= style.body_size - 0.5
        and len(line.text) <= MAX_BOLD_HEADING_CHARS
        and last not in ".,;:"
    )


def _kind(line: Line, style: _Style) -> str:
    if (line.size, line.bold) in style.heading_levels and _heading_style(line, style):
        return "heading"
    if len(line.cells) > 1:
        return "table"
    if _BULLET.match(line.text):
        return "item"
    return "text"


# ---------------------------------------------------------------------------- outline


def _comparable(text: str) -> set[str]:
    """A title's letters and digits, case-folded, with and without a leading section number."""
    found = {_NON_ALNUM.sub("", text).casefold(), _NON_ALNUM.sub("", _OUTLINE_NUMBER.sub("", text, count=1)).casefold()}
    return {value for value in found if value}


def _outline_headings(lines: Sequence[Line], outline: Sequence[OutlineEntry]) -> dict[int, tuple[int, int]]:
    """Lines that are outline entries: ``{first line index: (level, number of lines)}``.

    Each entry is looked for on its destination page (and the next, for an anchor set
    just above a page break; anywhere when the destination is unknown), in order; a title
    wrapped over several lines is matched by joining them.
    """
    by_page: dict[int, list[int]] = {}
    titles = [_comparable(entry.title) for entry in outline]
    for number, entry in enumerate(outline):
        by_page.setdefault(max(entry.page, 0), []).append(number)
    matched: set[int] = set()
    found: dict[int, tuple[int, int]] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        candidates = [
            number
            for page in (line.page, line.page - 1, 0)  # 0: destination unknown, any page
            for number in by_page.get(page, ())
            if number not in matched
        ]
        span = _match(lines, index, candidates, titles, outline) if candidates else None
        if span is None:
            index += 1
            continue
        number, count = span
        matched.add(number)
        found[index] = (min(max(outline[number].level, 1), 6), count)
        index += count
    return found


def _match(
    lines: Sequence[Line], index: int, candidates: list[int], titles: list[set[str]], outline: Sequence[OutlineEntry]
) -> tuple[int, int] | None:
    first = lines[index]
    text = ""
    for count in range(1, 5):
        if index + count - 1 >= len(lines):
            return None
        line = lines[index + count - 1]
        if line.page != first.page or (count > 1 and line.mono):
            return None
        text = f"{text} {line.text}" if text else line.text
        forms = _comparable(text)
        partial = False
        for number in candidates:
            title = titles[number]
            common = forms & title
            # one letter or digit (an index's "A") only when the line says exactly that
            if common and (max(map(len, common)) >= 2 or text == outline[number].title):
                return number, count
            partial = partial or any(t.startswith(f) and len(f) >= 4 for t in title for f in forms)
        if not partial:
            return None
    return None


# ---------------------------------------------------------------------------- blocks


def _drafts(lines: Sequence[Line], outline: Sequence[OutlineEntry] = ()) -> Iterator[Draft]:
    style = _document_style(lines)
    from_outline = _outline_headings(lines, outline) if outline else {}
    # A document whose outline is mostly found takes its headings from the outline only.
    font_headings = len(from_outline) < OUTLINE_FOUND_SHARE * len(outline) if outline else True
    group: list[Line] = []
    group_kind = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        if index in from_outline:
            if group:
                yield _draft(group_kind, group, style)
                group, group_kind = [], ""
            level, count = from_outline[index]
            text, marks = _joined(list(lines[index : index + count]))
            yield Draft("heading", text, level=level, page_marks=marks)
            index += count
            continue
        index += 1
        kind = _kind(line, style)
        if kind == "heading" and (not font_headings or _continues_text(group_kind, group, line, style)):
            kind = "table" if len(line.cells) > 1 else "text"
        if group and _continues(group_kind, group, kind, line):
            group.append(line)
            continue
        if group:
            yield _draft(group_kind, group, style)
        group, group_kind = [line], ("list" if kind == "item" else kind)
    if group:
        yield _draft(group_kind, group, style)


def _continues_text(group_kind: str, group: list[Line], line: Line, style: _Style) -> bool:
    """A bold (not larger) line that carries on the paragraph or list item above it."""
    if not group or _larger(line, style) or group_kind not in ("text", "list"):
        return False
    previous = group[-1]
    if previous.text[-1] in _SENTENCE_END:
        return False
    return _continues(group_kind, group, "text", line)


def _continues(group_kind: str, group: list[Line], kind: str, line: Line) -> bool:
    previous = group[-1]
    new_page = line.page != previous.page
    step = previous.y - line.y
    close = not new_page and 0 < step <= PARAGRAPH_GAP * max(previous.size, line.size)
    if group_kind == "heading":
        return kind == "heading" and close and (line.size, line.bold) == (previous.size, previous.bold)
    if group_kind == "table":
        return kind == "table" and (close or new_page or step > 0)
    if group_kind == "list":
        if kind == "item":  # items may be spaced a little wider than lines
            return new_page or 0 < step <= LIST_ITEM_GAP * max(previous.size, line.size)
        if kind == "text" and new_page:  # margins move between pages: go by the sentence
            return previous.text[-1] not in _SENTENCE_END
        bullet_x = next((item.x for item in reversed(group) if _BULLET.match(item.text)), previous.x)
        return kind == "text" and close and line.x > bullet_x + 1
    if group_kind == "text":
        if kind != "text" or abs(line.size - previous.size) > 0.5:
            return False
        if new_page or step < -PARAGRAPH_GAP * line.size:
            # the next page or the top of the next column: an unfinished sentence goes on
            return previous.text[-1] not in _SENTENCE_END
        return close
    return False


def _draft(kind: str, lines: list[Line], style: _Style) -> Draft:
    if kind == "heading":
        text, marks = _joined(lines)
        return Draft("heading", text, level=style.heading_levels[(lines[0].size, lines[0].bold)], page_marks=marks)
    if kind == "table" and len(lines) > 1:
        return _rows_draft("table", [_row(line) for line in _without_repeated_header(lines)])
    if kind == "list":
        return _rows_draft("list", [_joined(item) for item in _items(lines)])
    text, marks = _joined(lines)
    return Draft("paragraph", text, page_marks=marks)


def _joined(lines: list[Line]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Lines joined as one paragraph, with the offset at which each page's part starts."""
    text, starts = join_line_offsets(
        [line.text for line in lines], kept_hyphens={i for i, line in enumerate(lines) if line.keep_hyphen}
    )
    marks: list[tuple[int, int]] = []
    for line, start in zip(lines, starts, strict=True):
        if not marks or marks[-1][1] != line.page:
            marks.append((start, line.page))
    return text, tuple(marks)


def _items(lines: list[Line]) -> list[list[Line]]:
    items: list[list[Line]] = []
    for line in lines:
        if _BULLET.match(line.text) or not items:
            items.append([line])
        else:
            items[-1].append(line)
    return items


def _without_repeated_header(rows: list[Line]) -> list[Line]:
    """A table's header row repeated at the top of a continuation page is dropped."""
    kept = rows[:1]
    for previous, row in zip(rows, rows[1:], strict=False):
        if not (row.page != previous.page and row.cells == rows[0].cells):
            kept.append(row)
    return kept


def _row(line: Line) -> tuple[str, tuple[tuple[int, int], ...]]:
    return " | ".join(line.cells), ((0, line.page),)


def _rows_draft(kind: str, rows: list[tuple[str, tuple[tuple[int, int], ...]]]) -> Draft:
    """Rows one per line, keeping the offset where each page's part starts."""
    texts: list[str] = []
    marks: list[tuple[int, int]] = []
    offset = 0
    for text, row_marks in rows:
        for start, page in row_marks:
            if not marks or marks[-1][1] != page:
                marks.append((offset + start, page))
        texts.append(text)
        offset += len(text) + 1
    return Draft(kind, "\n".join(texts), page_marks=tuple(marks))
