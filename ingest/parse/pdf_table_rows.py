"""PDF table rows whose cells wrap over several lines, put back together.

Writers that draw a table cell by cell (LibreOffice) give a row whose cells wrap as lines that
go down one cell and back up for the next: "Part | Warranty period in", "months from
delivery", "Replacement part", "number". Read line by line that is a table row followed by
short lines, which become paragraphs or, in bold, headings, and the header row is lost. Such a
band of lines, just above a table row, is made one row again: a line lower than the one
before carries on the cell above it, a line that goes back up starts the next cell.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ingest.parse.pdf_lines import PARAGRAPH_GAP, Line

MAX_ROW_LINES = 6  # a row whose cells wrap over more lines than this is not taken for one


MAX_BAND_PIECES = 40


MAX_CELL_LINE_CHARS = 60  # the lines of a wrapped cell are short: its column is narrow


LINE_STEP = 1.3  # font sizes from one baseline to the next inside a cell, at most


def with_wrapped_rows_joined(lines: list[Line]) -> list[Line]:
    """``lines`` with each band of wrapped cells just above a table row made one row."""
    count = len(lines)
    # A band goes back up at least once, through short lines of one page (see _band_end): a line
    # from which no such step is reached starts none, and most lines are ruled out so, by
    # searching these flags, without walking the lines after them.
    ys = [line.y for line in lines]
    up_steps = [later > earlier + 1 for earlier, later in zip(ys, ys[1:], strict=False)]  # [i]: line i + 1 goes up
    long_lines = [line.mono or len(line.text) > MAX_CELL_LINE_CHARS for line in lines]
    next_long = next_up = -1  # the first long line at or after index, the first line after it that goes up
    result: list[Line] = []
    index = 0
    while index < count:
        if next_long < index:
            next_long = _first_true(long_lines, index)
        if next_up <= index:
            next_up = _first_true(up_steps, index) + 1
        if (
            next_long == index
            or next_up >= min(count, next_long)
            or next_up - index > MAX_BAND_PIECES
            or lines[next_up].page != lines[index].page
        ):
            result.append(lines[index])
            index += 1
            continue
        end = _band_end(lines, index)
        if end is None:
            result.append(lines[index])
            index += 1
            continue
        result.append(_row(lines[index:end]))
        index = end
    return result


def _first_true(flags: list[bool], start: int) -> int:
    """The first index at or after ``start`` whose flag is set; ``len(flags)`` when none is."""
    try:
        return flags.index(True, start)
    except ValueError:
        return len(flags)


def _band_end(lines: Sequence[Line], start: int) -> int | None:
    """The end of a band of wrapped cells starting at ``start`` (lines that go down a cell and
    back up for the next, within one row's height), or None when there is none.

    Cells set vertically centred start above or below the first one; a band must come back up
    at least once, give two cells or more, and be followed by a table row (or another band).
    """
    first = lines[start]
    if not _piece(first, first):
        return None
    height = (MAX_ROW_LINES - 1) * LINE_STEP * first.size + 1
    top = bottom = first.y
    left = first.x
    went_back_up = False
    end = start + 1
    while end < len(lines) and end - start <= MAX_BAND_PIECES:
        line, previous = lines[end], lines[end - 1]
        if not _piece(line, first):
            break
        if line.y > previous.y + 1:  # back up: the next cell of the row
            if max(top, line.y) - bottom > height:
                break
            went_back_up = True
        elif previous.y - line.y > PARAGRAPH_GAP * line.size or top - line.y > height:
            break  # further down than a wrapped cell goes: the band is over
        elif went_back_up and (len(line.cells) > 1 or line.x <= left + 2):
            break  # down again at the first column, or several cells: the next row
        top, bottom, left = max(top, line.y), min(bottom, line.y), min(left, line.x)
        end += 1
    if not went_back_up or end >= len(lines) or end - start < 2:
        return None
    after = lines[end]
    if after.page != first.page or not 0 < bottom - after.y <= 2 * PARAGRAPH_GAP * after.size:
        return None
    if len(after.cells) < 2 and _band_end(lines, end) is None:
        return None
    return end if len(_row(lines[start:end]).cells) >= 2 else None


def _piece(line: Line, first: Line) -> bool:
    return (
        line.page == first.page
        and not line.mono
        and len(line.text) <= MAX_CELL_LINE_CHARS
        and abs(line.size - first.size) <= 0.5
    )


def _row(pieces: Sequence[Line]) -> Line:
    cells: list[str] = list(pieces[0].cells)
    for previous, piece in zip(pieces, pieces[1:], strict=False):
        if piece.y < previous.y - 1 and len(piece.cells) == 1:
            cells[-1] = f"{cells[-1]} {piece.text}"  # lower: the cell above goes on
        else:
            cells.extend(piece.cells)  # back up: the next cells
    first = pieces[0]
    return dataclasses.replace(
        first,
        text=" ".join(cells),
        cells=tuple(cells),
        x=min(piece.x for piece in pieces),
        y=max(piece.y for piece in pieces),
        bold=all(piece.bold for piece in pieces),
    )
