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
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from ingest.model import ParsedDocument
from ingest.parse._common import (
    Draft,
    assemble,
    collapse_spaces,
    decode_utf8_text,
    has_controls,
    join_lines,
    separators_as_breaks,
    split_front_matter,
    strip_controls,
)
from ingest.parse.running_lines import EdgeLine, line_key, running_line_indices

_PAGE_NUMBER = re.compile(r"(?:page\s+)?[-–—]?\s*(\d{1,5})\s*[-–—]?(?:\s*(?:of|/)\s*\d{1,5})?", re.IGNORECASE)
_UNDERLINE = re.compile(r"""\s{0,3}(=+|-+|`+|:+|'+|"+|~+|\^+|_+|\*+|\++|#+|<+|>+)\s*""")
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


def read_text_metadata(data: bytes) -> dict[str, Any]:
    """Only the front matter: what a sync needs for a file it already holds."""
    return split_front_matter(decode_utf8_text(data))[0]


def parse_text(data: bytes) -> ParsedDocument:
    metadata, body = split_front_matter(decode_utf8_text(data))
    body = separators_as_breaks(body)  # a line separator ends a line (a form feed, a page: _clean_pages)
    cleaned = _clean_pages(body)
    # (control characters are rare: one search of the body spares a substitution per line)
    lines = (
        [strip_controls(line).rstrip() for line in cleaned]
        if has_controls(body)
        else [line.rstrip() for line in cleaned]
    )
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
    numbered = list(enumerate(zip(pages, nonblank, strict=True), start=1))
    tops = [[EdgeLine(n, i, page[i]) for i in indices[:RUNNING_ZONE]] for n, (page, indices) in numbered]
    bottoms = [[EdgeLine(n, i, page[i]) for i in indices[-RUNNING_ZONE:]] for n, (page, indices) in numbered]
    drops = running_line_indices([tops, bottoms], len(pages))
    return _join_pages(
        [[line for i, line in enumerate(page) if i not in drop] for page, drop in zip(pages, drops, strict=True)]
    )


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

_FENCE_OPEN = re.compile(r"\s{0,3}(`{3,}|~{3,})[^`]*")
_ADORNMENT = re.compile(r"""([=\-`:'"~^_*+#<>])\1{2,}\s*""")  # a reStructuredText underline/overline
_GRID_BORDER = re.compile(r"\+(?:[-=:]+\+)+\s*")
_GRID_ROW = re.compile(r"\|.*\|\s*")
_SIMPLE_BORDER = re.compile(r"=+(?: +=+)+\s*")
CODE_INDENT = 4  # columns deeper than the text around it: an indented code block
_ADORNMENT_CHARS = frozenset("=-`:'\"~^_*+#<>")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _base_indent(lines: list[str]) -> int:
    """The indentation most prose lines have (some texts indent every paragraph)."""
    counts = Counter(len(line) - len(line.lstrip(" \t")) for line in lines if line.strip())  # (_indent, inlined)
    return max(counts, key=lambda indent: (counts[indent], -indent)) if counts else 0


def _blank(lines: list[str], index: int) -> bool:
    """Line ``index`` is blank or outside the text."""
    return index < 0 or index >= len(lines) or not lines[index].strip()


def _drafts(lines: list[str]) -> list[Draft]:
    return _TextBlocks(lines).read()


class _TextBlocks:
    """Reads the lines top to bottom into draft blocks; paragraph, list and table lines are
    gathered until something else starts (``flush``)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.paragraph: list[str] = []
        self.items: list[str] = []  # the current list, one item per entry
        self.rows: list[str] = []  # the current table, one row per entry
        # reStructuredText heading styles (character, overlined) by first use
        self.styles: list[tuple[str, bool]] = []
        self.base = _base_indent(lines)
        self.drafts: list[Draft] = []

    def read(self) -> list[Draft]:
        index = 0
        while index < len(self.lines):
            line = self.lines[index]
            following = self.lines[index + 1] if index + 1 < len(self.lines) else ""
            if not line.strip():
                self.flush()
                index += 1
                continue
            end = self.code_or_table(index, line, following)
            if end is None:
                end = self.heading_or_break(index, line, following)
            if end is None:
                self.gather(index, line, following)
                end = index + 1
            index = end
        self.flush()
        return self.drafts

    def flush(self) -> None:
        if self.paragraph:
            self.drafts.append(Draft("paragraph", join_lines(self.paragraph)))
            self.paragraph.clear()
        if self.items:
            self.drafts.append(Draft("list", "\n".join(self.items)))
            self.items.clear()
        if self.rows:
            self.drafts.append(Draft("table", "\n".join(self.rows)))
            self.rows.clear()

    def add(self, draft: Draft) -> None:
        self.flush()
        self.drafts.append(draft)

    def adorned_level(self, title: str, char: str, overline: bool) -> int:
        numbered = _NUMBERED.fullmatch(title)
        if numbered:  # "2.3 Returns" underlined: its number says how deep it is
            return min(numbered.group(1).count(".") + 1, 6)
        if not overline and char in "=-":
            return 1 if char == "=" else 2  # the common plain-text convention, as before
        # Other styles, as reStructuredText reads them, by order of first use: overlined titles
        # from level 1, other underlines below the = and - levels.
        kind = [style for style in self.styles if style[1] == overline]
        if (char, overline) not in self.styles:
            self.styles.append((char, overline))
            kind.append((char, overline))
        return min(kind.index((char, overline)) + (1 if overline else 3), 6)

    def code_or_table(self, index: int, line: str, following: str) -> int | None:
        """A fenced, doctest or indented code block, or a grid or simple table, starting at
        ``index``: added, and the index of the line after it returned; None otherwise."""
        lines, stripped = self.lines, line.strip()
        # The first characters rule most patterns out: regular expressions only where they may match.
        first = stripped[:1]
        if first in "`~" and (fence := _FENCE_OPEN.fullmatch(line)) is not None:
            end = _fence_end(lines, index, fence.group(1))
            self.add(Draft("code", _dedented(lines[index + 1 : end])))
            return end + 1  # after the closing fence
        if first == ">" and stripped.startswith(">>>") and not self.paragraph and _blank(lines, index - 1):
            end = index  # a doctest block: up to the next blank line
            while end < len(lines) and lines[end].strip():
                end += 1
            self.add(Draft("code", _dedented(lines[index:end])))
            return end
        if (
            not self.paragraph
            and not self.items
            and line[:1] in " \t"
            and (code_indent := _code_indent(lines, index, self.base)) is not None
        ):
            end = _indented_end(lines, index, code_indent)
            self.add(Draft("code", _dedented(lines[index:end])))
            return end
        if first == "+" and _GRID_BORDER.fullmatch(stripped) and _GRID_ROW.fullmatch(following.strip()):
            self.flush()
            table, end = _grid_table(lines, index)
            self.drafts.append(Draft("table", table))
            return end
        if first == "=" and _SIMPLE_BORDER.fullmatch(stripped) and following.strip() and not self.paragraph:
            self.flush()
            table, end = _simple_table(lines, index)
            self.drafts.append(Draft("table", table))
            return end
        return None

    def heading_or_break(self, index: int, line: str, following: str) -> int | None:
        """An adorned (reStructuredText) heading or a rule at ``index``: the index of the line
        after it; None otherwise."""
        stripped = line.strip()
        adorned = stripped[:1] in _ADORNMENT_CHARS
        if (
            adorned
            and (adornment := _ADORNMENT.fullmatch(stripped))
            and following.strip()
            and index + 2 < len(self.lines)
            and self.lines[index + 2].strip() == stripped
            and not self.paragraph
        ):  # overline, title, underline
            title = collapse_spaces(following)
            self.add(Draft("heading", title, level=self.adorned_level(title, adornment.group(1), True)))
            return index + 3
        if following.lstrip()[:1] in _ADORNMENT_CHARS and _is_underlined_heading(
            line, following, self.paragraph, self.items
        ):
            title = collapse_spaces(line)
            self.add(Draft("heading", title, level=self.adorned_level(title, following.strip()[0], False)))
            return index + 2  # after the underline
        if adorned and (_RULE.fullmatch(line) or _ADORNMENT.fullmatch(stripped)):
            self.flush()
            return index + 1
        return None

    def outdented(self, line: str, following: str) -> bool:
        """A line set left of the text's usual indent with the next line indented under it: an
        ALL-CAPS heading as man pages (and other formatted text) set them, "NAME" over its text."""
        indent = _indent(line)
        return indent < self.base and _indent(following) > indent

    def gather(self, index: int, line: str, following: str) -> None:
        """A line of a list, a table or a paragraph, or a heading standing alone."""
        if line.strip()[:1] in "-*•" and (item := _LIST_ITEM.fullmatch(line)) is not None:
            if self.paragraph or self.rows:
                self.flush()
            indent, marker, content = item.groups()
            self.items.append(f"{indent}{marker} {collapse_spaces(content)}")
        elif self.items and line[:1].isspace():
            self.items[-1] = _continue_item(self.items[-1], line)
        elif (cells := _row_cells(line)) and (self.rows or _row_cells(following)):
            if self.paragraph or self.items:
                self.flush()
            self.rows.append(" | ".join(cells))
        elif (
            not self.paragraph
            and _blank(self.lines, index - 1)
            and (_blank(self.lines, index + 1) or self.outdented(line, following) and _all_caps(line))
            and (level := _heading_level(self.lines, index))
        ):
            self.add(Draft("heading", collapse_spaces(line), level=level))
        else:
            if self.items or self.rows:
                self.flush()
            self.paragraph.append(line)


def _code_indent(lines: list[str], index: int, base: int) -> int | None:
    """The indentation a code block starting at ``index`` keeps to, or None if none starts there:
    after a line ending in ``::`` (reStructuredText) any deeper indentation, after a blank line
    four columns deeper than the text's usual indentation."""
    previous = index - 1
    while previous >= 0 and not lines[previous].strip():
        previous -= 1
    indent = _indent(lines[index])
    if previous >= 0 and lines[previous].rstrip().endswith("::") and indent > _indent(lines[previous]):
        return _indent(lines[previous]) + 1
    if previous < index - 1 or index == 0:  # after a blank line (or at the start)
        return base + CODE_INDENT if indent >= base + CODE_INDENT else None
    return None


def _fence_end(lines: list[str], index: int, fence: str) -> int:
    """Index of the line closing the fence opened at ``index`` (the end of the text if none)."""
    closing = re.compile(r"\s{0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*")
    for end in range(index + 1, len(lines)):
        if closing.fullmatch(lines[end]):
            return end
    return len(lines)


def _indented_end(lines: list[str], index: int, indent: int) -> int:
    """End (exclusive) of the indented block starting at ``index``; blank lines inside it belong to it."""
    end = index
    last = index
    while end < len(lines):
        if lines[end].strip():
            if _indent(lines[end]) < indent:
                break
            last = end
        end += 1
    return last + 1


def _dedented(block: list[str]) -> str:
    """Lines as written, less their common indentation; blank lines at the ends dropped."""
    widths = [_indent(line) for line in block if line.strip()]
    cut = min(widths, default=0)
    text = "\n".join(line[cut:].rstrip() for line in block)
    return text.strip("\n")


def _grid_table(lines: list[str], index: int) -> tuple[str, int]:
    """A reStructuredText grid table, one row per line (``cell | cell``); cells spread over
    several lines between borders are joined. Returns the table and the index after it."""
    rows: list[str] = []
    pending: list[list[str]] = []
    index += 1
    while index < len(lines):
        stripped = lines[index].strip()
        if _GRID_BORDER.fullmatch(stripped):
            if pending:
                rows.append(" | ".join(join_lines(column) for column in pending))
                pending = []
        elif _GRID_ROW.fullmatch(stripped):
            cells = [cell for cell in stripped.strip("|").split("|")]
            if len(cells) != len(pending):
                if pending:
                    rows.append(" | ".join(join_lines(column) for column in pending))
                pending = [[] for _ in cells]
            for column, cell in zip(pending, cells, strict=True):
                column.append(cell)
        else:
            break
        index += 1
    if pending:
        rows.append(" | ".join(join_lines(column) for column in pending))
    return "\n".join(row for row in rows if row.replace("|", "").strip()), index


def _simple_table(lines: list[str], index: int) -> tuple[str, int]:
    """A reStructuredText simple table: columns where the ``=====  =====`` border says; a
    line whose first column is empty continues the row above. Returns the table and the
    index after it (after its closing border)."""
    border = lines[index]
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", border)]
    rows: list[list[str]] = []
    borders = 1
    index += 1
    while index < len(lines):
        line = lines[index]
        if _SIMPLE_BORDER.fullmatch(line.strip()):
            borders += 1
            index += 1
            if index >= len(lines) or not lines[index].strip():
                break  # the closing border
            continue
        if not line.strip():
            if borders >= 3 or index + 1 >= len(lines) or not lines[index + 1].strip():
                break
            index += 1
            continue
        starts = [start for start, _ in spans[1:]]
        bounds = [0, *starts, max(len(line), spans[-1][1])]
        cells = [line[bounds[n] : bounds[n + 1]].strip() for n in range(len(spans))]
        cells[-1] = line[bounds[-2] :].strip()
        if rows and not cells[0]:
            rows[-1] = [join_lines([old, new]) if new else old for old, new in zip(rows[-1], cells, strict=False)]
        else:
            rows.append(cells)
        index += 1
    return "\n".join(" | ".join(row) for row in rows if any(row)), index


def _row_cells(line: str) -> list[str]:
    """Cells of a table-like line (dot leaders, tabs or wide spaces between columns); [] if none."""
    if "...." not in line and "\t" not in line and "   " not in line.strip():
        return []
    cells = [collapse_spaces(cell) for cell in _COLUMN_GAP.split(line.strip())]
    if len(cells) < 2 or not all(cells) or not any(char.isalnum() for char in cells[0]):
        return []  # a doctest's "...     x = 0" or other leading punctuation is not a first cell
    return cells


def _continue_item(item: str, line: str) -> str:
    indent = item[: len(item) - len(item.lstrip())]
    return indent + join_lines([item.lstrip(), line])


def _is_underlined_heading(line: str, following: str, paragraph: list[str], items: list[str]) -> bool:
    underline = _UNDERLINE.fullmatch(following)
    if underline is None or len(underline.group(1)) < 3 or not line.strip():
        return False
    if underline.group(1)[0] not in "=-" and len(underline.group(1)) < len(line.strip()) - 1:
        return False  # other characters make a heading as rST does: underlined at full length
    return (
        not paragraph
        and not _ADORNMENT.fullmatch(line.strip())
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
    return 1 if _all_caps(line) else 0


def _all_caps(line: str) -> bool:
    letters = [char for char in line if char.isalpha()]
    return len(letters) >= 2 and all(char.isupper() for char in letters)


def _in_numbered_run(lines: list[str], index: int) -> bool:
    """A numbered line right after or before another is an enumeration, not a heading."""
    neighbours = [lines[index - 1] if index > 0 else "", lines[index + 1] if index + 1 < len(lines) else ""]
    return any(_ENUMERATED.match(line.strip()) for line in neighbours if line.strip())


def _merge_lists(drafts: Iterable[Draft]) -> Iterator[Draft]:
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
