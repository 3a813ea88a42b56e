"""PDF: document information through pypdf, text, positions, fonts and outline through pdfium.

Characters come from pdfium's text page in content order, grouped into lines at its line
breaks; filled form fields' values come from their widgets (pdf_forms). Per line we read the
baseline, the font size, weight and pitch, and where text objects lie a cell gap apart, the
gaps between words (a wide gap separates table cells; alike wide gaps in a justified line do
not). Running headers and footers (repeated as they are in one height band, or carrying the
page number) are removed. Headings are the document's outline entries, found on their pages,
when it has an outline; otherwise lines clearly larger than the prose, or bold and short, that
do not read like a sentence. Lines are grouped into headings, paragraphs, lists and tables; a
paragraph or table that runs over a page (or column) break stays one block and lists both pages.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ingest.collector import collector_paused
from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse._common import (
    Draft,
    assemble,
    join_line_offsets,
)
from ingest.parse.pdf_forms import FormFields, with_field_values
from ingest.parse.pdf_info import _read_information
from ingest.parse.pdf_lines import (
    _MARKER,
    _SHY,
    PARAGRAPH_GAP,
    DocumentMemo,
    Line,
    OutlineEntry,
    _outline,
    _page_lines,
)
from ingest.parse.pdf_running import _body_size, _with_hyphens_resolved, _without_running_lines
from ingest.parse.pdf_table_rows import with_wrapped_rows_joined
from ingest.parse.pdf_tags import TagHeadings, document_headings

LIST_ITEM_GAP = 2.2  # the same for the step from one list item to the next


JOINED_LINE_STEP = 1.3  # font sizes added to PARAGRAPH_GAP for each line pdfium joined to the previous one


_NONE: Mapping[int, int] = MappingProxyType({})


HEADING_SIZE_STEP = 1.0  # points above the body size that make a line a heading


MAX_HEADING_CHARS = 200


MAX_BOLD_HEADING_CHARS = 100


_BULLET = re.compile(rf"(?:{_MARKER.pattern})\s+\S")


_BULLET_FIRST = "•●▪■◦‣∙·*-–"  # what _MARKER's symbols start with; its numbers start with a digit (\d: isdecimal)


_SENTENCE_END = ".!?:;"


_SECTION_NUMBER = re.compile(r"(?:\d{1,3}|[A-Z])(?:\.\d{1,3}){0,5}\.?")


_NON_ALNUM = re.compile(r"[\W_]+")


_OUTLINE_NUMBER = re.compile(
    r"^(?:(?:\d+|[A-Z]|[IVXLC]+)(?:\.\d+)*\.?|(?:chapter|part|section|appendix)\s+\S+?[.:]?)\s+", re.IGNORECASE
)


OUTLINE_FOUND_SHARE = 0.5  # below this share of entries found, font statistics find headings too


MAX_HEADING_WORDS = 16


# pypdf logs a warning for every repair it makes to a damaged file; a file we cannot
# read becomes an UnreadableFile with its reason, so those warnings are only noise.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def read_pdf_metadata(data: bytes, labels: Collection[str] = ()) -> dict[str, Any]:
    """Only the document information: what a sync needs for a file it already holds (``labels``: the
    corpus's access labels, see pdf_keywords.access_words)."""
    return _read_information(data, labels=labels)


def parse_pdf(data: bytes, labels: Collection[str] = ()) -> ParsedDocument:
    with collector_paused():  # (also when called alone, not through parse_bytes)
        return _parse(data, labels)


def _parse(data: bytes, labels: Collection[str]) -> ParsedDocument:
    try:
        document: pdfium.PdfDocument | None = pdfium.PdfDocument(data)
    except Exception:  # noqa: BLE001 - pdfium refuses what it cannot open (after pypdf says why, below)
        document = None
    try:
        # pdfium's document also checks the information fields that decide access (see pdf_info)
        metadata = _read_information(data, document, labels)
        if document is None:
            raise UnreadableFile("not a PDF")
        pages, outline = _read_pages_and_outline(document, data)
    finally:
        if document is not None:
            document.close()
    if not any(pages):
        raise UnreadableFile("PDF has no extractable text")
    lines = [line for page in _without_running_lines(pages) for line in page]
    if not lines:
        raise UnreadableFile("PDF has no extractable text")
    # pdfium gives a line that ends in a hyphen joined with the next one: the line after it
    # sits one more baseline below for each such join, which must not read as a paragraph break.
    joins = {index: line.text.count(_SHY) for index, line in enumerate(lines) if _SHY in line.text}
    lines = _with_hyphens_resolved(lines)
    joined = {id(lines[index]): count for index, count in joins.items()}
    lines = with_wrapped_rows_joined(lines)
    return assemble("pdf", _drafts(lines, outline, joined), metadata, page_count=len(pages))


def _read_pages_and_outline(document: pdfium.PdfDocument, data: bytes) -> tuple[list[list[Line]], list[OutlineEntry]]:
    """Every page's text lines, in pdfium's (content) order, and the document's own headings:
    its outline, completed by its tagged headings (see ``document_headings``)."""
    try:
        pages: list[list[Line]] = []
        forms = FormFields(document)  # (before pages are loaded, as pdfium's form environment wants)
        memo = DocumentMemo()  # one document's fonts, looked at once
        tags = TagHeadings(document, data)  # a tagged PDF's headings, read while each page is open
        # pdfium's page and text page handles, not pypdfium2's PdfPage and PdfTextPage: their
        # finalizers and parent bookkeeping cost more than a small page's text (pages are closed here)
        for index in range(len(document)):
            page = pdfium_c.FPDF_LoadPage(document.raw, index)
            if not page:
                raise pdfium.PdfiumError("Failed to load page.")
            try:
                textpage = pdfium_c.FPDFText_LoadPage(page)
                if not textpage:
                    raise pdfium.PdfiumError("Failed to load text page.")
                try:
                    lines = _page_lines(textpage, index + 1, memo)
                    pages.append(with_field_values(lines, forms.page_values(page), index + 1))
                    tags.read_page(page, textpage, index + 1)
                finally:
                    pdfium_c.FPDFText_ClosePage(textpage)
            finally:
                pdfium_c.FPDF_ClosePage(page)
        return pages, document_headings(_outline(document), tags.entries)
    except pdfium.PdfiumError as exc:
        raise UnreadableFile(f"PDF text cannot be read: {exc}") from None


@dataclass(frozen=True)
class _Style:
    """How the document's body text looks, and the heading styles ranked largest first."""

    body_size: float
    body_bold: bool
    heading_levels: dict[tuple[float, bool], int]
    hyphens_kept: bool = True  # some line ends in a hyphen the joining keeps (most documents: none)


def _document_style(lines: Sequence[Line]) -> _Style:
    body_size = _body_size(lines)
    prose_chars = bold_chars = 0  # (one pass over the lines, not three)
    for line in lines:
        if not line.mono:
            prose_chars += len(line.text)
            if line.bold:
                bold_chars += len(line.text)
    body_bold = bold_chars * 2 > prose_chars
    style = _Style(body_size, body_bold, {})
    # (_heading_style's first test, inlined: most lines are neither larger nor bold)
    larger = max(body_size + HEADING_SIZE_STEP, body_size * 1.1)
    heading_styles = sorted(
        {
            (line.size, line.bold)
            for line in lines
            if (line.size >= larger or (line.bold and not body_bold)) and _heading_style(line, style)
        },
        key=lambda key: (-key[0], not key[1]),
    )
    levels = {key: min(rank + 1, 6) for rank, key in enumerate(heading_styles)}
    return _Style(body_size, body_bold, levels, any(line.keep_hyphen for line in lines))


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
    first = line.text[:1]  # (a marker's first character, looked at before the regular expression)
    if first and (first in _BULLET_FIRST or first.isdecimal()) and _BULLET.match(line.text):
        return "item"
    return "text"


def _comparable(text: str) -> set[str]:
    """A title's letters and digits, case-folded, with and without a leading section number."""
    number = _OUTLINE_NUMBER.match(text)
    found = (
        {_letters_and_digits(text), _letters_and_digits(text[number.end() :])}
        if number
        else {_letters_and_digits(text)}
    )
    return {value for value in found if value}


# ASCII's characters that are neither letters nor digits (re's [\W_])
_ASCII_NON_ALNUM = bytes(code for code in range(128) if not chr(code).isalnum())


def _letters_and_digits(text: str) -> str:
    """``text``'s letters and digits, case-folded (most lines are ASCII: deleted as bytes, which
    costs a fraction of the regular expression)."""
    if text.isascii():
        return text.encode("ascii").translate(None, _ASCII_NON_ALNUM).decode("ascii").lower()
    return _NON_ALNUM.sub("", text).casefold()


def _outline_headings(lines: Sequence[Line], outline: Sequence[OutlineEntry]) -> dict[int, tuple[int, int]]:
    """Lines that are outline entries: ``{first line index: (level, number of lines)}``.

    Each entry is looked for on its destination page (and the next, for an anchor set
    just above a page break; anywhere when the destination is unknown), in order; a title
    wrapped over several lines is matched by joining them.
    """
    entries = _OutlineIndex(outline)
    found: dict[int, tuple[int, int]] = {}
    index = 0
    buckets: list[int] = []
    buckets_page = 0  # the page ``buckets`` are for (0: none yet, or an entry was matched since)
    while index < len(lines):
        page = lines[index].page
        if page != buckets_page:
            buckets, buckets_page = entries.buckets(page), page
        span = _match(lines, index, buckets, entries) if buckets else None
        if span is None:
            index += 1
            continue
        number, count = span
        entries.matched(number)
        buckets_page = 0
        found[index] = (min(max(outline[number].level, 1), 6), count)
        index += count
    return found


class _OutlineIndex:
    """The outline entries not matched yet, by destination page, each page's entries indexed by
    their titles' comparable forms (see _comparable) and those forms' prefixes.

    A line on page p is a candidate for the entries of pages p, p - 1 and 0 (destination
    unknown), in that order and in outline order within a page: one dictionary lookup per form
    finds those sharing a form, instead of comparing the line with every entry.
    """

    def __init__(self, outline: Sequence[OutlineEntry]) -> None:
        self.outline = outline
        self.titles = [_comparable(entry.title) for entry in outline]
        self.numbers_of: dict[int, list[int]] = {}  # page: its entries, in outline order
        for number, entry in enumerate(outline):
            self.numbers_of.setdefault(max(entry.page, 0), []).append(number)
        self.unmatched = {page: len(numbers) for page, numbers in self.numbers_of.items()}
        self.done: set[int] = set()
        self.forms_of: dict[int, dict[str, list[int]]] = {}  # page: form: its entries, in outline order
        self.prefixes_of: dict[int, dict[str, list[int]]] = {}  # page: prefix of 4+ characters: entries

    def buckets(self, page: int) -> list[int]:
        """The pages whose unmatched entries a line on ``page`` is compared with, in order."""
        unmatched = self.unmatched
        return [bucket for bucket in (page, page - 1, 0) if unmatched.get(bucket)]

    def matched(self, number: int) -> None:
        self.done.add(number)
        self.unmatched[max(self.outline[number].page, 0)] -= 1

    def forms(self, page: int) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
        forms = self.forms_of.get(page)
        if forms is None:
            forms = self.forms_of[page] = {}
            prefixes: dict[str, list[int]] = {}
            self.prefixes_of[page] = prefixes
            for number in self.numbers_of[page]:
                for form in self.titles[number]:
                    forms.setdefault(form, []).append(number)
                    for end in range(4, len(form) + 1):
                        prefixes.setdefault(form[:end], []).append(number)
        return forms, self.prefixes_of[page]


def _title_heading(
    lines: Sequence[Line], found: dict[int, tuple[int, int]], body_size: float
) -> dict[int, tuple[int, int]]:
    """The document's title (LaTeX's \\maketitle, a cover's title) as a level-1 heading, when the
    headings come from the outline or the tags, which do not list it: the largest lines of the
    first page above the first heading found, set larger than every heading and the body, and
    not a sentence. ``{first line index: (1, number of lines)}`` or nothing.
    """
    first = min(found)
    if first == 0:
        return {}
    largest_heading = max(lines[index].size for index in found)
    before = [line for line in lines[:first] if line.page == lines[0].page]
    if not before:
        return {}
    size = max(line.size for line in before)
    if size <= largest_heading or size < body_size * 1.2:
        return {}
    start = next(index for index, line in enumerate(before) if line.size == size)
    count = 1
    while start + count < len(before) and count < 3 and before[start + count].size == size:
        count += 1
    title = " ".join(line.text for line in before[start : start + count])
    words = len(title.split())
    if any(line.mono for line in before[start : start + count]) or not any(char.isalpha() for char in title):
        return {}
    if words > MAX_HEADING_WORDS or title[-1] in ",;" or (title[-1] == "." and words > 3):
        return {}
    return {start: (1, count)}


def _match(lines: Sequence[Line], index: int, buckets: list[int], entries: _OutlineIndex) -> tuple[int, int] | None:
    """(entry number, number of lines) of the first unmatched entry (in the order of ``buckets``,
    then of the outline) whose title the lines from ``index`` on say, joined one by one (up to 4,
    while some title begins with what they say so far); None when none does."""
    first = lines[index]
    text = ""
    done, outline = entries.done, entries.outline
    indexes = [entries.forms(bucket) for bucket in buckets]
    for count in range(1, 5):
        if index + count - 1 >= len(lines):
            return None
        line = lines[index + count - 1]
        if line.page != first.page or (count > 1 and line.mono):
            return None
        text = f"{text} {line.text}" if text else line.text
        forms = _comparable(text)
        for by_form, _ in indexes:
            sharing = [number for form in forms for number in by_form.get(form, ()) if number not in done]
            for number in sorted(sharing) if len(forms) > 1 else sharing:
                common = forms & entries.titles[number]
                # one letter or digit (an index's "A") only when the line says exactly that
                if max(map(len, common)) >= 2 or text == outline[number].title:
                    return number, count
        # joined with the next line, the text may still become a title that begins like it
        if not any(
            number not in done
            for form in forms
            if len(form) >= 4
            for _, by_prefix in indexes
            for number in by_prefix.get(form, ())
        ):
            return None
    return None


def _drafts(
    lines: Sequence[Line], outline: Sequence[OutlineEntry] = (), joined: Mapping[int, int] = _NONE
) -> Iterator[Draft]:
    style = _document_style(lines)
    from_outline = _outline_headings(lines, outline) if outline else {}
    # A document whose outline is mostly found takes its headings from the outline only.
    font_headings = len(from_outline) < OUTLINE_FOUND_SHARE * len(outline) if outline else True
    if from_outline:
        from_outline.update(_title_heading(lines, from_outline, style.body_size))
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
            text, marks = _joined(list(lines[index : index + count]), style.hyphens_kept)
            yield Draft("heading", text, level=level, page_marks=marks)
            index += count
            continue
        index += 1
        kind = _kind(line, style)
        if kind == "heading" and (not font_headings or _continues_text(group_kind, group, line, style, joined)):
            kind = "table" if len(line.cells) > 1 else "text"
        if group and _continues(group_kind, group, kind, line, joined):
            group.append(line)
            continue
        if group:
            yield _draft(group_kind, group, style)
        group, group_kind = [line], ("list" if kind == "item" else kind)
    if group:
        yield _draft(group_kind, group, style)


def _continues_text(
    group_kind: str, group: list[Line], line: Line, style: _Style, joined: Mapping[int, int] = _NONE
) -> bool:
    """A bold (not larger) line that carries on the paragraph or list item above it."""
    if not group or _larger(line, style) or group_kind not in ("text", "list"):
        return False
    previous = group[-1]
    if previous.text[-1] in _SENTENCE_END:
        return False
    return _continues(group_kind, group, "text", line, joined)


def _continues(group_kind: str, group: list[Line], kind: str, line: Line, joined: Mapping[int, int] = _NONE) -> bool:
    previous = group[-1]
    new_page = line.page != previous.page
    step = previous.y - line.y
    # after lines pdfium joined over a hyphen, the next baseline is a line step down for each join
    gap = PARAGRAPH_GAP + JOINED_LINE_STEP * joined.get(id(previous), 0)
    close = not new_page and 0 < step <= gap * max(previous.size, line.size)
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
        if kind == "table" and close and _flush_right_note(previous, line):
            return True  # "corrected in this release.      (github issue 730)": a note set flush right
        if kind != "text":
            return False
        if abs(line.size - previous.size) > 0.5 and not (close and _last_line_of_sentence(previous, line)):
            # (a line's size is its first character's: ltxdoc's smaller margin macro name)
            return False
        if new_page or step < -PARAGRAPH_GAP * line.size:
            # the next page or the top of the next column: an unfinished sentence goes on
            return previous.text[-1] not in _SENTENCE_END
        return close
    return False


def _flush_right_note(previous: Line, line: Line) -> bool:
    """The last line of a sentence with a note pushed to the right margin (two cells, the first
    ending the sentence): not a table row."""
    return len(line.cells) == 2 and line.cells[0][-1] in _SENTENCE_END and _last_line_of_sentence(previous, line)


def _last_line_of_sentence(previous: Line, line: Line) -> bool:
    """A line that carries on the sentence the line above left unfinished (starts in lower case)."""
    return previous.text[-1] not in _SENTENCE_END and line.text[:1].islower() and not line.mono


def _draft(kind: str, lines: list[Line], style: _Style) -> Draft:
    if kind == "heading":
        text, marks = _joined(lines, style.hyphens_kept)
        return Draft("heading", text, level=style.heading_levels[(lines[0].size, lines[0].bold)], page_marks=marks)
    if kind == "table" and len(lines) > 1:
        return _rows_draft("table", [_row(line) for line in _without_repeated_header(lines)])
    if kind == "list":
        return _rows_draft("list", [_joined(item, style.hyphens_kept) for item in _items(lines)])
    text, marks = _joined(lines, style.hyphens_kept)
    return Draft("paragraph", text, page_marks=marks)


def _joined(lines: list[Line], hyphens_kept: bool = True) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Lines joined as one paragraph, with the offset at which each page's part starts (``hyphens_kept``
    False: no line of the document keeps its line-end hyphen, none is looked for)."""
    kept = {i for i, line in enumerate(lines) if line.keep_hyphen} if hyphens_kept and len(lines) > 1 else ()
    text, starts = join_line_offsets([line.text for line in lines], kept_hyphens=kept)
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
