"""Plain text: optional YAML front matter, cleaning of extracted text, light structure.

Cleaning: running headers/footers and page numbers removed, hyphenation at line ends
undone, wrapped paragraph lines joined with spaces, blank runs collapsed.
Headings: ALL-CAPS lines, lines underlined with ``===`` (level 1) or ``---`` (level 2),
numbered headings such as ``1. Scope`` or ``2.3 Returns`` (level = number of parts).
Lines starting with ``- ``, ``* `` or ``• `` form list blocks. Two or more lines in a row
whose columns are set apart by dot leaders, tabs or wide spaces form a table block, written
like every table: ``cell | cell``.
"""

from __future__ import annotations

import bisect
import re
from typing import Iterator

from ingest.model import ParsedDocument
from ingest.parse._common import (
    Draft,
    assemble,
    collapse_spaces,
    decode_utf8_text,
    join_lines,
    EdgeLine,
    line_key,
    running_line_indices,
    split_front_matter,
    strip_controls,
)

_PAGE_NUMBER = re.compile(
    r"(?:page\s+)?[-–—]?\s*(\d{1,5})\s*[-–—]?(?:\s*(?:of|/)\s*\d{1,5})?", re.IGNORECASE
)
_UNDERLINE = re.compile(r"\s{0,3}(=+|-+)\s*")
_RULE = re.compile(r"\s*([-=*_~])(?:\s*\1){2,}\s*")
_LIST_ITEM = re.compile(r"(\s*)([-*•])\s+(\S.*)")
_NUMBERED = re.compile(r"(\d{1,3}(?:\.\d{1,3})*)\.?\s+(\S.*)")
_ENUMERATED = re.compile(r"\d{1,3}(?:\.\d{1,3})+\.?\s+\S|\d{1,3}[.)]\s+\S")  # "1. x", "2) x", "2.3 x"
_COLUMN_GAP = re.compile(r"\s*\.{4,}\s*|\s*\t\s*|\s{3,}")  # "Idle speed ...... 850 rpm"
_TERMINAL = ".,;:!?"
_SENTENCE_END = ".!?:;"
MAX_HEADING_CHARS = 80
MAX_HEADING_WORDS = 12
RUNNING_ZONE = 2  # lines at the top and the bottom of a page that may be running headers
SHORT_LINE = 80
MIN_REPEATS = 3


def read_text_metadata(data: bytes) -> dict:
    """Only the front matter: what a sync needs for a file it already holds."""
    return split_front_matter(decode_utf8_text(data))[0]


def parse_text(data: bytes) -> ParsedDocument:
    metadata, body = split_front_matter(decode_utf8_text(data))
    lines = [strip_controls(line).rstrip() for line in _clean_pages(body)]
    return assemble("text", _merge_lists(_drafts(lines)), metadata)


# ---------------------------------------------------------------------------- cleaning


def _clean_pages(body: str) -> list[str]:
    """The body's lines with running headers, footers and page numbers removed."""
    if "\f" in body:
        return _without_page_furniture([page.split("\n") for page in body.split("\f")])
    return _without_repeated_furniture(body.split("\n"))


def _without_page_furniture(pages: list[list[str]]) -> list[str]:
    """Form-feed pages: drop lines repeated at the top or bottom of most pages."""
    nonblank = [[index for index, line in enumerate(page) if line.strip()] for page in pages]
    numbered = list(enumerate(zip(pages, nonblank), start=1))
    tops = [[EdgeLine(n, i, page[i]) for i in indices[:RUNNING_ZONE]] for n, (page, indices) in numbered]
    bottoms = [[EdgeLine(n, i, page[i]) for i in indices[-RUNNING_ZONE:]] for n, (page, indices) in numbered]
    drops = running_line_indices([tops, bottoms], len(pages))
    return _join_pages([[line for i, line in enumerate(page) if i not in drop] for page, drop in zip(pages, drops)])


def _starts_section(content: list[str]) -> bool:
    following = content[1] if len(content) > 1 else ""
    return bool(_heading_level(content, 0)) or _is_underlined_heading(content[0], following, [], [])


def _ends_paragraph(lines: list[str]) -> bool:
    last = next((line for line in reversed(lines) if line.strip()), "")
    return not last or last.rstrip()[-1] in _SENTENCE_END


def _without_repeated_furniture(lines: list[str]) -> list[str]:
    """No form feeds: drop page-number lines and short lines repeated next to them."""
    page_lines = _page_number_lines(lines)
    if not page_lines:
        return lines
    near_boundary = _near_boundaries(lines, page_lines)
    counts: dict[str, int] = {}
    for index in near_boundary:
        counts[collapse_spaces(lines[index])] = counts.get(collapse_spaces(lines[index]), 0) + 1
    running = {
        index
        for index in near_boundary
        if counts[collapse_spaces(lines[index])] >= MIN_REPEATS
        and len(collapse_spaces(lines[index])) <= SHORT_LINE
        and not _LIST_ITEM.fullmatch(lines[index])
    }
    drop = page_lines | running
    pages: list[list[str]] = [[]]
    for index, line in enumerate(lines):
        if index not in drop:
            pages[-1].append(line)
        elif pages[-1]:
            pages.append([])
    return _join_pages(pages)


def _join_pages(pages: list[list[str]]) -> list[str]:
    """Pages' lines in order; a page break ends a paragraph only after a finished sentence."""
    lines: list[str] = []
    for page in pages:
        nonblank = [index for index, line in enumerate(page) if line.strip()]
        if not nonblank:
            continue
        content = page[nonblank[0] : nonblank[-1] + 1]
        if lines and (_ends_paragraph(lines) or _starts_section(content)):
            lines.append("")
        lines.extend(content)
    return lines


def _page_number_lines(lines: list[str]) -> set[int]:
    """Lines like ``Page 3``, ``- 3 -`` or ``3 of 9`` whose shape recurs and whose number grows."""
    by_key: dict[str, list[tuple[int, int]]] = {}
    for index, line in enumerate(lines):
        match = _PAGE_NUMBER.fullmatch(line.strip())
        if match:
            by_key.setdefault(line_key(line), []).append((index, int(match.group(1))))
    found: set[int] = set()
    for occurrences in by_key.values():
        numbers = [number for _, number in occurrences]
        if len(occurrences) >= MIN_REPEATS and numbers == sorted(numbers):
            found.update(index for index, _ in occurrences)
    return found


def _near_boundaries(lines: list[str], page_lines: set[int]) -> set[int]:
    """Non-blank lines within two non-blank lines of a page boundary (or of the text's ends)."""
    nonblank = [index for index, line in enumerate(lines) if line.strip() and index not in page_lines]
    near: set[int] = set(nonblank[:RUNNING_ZONE]) | set(nonblank[-RUNNING_ZONE:])
    for boundary in page_lines:
        position = bisect.bisect_left(nonblank, boundary)  # first non-blank line after it
        near.update(nonblank[max(0, position - RUNNING_ZONE) : position + RUNNING_ZONE])
    return near


# ---------------------------------------------------------------------------- structure


def _drafts(lines: list[str]) -> Iterator[Draft]:
    paragraph: list[str] = []
    items: list[str] = []  # the current list, one item per entry
    rows: list[str] = []  # the current table, one row per entry

    def flush() -> Iterator[Draft]:
        if paragraph:
            yield Draft("paragraph", join_lines(paragraph))
            paragraph.clear()
        if items:
            yield Draft("list", "\n".join(items))
            items.clear()
        if rows:
            yield Draft("table", "\n".join(rows))
            rows.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if not line.strip():
            yield from flush()
        elif _is_underlined_heading(line, following, paragraph, items):
            yield from flush()
            numbered = _NUMBERED.fullmatch(collapse_spaces(line))
            if numbered:  # "2.3 Returns" underlined: its number says how deep it is
                level = min(numbered.group(1).count(".") + 1, 6)
            else:
                level = 1 if following.strip()[0] == "=" else 2
            yield Draft("heading", collapse_spaces(line), level=level)
            index += 1  # the underline
        elif _RULE.fullmatch(line):
            yield from flush()
        elif (item := _LIST_ITEM.fullmatch(line)) is not None:
            if paragraph or rows:
                yield from flush()
            indent, marker, content = item.groups()
            items.append(f"{indent}{marker} {collapse_spaces(content)}")
        elif items and line[:1].isspace():
            items[-1] = _continue_item(items[-1], line)
        elif (cells := _row_cells(line)) and (rows or _row_cells(following)):
            if paragraph or items:
                yield from flush()
            rows.append(" | ".join(cells))
        elif not paragraph and (level := _heading_level(lines, index)):
            yield from flush()
            yield Draft("heading", collapse_spaces(line), level=level)
        else:
            if items or rows:
                yield from flush()
            paragraph.append(line)
        index += 1
    yield from flush()


def _row_cells(line: str) -> list[str]:
    """Cells of a table-like line (dot leaders, tabs or wide spaces between columns); [] if none."""
    cells = [collapse_spaces(cell) for cell in _COLUMN_GAP.split(line.strip())]
    return cells if len(cells) > 1 and all(cells) else []


def _continue_item(item: str, line: str) -> str:
    indent = item[: len(item) - len(item.lstrip())]
    return indent + join_lines([item.lstrip(), line])


def _is_underlined_heading(line: str, following: str, paragraph: list[str], items: list[str]) -> bool:
    underline = _UNDERLINE.fullmatch(following)
    return (
        underline is not None
        and len(underline.group(1)) >= 3
        and not paragraph
        and not _LIST_ITEM.fullmatch(line)
        and len(collapse_spaces(line)) <= MAX_HEADING_CHARS * 2
    )


def _heading_level(lines: list[str], index: int) -> int:
    """Heading level of an ALL-CAPS or numbered title line that starts a group; 0 if none."""
    line = collapse_spaces(lines[index])
    if len(line) > MAX_HEADING_CHARS or len(line.split()) > MAX_HEADING_WORDS or line[-1] in _TERMINAL:
        return 0
    numbered = _NUMBERED.fullmatch(line)
    if numbered and numbered.group(2)[0].isupper() and not _in_numbered_run(lines, index):
        return min(numbered.group(1).count(".") + 1, 6)
    letters = [char for char in line if char.isalpha()]
    if len(letters) >= 2 and all(char.isupper() for char in letters):
        return 1
    return 0


def _in_numbered_run(lines: list[str], index: int) -> bool:
    """A numbered line right after or before another is an enumeration, not a heading."""
    neighbours = [lines[index - 1] if index > 0 else "", lines[index + 1] if index + 1 < len(lines) else ""]
    return any(_ENUMERATED.match(line.strip()) for line in neighbours if line.strip())


def _merge_lists(drafts: Iterator[Draft]) -> Iterator[Draft]:
    """Lists separated only by blank lines are one list."""
    pending: Draft | None = None
    for draft in drafts:
        if pending is not None and pending.kind == "list" and draft.kind == "list":
            pending = Draft("list", pending.text + "\n" + draft.text)
            continue
        if pending is not None:
            yield pending
        pending = draft
    if pending is not None:
        yield pending
