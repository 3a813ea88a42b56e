"""PDF line reading through pdfium: characters in content order grouped into lines, with baseline,
font size, weight, pitch and table-cell gaps; the outline entries; soft hyphens cleaned."""

from __future__ import annotations

import ctypes
import re
from codecs import decode
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pypdfium2 as pdfium

from ingest.parse._common import (
    collapse_spaces,
    drop_controls,
)
from ingest.parse.pdf_calls import (
    COUNT_CHARS,
    COUNT_RECTS,
    GET_CHAR_BOX,
    GET_CHAR_ORIGIN,
    GET_FONT_INFO,
    GET_FONT_SIZE,
    GET_FONT_WEIGHT,
    GET_MATRIX,
    GET_RECT,
    GET_TEXT,
    GET_UNICODE,
    IS_GENERATED,
    TEXT_INDEX,
    Outputs,
)
from ingest.parse.pdf_superscripts import RAISED, continues_mark, with_marks_apart

# A horizontal gap wider than this many font sizes separates table cells. Gaps that pdfium
# bridged with a space of its own (the words were drawn apart) need less than real spaces.
CELL_GAP = 2.0


CELL_GAP_GENERATED = 1.0


JUSTIFIED_GAP = 2.5


PARAGRAPH_GAP = 1.6  # a baseline step larger than this many font sizes starts a new block


_MARKER = re.compile(r"[•●▪■◦‣∙·*\-–]|\d{1,3}[.)]")


# A bullet drawn from a symbol font without a Unicode mapping comes out as a C1 control
# (TeX's cmsy bullet: U+0088) or a private-use character (OpenSymbol: U+F095).
_UNMAPPED_BULLET = re.compile(r"^[\x80-\x9f\ue000-\uf8ff](?=\s|$)")


_SOFT_HYPHEN = re.compile(r"[\x02\ufffe]\s*(\S?)")


# Bold by name: "-Bold", "Semibold", "Black", "Heavy", "Demi", URW's "-Medi", and TeX's
# bold extended faces (CMBX12, CMSSBX10, cm-super SFBX1200, EC ECBX1200, CMB10).
_BOLD_NAME = re.compile(r"bold|black|heavy|demi|-medi|(?:cm|ec|sf|tc)(?:ss|tt)?bx|cmb\d", re.IGNORECASE)


_MONO_NAME = re.compile(
    r"mono|courier|consol|menlo|typewriter|(?:cm|sf|ec|tc)(?:s|i|sl)?tt\d|lmtt|inconsolata", re.IGNORECASE
)


_FIXED_PITCH = 1


_FORCE_BOLD = 1 << 18


_SHY = "\u00ad"  # a line-end hyphen pdfium joined, until the document decides (see _clean)


_LEADING_LETTERS = re.compile(r"[^\W\d_]+")


MAX_OUTLINE_ENTRIES = 5000


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


@dataclass(frozen=True)
class OutlineEntry:
    """One bookmark: its title, depth (1 = top level) and destination page (1-based; 0 unknown)."""

    title: str
    level: int
    page: int


def _outline(document: pdfium.PdfDocument) -> list[OutlineEntry]:
    """The document's bookmarks in order (read by pdfium, which follows GoTo actions and
    named destinations); a damaged outline is no outline: headings then come from fonts."""
    entries: list[OutlineEntry] = []
    try:
        for bookmark in document.get_toc(max_depth=12):
            if len(entries) >= MAX_OUTLINE_ENTRIES:
                break
            title = collapse_spaces(drop_controls((bookmark.get_title() or "").translate(_T1_LIGATURES)))
            destination = bookmark.get_dest()
            page = destination.get_index() if destination is not None else None
            if title:
                entries.append(OutlineEntry(title, bookmark.level + 1, page + 1 if page is not None else 0))
    except Exception:  # noqa: BLE001 - pdfium errors on a damaged outline: keep what was read
        return entries
    return entries


def _page_chars(raw: Any) -> str:
    """The characters of the text page ``raw`` (an FPDF_TEXTPAGE), one per pdfium char index
    (generated spaces and breaks included).

    pdfium gives a character outside the Basic Multilingual Plane (math italic 𝑥) as two
    char indices, a UTF-16 surrogate pair: the pair becomes the character at the first
    index and a NUL (dropped with the other controls) at the second, so indices stay aligned.
    """
    count = COUNT_CHARS(raw)
    if count == -1:
        raise pdfium.PdfiumError("Failed to get character count.")
    if count <= 0:
        return ""
    text = _text_range(raw, count)
    if len(text) == count:
        return text
    # pdfium's UTF-16 units, one per char index unless it excluded or inserted characters
    buffer = (ctypes.c_uint16 * (count + 1))()
    written = GET_TEXT(raw, 0, count, ctypes.byref(buffer)) - 1  # without the closing NUL
    if written == count:
        # one unit per char index: the pairs are joined by decoding, then split again; the
        # text marks a line-end hyphen U+FFFE where the character itself is U+0002
        units = bytes(buffer)[: 2 * count].decode("utf-16-le", "surrogatepass").replace("\ufffe", "\x02")
        return _WIDE_OR_LONE_SURROGATE.sub(_aligned, units)
    # pdfium left characters out of the text (controls): ask for each one, keeping indices aligned
    get_unicode = GET_UNICODE
    codes = [get_unicode(raw, index) for index in range(count)]
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


def _text_range(raw: Any, count: int) -> str:
    """pypdfium2's ``PdfTextPage.get_text_range(0, count)``, made from the handle: the text of the
    chars from the first to the last one pdfium does not leave out of its text (pdfium may read
    past a range whose end it leaves out: crbug.com/pdfium/2079)."""
    start, end = 0, count - 1
    while start <= end and (text_start := TEXT_INDEX(raw, start)) == -1:
        start += 1
    while start <= end and (text_end := TEXT_INDEX(raw, end)) == -1:
        end -= 1
    if start > end:
        return ""
    size = text_end + 2 - text_start  # with the closing NUL
    buffer = (ctypes.c_ushort * size)()
    written = GET_TEXT(raw, start, end + 1 - start, ctypes.byref(buffer))
    if written > size:
        raise AssertionError(f"Buffer too small: {size} vs {written}")
    return decode(memoryview(buffer)[: written - 1], "utf-16-le", errors="ignore")


_WIDE_OR_LONE_SURROGATE = re.compile("[\U00010000-\U0010ffff\ud800-\udfff]")


def _aligned(match: re.Match[str]) -> str:
    """A character outside the BMP (two char indices) as itself and a NUL; a lone surrogate as U+FFFD."""
    char = match.group()
    return "\ufffd" if "\ud800" <= char <= "\udfff" else char + "\x00"


def _safe_char(code: int) -> str:
    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return "\ufffd"
    return chr(code)


# Characters that need more than spaces collapsed (see _clean); a page without any is
# cleaned by splitting at whitespace alone.
_NEEDS_CLEANING = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ue000-\uf8ff\ufffd\ufffe]")


FontStyles = dict[tuple[bytes, int], tuple[bool, bool]]


class DocumentMemo:
    """What one document's pages share: its fonts' styles, looked at once, and positions rounded
    once (a margin, a baseline recurs on every page; ``round`` to a digit costs 5 dict lookups)."""

    def __init__(self) -> None:
        self.fonts: FontStyles = {}
        self.rounded: dict[float, float] = {}
        self.out = Outputs()


_new = object.__new__


def _unclean_line_text(stripped: str) -> str | None:
    """The text of a line with characters to clean (see _clean); None for controls only."""
    if not drop_controls(stripped).strip():
        return None
    return _clean(stripped)


def _line_texts(chars: str) -> Iterator[tuple[int, str, str, list[str] | None]]:
    """(char index of its first character, characters, text, words or None) of each line of a page's
    characters: a plain line's words, None for a line cleaned (see _clean); lines of controls left out."""
    needs_cleaning = None if _NEEDS_CLEANING.search(chars) is None else _NEEDS_CLEANING.search  # (a plain page)
    end = 0  # of the previous line and its break
    for segment in (chars.replace("\r", "\n") if "\r" in chars else chars).split("\n"):
        first, end = end, end + len(segment) + 1
        stripped = segment.strip()
        if not stripped:
            continue
        first += 0 if stripped is segment else segment.find(stripped)
        if needs_cleaning is None or needs_cleaning(stripped) is None:  # most lines, even on pages with a hyphen mark
            words = stripped.split()
            yield first, stripped, stripped if len(words) == 1 else " ".join(words), words
        elif (text := _unclean_line_text(stripped)) is not None:
            yield first, stripped, text, None


# A line is what pdfium's text puts between two line breaks (\r, \n), without the whitespace around
# it. pdfium's text rectangles of a line break where its text object changes. Word gaps are measured
# one by one only when two objects lie a cell gap apart (table cells, "1 Introduction" in most
# generators); a line whose objects follow each other closely is prose, and skipping the measuring
# saves most of pdfium's calls. A line without a word gap is one cell however its objects lie: not asked.
def _page_lines(raw: Any, page: int, memo: DocumentMemo) -> list[Line]:
    """The lines of the text page ``raw`` (an FPDF_TEXTPAGE): each one's text, first character's
    baseline origin, size and font, and where its text objects lie a cell gap apart, its cells
    (see above)."""
    chars = _page_chars(raw)
    if not chars or chars.isspace():
        return []
    out, fonts, rounded = memo.out, memo.fonts, memo.rounded
    # pdfium's calls, output values and helpers bound to locals: this loop runs for every line
    get_font_size, get_matrix, count_rects = GET_FONT_SIZE, GET_MATRIX, COUNT_RECTS
    get_char_origin, get_font_info = GET_CHAR_ORIGIN, GET_FONT_INFO
    left, bottom, matrix = out.left, out.bottom, out.matrix_floats
    left_ref, bottom_ref = out.left_ref, out.bottom_ref
    matrix_ref, name, name_ref, flags, flags_ref = out.matrix_ref, out.name, out.name_ref, out.flags, out.flags_ref
    lines: list[Line] = []
    previous_last = -1  # char index of the last character of the line before
    for first, stripped, text, words in _line_texts(chars):
        last, previous_last = previous_last, first + len(stripped) - 1
        # the size it is drawn at: its font size (the Tf operand; many use 1 Tf) scaled by its matrices
        size: float = get_font_size(raw, first)
        if get_matrix(raw, first, matrix_ref):  # (drawn_size, inlined)
            scale = abs(matrix[0] * matrix[3] - matrix[1] * matrix[2]) ** 0.5
            if scale > 0:
                size *= scale
        rects = -1  # not counted
        cells: tuple[str, ...] = (text,)
        if (words is None or len(words) > 1) and (" " in stripped or "\t" in stripped or "\xa0" in stripped):
            rects = count_rects(raw, first, len(stripped))
            if rects > 1 and _wide_gap_between_rects(out, raw, rects, size):
                cells = _cells(out, raw, stripped, first, text, size, words)
        get_char_origin(raw, first, left_ref, bottom_ref)
        left_value, bottom_value = left.value, bottom.value  # (each .value makes a new float)
        x, y = rounded.get(left_value), rounded.get(bottom_value)
        if x is None:
            x = rounded[left_value] = round(left_value, 1)
        if y is None:
            y = rounded[bottom_value] = round(bottom_value, 1)
        # (bold, monospace) of the first character's font: a font's name and flags identify it
        font = (name.value, flags.value) if get_font_info(raw, first, name_ref, 256, flags_ref) > 0 else (b"", 0)
        bold, mono = fonts.get(font) or _font_style(raw, first, font, fonts)
        if (bold or mono) and len(stripped) > 1:
            bold, mono = _line_style(out, raw, first, first + len(stripped) - 1, rects, fonts, bold, mono)
        if len(cells) == 1 and (spaced := with_marks_apart(raw, first, stripped, out)) is not stripped:
            text = " ".join(spaced.split()) if words is not None else _unclean_line_text(spaced) or text
            cells = (text,)
        space = _after_mark(lines[-1], raw, last, first, x, y, size, out) if lines and len(cells) == 1 else None
        if space is not None:
            joined = lines[-1].text + space + text
            lines[-1] = replace(lines[-1], text=joined, cells=(joined,))
            continue
        # the frozen Line, its fields set directly (its __init__'s object.__setattr__ costs 3 times as much)
        line: Line = _new(Line)
        fields = line.__dict__
        fields["page"], fields["text"], fields["cells"], fields["x"], fields["y"] = page, text, cells, x, y
        fields["size"], fields["bold"], fields["mono"] = round(size * 2) / 2, bold, mono
        lines.append(line)
    return lines


def _after_mark(
    previous: Line, raw: Any, last: int, first: int, x: float, y: float, size: float, out: Outputs
) -> str | None:
    """How the line starting at char index ``first`` (at ``x``, ``y``) joins the line before ("" or
    " ") when it is the rest of it, which pdfium broke off after a superscript mark; None otherwise."""
    if len(previous.cells) > 1 or x <= previous.x or abs(previous.y - y) > RAISED * max(size, 1.0):
        return None
    return continues_mark(raw, last, first, out)


def _line_style(
    out: Outputs, raw: Any, first: int, last: int, rects: int, fonts: FontStyles, bold: bool, mono: bool
) -> tuple[bool, bool]:
    """A line whose first character is bold (monospace) is so when its last one is too: a line drawn
    by one text object (one rectangle) has one font, and is not asked."""
    if rects < 0:
        rects = COUNT_RECTS(raw, first, last - first + 1)
    if rects == 1:
        return bold, mono
    last_bold, last_mono = _font(out, raw, last, fonts)
    return bold and last_bold, mono and last_mono


def _wide_gap_between_rects(out: Outputs, raw: Any, count: int, size: float) -> bool:
    """Whether two consecutive text rectangles (of the range last given to FPDFText_CountRects)
    lie further apart than a cell gap."""
    get_rect, left, right = GET_RECT, out.left, out.right
    left_ref, top_ref, right_ref, bottom_ref = out.left_ref, out.top_ref, out.right_ref, out.bottom_ref
    limit = CELL_GAP_GENERATED * max(size, 1.0)
    get_rect(raw, 0, left_ref, top_ref, right_ref, bottom_ref)
    previous_right = right.value
    for index in range(1, count):
        get_rect(raw, index, left_ref, top_ref, right_ref, bottom_ref)
        if left.value - previous_right > limit:
            return True
        previous_right = right.value
    return False


def _font(out: Outputs, raw: Any, index: int, fonts: FontStyles) -> tuple[bool, bool]:
    """(bold, monospace) of the character's font."""
    name, flags = out.name, out.flags
    font = (name.value, flags.value) if GET_FONT_INFO(raw, index, out.name_ref, 256, out.flags_ref) > 0 else (b"", 0)
    style = fonts.get(font)
    return _font_style(raw, index, font, fonts) if style is None else style


def _font_style(raw: Any, index: int, font: tuple[bytes, int], fonts: FontStyles) -> tuple[bool, bool]:
    """(bold, monospace) of a font not seen before in the document, from its weight (asked of the
    character at ``index``), flags and name; remembered in ``fonts``."""
    weight = GET_FONT_WEIGHT(raw, index)
    name, flags = font[0].decode("latin-1"), font[1]
    bold = weight >= 600 or bool(flags & _FORCE_BOLD) or bool(_BOLD_NAME.search(name))
    mono = bool(flags & _FIXED_PITCH) or bool(_MONO_NAME.search(name))
    style = fonts[font] = (bold, mono)
    return style


_GAP = re.compile(r"\s+")


def _cells(
    out: Outputs, raw: Any, line: str, first: int, text: str, size: float, words: list[str] | None
) -> tuple[str, ...]:
    """The line's text (``line``, from char index ``first``; ``text``: cleaned; ``words``: a plain
    line's words, else None) split where the gap between two words is wider than CELL_GAP font sizes.

    A justified line, whose every word gap is wide but all of them alike and below
    JUSTIFIED_GAP font sizes (a loose narrow column), is prose: one cell.
    """
    # pdfium's calls bound to locals: this loop runs for every word gap of such lines
    char_box, is_generated = GET_CHAR_BOX, IS_GENERATED
    left, right = out.left, out.right
    left_ref, right_ref, bottom_ref, top_ref = out.left_ref, out.right_ref, out.bottom_ref, out.top_ref
    generated_limit = CELL_GAP_GENERATED * max(size, 1.0)
    drawn_limit = CELL_GAP * max(size, 1.0)
    cuts: list[tuple[int, int]] = []
    widths: list[float] = []
    gaps = _gaps(line, text, words)
    boxed, boxed_right = -1, 0.0  # the last character whose box was asked, and its right edge
    for gap_start, gap_end in gaps:
        before = gap_start - 1
        if before == boxed:  # a one-character word: its box was asked as the last gap's right side
            before_right = boxed_right
        else:
            char_box(raw, first + before, left_ref, right_ref, bottom_ref, top_ref)
            before_right = right.value
        char_box(raw, first + gap_end, left_ref, right_ref, bottom_ref, top_ref)
        boxed, boxed_right = gap_end, right.value
        width = left.value - before_right
        if width <= generated_limit:
            continue
        # pdfium marks the spaces it inserted itself; a drawn space needs a wider gap.
        if width <= drawn_limit and (
            gap_end - gap_start > 1 or line[gap_start] != " " or not is_generated(raw, first + gap_start)
        ):
            continue
        cuts.append((gap_start, gap_end))
        widths.append(width)
    if not cuts or (
        len(cuts) == len(gaps) >= 3 and max(widths) <= min(1.6 * min(widths), JUSTIFIED_GAP * max(size, 1.0))
    ):
        return (text,)
    pieces: list[str] = []
    cell_start = 0
    for end, start in cuts:
        pieces.append(line[cell_start:end])
        cell_start = start
    pieces.append(line[cell_start:])
    # (a plain piece, cut at gaps, has a word: not empty; a single-spaced line's pieces are their text)
    if words is None:
        texts = [cell for cell in map(_clean, pieces) if cell]
    else:
        texts = pieces if text == line else [" ".join(piece.split()) for piece in pieces]
    if len(texts) > 1 and _MARKER.fullmatch(texts[0]):
        texts[:2] = [f"{texts[0]} {texts[1]}"]  # a list bullet set apart from its item
    return tuple(texts)


def _gaps(line: str, text: str, words: list[str] | None) -> list[tuple[int, int]]:
    """(start, end) of each run of whitespace in ``line``. In a plain line set with single spaces
    (its text is the line itself) each one follows from the words' lengths, which costs a
    fraction of finding them with a regular expression."""
    if words is None or text != line:
        return [gap.span() for gap in _GAP.finditer(line)]
    gaps: list[tuple[int, int]] = []
    position = -1
    for word in words[:-1]:
        position += len(word) + 1
        gaps.append((position, position + 1))
    return gaps


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
    return _UNMAPPED_BULLET.sub("•", collapse_spaces(drop_controls(text)))
