"""PDF: document information through pypdf, text with positions and fonts through pdfium.

Characters come from pdfium's text page in content order, grouped into lines at its line
breaks. Per line we read the baseline, the font size and weight, and the horizontal gaps
between words (a gap of several font sizes separates table cells). Lines repeated at the
top or bottom of most pages (page numbers included) are removed; lines are grouped into
headings (larger or bold font), paragraphs, lists and tables; a paragraph or table that
runs over a page break stays one block and lists both pages.
"""

from __future__ import annotations

import ctypes
import io
import logging
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pypdf import PdfReader
from pypdf.generic import BooleanObject, FloatObject, IndirectObject, NameObject, NumberObject

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse._common import (
    Draft,
    assemble,
    collapse_spaces,
    join_line_offsets,
    line_key,
    running_keys,
    strip_controls,
)

# A horizontal gap wider than this many font sizes separates table cells. Gaps that pdfium
# bridged with a space of its own (the words were drawn apart) need less than real spaces.
CELL_GAP = 2.0
CELL_GAP_GENERATED = 1.0
PARAGRAPH_GAP = 1.6  # a baseline step larger than this many font sizes starts a new block
LIST_ITEM_GAP = 2.2  # the same for the step from one list item to the next
HEADING_SIZE_STEP = 1.0  # points above the body size that make a line a heading
HEADER_GAP = 3.0  # a small-font top line this many body sizes above the rest is a page header
RUNNING_ZONE = 2  # lines at the top and bottom of a page that may be running headers
MAX_HEADING_CHARS = 200
MAX_BOLD_HEADING_CHARS = 100
_MARKER = re.compile(r"[•●▪■◦‣∙·*\-–]|\d{1,3}[.)]")
_BULLET = re.compile(rf"(?:{_MARKER.pattern})\s+\S")
_KEYWORD_FIELD = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*=\s*([^;]*)")
_SENTENCE_END = ".!?:;"
_PAGE_LABEL = re.compile(r"(?:page\s+)?[-–—]?\s*\d{1,5}\s*[-–—]?(?:\s*(?:of|/)\s*\d{1,5})?", re.IGNORECASE)
_SOFT_HYPHEN = re.compile(r"[\x02\ufffe]\s*(\S?)")
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_FORCE_BOLD = 1 << 18

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


def read_pdf_metadata(data: bytes) -> dict[str, Any]:
    """Only the document information: what a sync needs for a file it already holds."""
    return _read_information(data)


def parse_pdf(data: bytes) -> ParsedDocument:
    metadata = _read_information(data)
    pages = _read_lines(data)
    if not any(pages):
        raise UnreadableFile("PDF has no extractable text")
    lines = [line for page in _without_running_lines(pages) for line in page]
    if not lines:
        raise UnreadableFile("PDF has no extractable text")
    return assemble("pdf", _drafts(lines), metadata, page_count=len(pages))


# ---------------------------------------------------------------------------- metadata


def _read_information(data: bytes) -> dict[str, Any]:
    """The document information entries (and key=value pairs in /Keywords, and XMP dc:title)."""
    if b"%PDF-" not in data[:1024]:
        raise UnreadableFile("not a PDF")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader = _open_reader(data)
        return _information_fields(reader)


def _open_reader(data: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        encrypted = reader.is_encrypted
    except Exception:  # pypdf raises many kinds of errors on damaged files
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
            if name:
                fields[name] = _plain_value(info[key])
    except Exception:  # a damaged information dictionary yields no fields, not a failure
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
    except Exception:  # malformed XMP is ignored
        return None
    if not titles:
        return None
    title = titles.get("x-default") or next(iter(titles.values()), None)
    return str(title) if title else None


# ---------------------------------------------------------------------------- lines


def _read_lines(data: bytes) -> list[list[Line]]:
    """Every page's text lines, in pdfium's (content) order."""
    try:
        document = pdfium.PdfDocument(data)
    except Exception:  # pdfium refuses what it cannot open
        raise UnreadableFile("not a PDF") from None
    try:
        pages: list[list[Line]] = []
        for index in range(len(document)):
            page = document[index]
            try:
                textpage = page.get_textpage()
                try:
                    pages.append(list(_page_lines(textpage, index + 1)))
                finally:
                    textpage.close()
            finally:
                page.close()
        return pages
    except pdfium.PdfiumError as exc:
        raise UnreadableFile(f"PDF text cannot be read: {exc}") from None
    finally:
        document.close()


def _page_chars(textpage: pdfium.PdfTextPage) -> str:
    """The page's characters, one per pdfium char index (generated spaces and breaks included)."""
    count = textpage.count_chars()
    if count <= 0:
        return ""
    text = textpage.get_text_range(0, count)
    if len(text) == count:
        return text
    # pdfium excluded or inserted characters: ask for each one, keeping indices aligned.
    return "".join(_safe_char(pdfium_c.FPDFText_GetUnicode(textpage.raw, index)) for index in range(count))


def _safe_char(code: int) -> str:
    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return "\ufffd"
    return chr(code)


_LINE = re.compile(r"[^\r\n]+")


def _page_lines(textpage: pdfium.PdfTextPage, page: int) -> Iterator[Line]:
    chars = _page_chars(textpage)
    raw = textpage.raw
    for match in _LINE.finditer(chars):
        segment = match.group()
        stripped = segment.strip()
        if not stripped or not strip_controls(stripped).strip():
            continue
        first = match.start() + (len(segment) - len(segment.lstrip()))
        last = match.start() + len(segment.rstrip()) - 1
        size = _font_size(raw, first)
        cells = _cells(textpage, chars, first, last, size)
        origin_x, origin_y = ctypes.c_double(), ctypes.c_double()
        pdfium_c.FPDFText_GetCharOrigin(raw, first, origin_x, origin_y)
        yield Line(
            page=page,
            text=_clean(stripped),
            cells=cells,
            x=round(origin_x.value, 1),
            y=round(origin_y.value, 1),
            size=round(size * 2) / 2,
            bold=_is_bold(raw, first) and _is_bold(raw, last),
        )


def _font_size(raw: Any, index: int) -> float:
    """The size the character is drawn at: its font size scaled by its text and page matrices.

    pdfium's font size is the ``Tf`` operand alone; many producers use ``1 Tf`` and scale
    with the text matrix instead.
    """
    size = pdfium_c.FPDFText_GetFontSize(raw, index)
    matrix = pdfium_c.FS_MATRIX()
    if pdfium_c.FPDFText_GetMatrix(raw, index, matrix):
        scale = abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
        if scale > 0:
            size *= scale
    return size


def _cells(textpage: pdfium.PdfTextPage, chars: str, first: int, last: int, size: float) -> tuple[str, ...]:
    """The line's text split where the gap between two words is wider than CELL_GAP font sizes."""
    cells: list[str] = []
    cell_start = first
    for gap in re.finditer(r"\s+", chars[first : last + 1]):
        before, after = first + gap.start() - 1, first + gap.end()
        try:
            left_edge = textpage.get_charbox(before)[2]
            right_edge = textpage.get_charbox(after)[0]
        except pdfium.PdfiumError:
            continue
        drawn_space = any(not pdfium_c.FPDFText_IsGenerated(textpage.raw, i) for i in range(before + 1, after))
        if right_edge - left_edge > (CELL_GAP if drawn_space else CELL_GAP_GENERATED) * max(size, 1.0):
            cells.append(chars[cell_start : before + 1])
            cell_start = after
    cells.append(chars[cell_start : last + 1])
    texts = [text for text in map(_clean, cells) if text]
    if len(texts) > 1 and _MARKER.fullmatch(texts[0]):
        texts[:2] = [f"{texts[0]} {texts[1]}"]  # a list bullet set apart from its item
    return tuple(texts)


def _clean(text: str) -> str:
    """Line text with pdfium's line-end hyphen marks resolved, controls dropped, spaces collapsed.

    pdfium joins a line ending in a hyphen with the next one and marks the hyphen as
    U+FFFE (or U+0002): it is dropped before a lower-case letter, kept otherwise.
    """
    text = _SOFT_HYPHEN.sub(lambda m: m.group(1) if m.group(1)[:1].islower() else "-" + m.group(1), text)
    return collapse_spaces(strip_controls(text))


def _is_bold(raw: Any, index: int) -> bool:
    if pdfium_c.FPDFText_GetFontWeight(raw, index) >= 600:
        return True
    name = ctypes.create_string_buffer(256)
    flags = ctypes.c_int(0)
    length = pdfium_c.FPDFText_GetFontInfo(raw, index, name, len(name), flags)
    if length <= 0:
        return False
    return bool(flags.value & _FORCE_BOLD) or bool(_BOLD_NAME.search(name.value.decode("latin-1")))


# ---------------------------------------------------------------------------- running lines


def _without_running_lines(pages: list[list[Line]]) -> list[list[Line]]:
    """Pages without the lines repeated at the top or bottom of most pages."""
    by_height = [sorted(range(len(page)), key=lambda i, page=page: -page[i].y) for page in pages]
    tops = [order[:RUNNING_ZONE] for order in by_height]
    bottoms = [order[-RUNNING_ZONE:] for order in by_height]
    top_keys = running_keys([[page[i].text for i in zone] for page, zone in zip(pages, tops)])
    bottom_keys = running_keys([[page[i].text for i in zone] for page, zone in zip(pages, bottoms)])
    kept: list[list[Line]] = []
    for page, top, bottom in zip(pages, tops, bottoms):
        drop = {i for i in top if line_key(page[i].text) in top_keys}
        drop |= {i for i in bottom if line_key(page[i].text) in bottom_keys}
        kept.append([line for i, line in enumerate(page) if i not in drop])
    if not any(kept):
        # Every line "repeats": one line a page, all alike. That is the document, not its
        # furniture; refusing it as "no extractable text" would lose it.
        kept = [list(page) for page in pages]
    body_size = _body_size([line for page in kept for line in page])
    return [_without_page_furniture(page, body_size) for page in kept]


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
    return [line for line in page if not any(line is dropped for dropped in drop)]


def _body_size(lines: Sequence[Line]) -> float:
    """The font size most of the text is set in."""
    sizes: Counter[float] = Counter()
    for line in lines:
        sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


# ---------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class _Style:
    """How the document's body text looks, and the heading styles ranked largest first."""

    body_size: float
    body_bold: bool
    heading_levels: dict[tuple[float, bool], int]


def _document_style(lines: Sequence[Line]) -> _Style:
    body_size = _body_size(lines)
    bold_chars = sum(len(line.text) for line in lines if line.bold)
    body_bold = bold_chars * 2 > sum(len(line.text) for line in lines)
    style = _Style(body_size, body_bold, {})
    heading_styles = sorted(
        {(line.size, line.bold) for line in lines if _heading_style(line, style)},
        key=lambda key: (-key[0], not key[1]),
    )
    return _Style(body_size, body_bold, {key: min(rank + 1, 6) for rank, key in enumerate(heading_styles)})


def _heading_style(line: Line, style: _Style) -> bool:
    if len(line.cells) > 1 or not any(char.isalpha() for char in line.text):
        return False
    if line.size >= style.body_size + HEADING_SIZE_STEP:
        return len(line.text) <= MAX_HEADING_CHARS
    return (
        line.bold
        and not style.body_bold
        and line.size >= style.body_size - 0.5
        and len(line.text) <= MAX_BOLD_HEADING_CHARS
        and line.text[-1] not in ".,;:"
    )


def _kind(line: Line, style: _Style) -> str:
    if (line.size, line.bold) in style.heading_levels and _heading_style(line, style):
        return "heading"
    if len(line.cells) > 1:
        return "table"
    if _BULLET.match(line.text):
        return "item"
    return "text"


def _drafts(lines: Sequence[Line]) -> Iterator[Draft]:
    style = _document_style(lines)
    group: list[Line] = []
    group_kind = ""
    for line in lines:
        kind = _kind(line, style)
        if group and _continues(group_kind, group, kind, line):
            group.append(line)
            continue
        if group:
            yield _draft(group_kind, group, style)
        group, group_kind = [line], ("list" if kind == "item" else kind)
    if group:
        yield _draft(group_kind, group, style)


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
        bullet_x = next((item.x for item in reversed(group) if _BULLET.match(item.text)), previous.x)
        return kind == "text" and (close or new_page) and line.x > bullet_x + 1
    if group_kind == "text":
        if kind != "text" or abs(line.size - previous.size) > 0.5:
            return False
        if new_page:
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
    text, starts = join_line_offsets([line.text for line in lines])
    marks: list[tuple[int, int]] = []
    for line, start in zip(lines, starts):
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
    for previous, row in zip(rows, rows[1:]):
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
