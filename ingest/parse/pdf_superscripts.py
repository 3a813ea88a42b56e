"""Footnote marks set as superscripts: a raised, smaller number after a word.

pdfium gives "process²" as "process2" (one token that no search for "process" finds) and, when the
text after the mark returns to the baseline, breaks its line there, so ". All older branches" reads as
a new line, and a new paragraph, on the same baseline. A raised mark is set apart by a space, and a
piece of a line that pdfium broke off after it is joined back to the line it belongs to.
"""

from __future__ import annotations

import re
from typing import Any

from ingest.parse.pdf_calls import GET_CHAR_BOX, GET_CHAR_ORIGIN, Outputs, drawn_size

# A number after a letter, or before one ("¹https://…" in a footnote): a candidate, checked by its glyphs.
# Written to begin with its first digit, each side's look-behind moved after it ((?<=[^\W\d_])\d{1,3} is
# \d(?<=[^\W\d_]\d)\d{0,2}), so that re skips to the digits: a look-behind first makes it try the
# whole pattern at every character (9 microseconds on an average line, 1.7 so).
_CANDIDATE = re.compile(r"\d(?:(?<=[^\W\d_]\d)\d{0,2}(?!\d)|(?<!\w\d)\d{0,2}(?=[^\W\d_]))")

RAISED = 0.2  # a mark's baseline at least this many font sizes above the word's
SMALLER = 0.85  # and its size at most this share of the word's


def _baseline(raw: Any, index: int, out: Outputs) -> float:
    GET_CHAR_ORIGIN(raw, index, out.left_ref, out.bottom_ref)
    return out.bottom.value


def _raised(raw: Any, mark: int, word: int, out: Outputs) -> bool:
    """The character at char index ``mark`` is set smaller and higher than the one at ``word``."""
    word_size = drawn_size(raw, word, out)
    return (
        word_size > 0
        and drawn_size(raw, mark, out) <= SMALLER * word_size
        and _baseline(raw, mark, out) - _baseline(raw, word, out) >= RAISED * word_size
    )


def with_marks_apart(raw: Any, first: int, stripped: str, out: Outputs) -> str:
    """``stripped`` (a line's characters from char index ``first``) with a space between each word and
    a superscript number touching it; as it is when it has none (most lines: one regex search)."""
    if _CANDIDATE.search(stripped) is None:
        return stripped
    pieces: list[str] = []
    done = 0
    for match in _CANDIDATE.finditer(stripped):
        start, end = match.span()
        if start > 0 and stripped[start - 1].isalpha():  # "word²": the raised digits at the run's end
            word = first + start - 1
            if not _raised(raw, first + end - 1, word, out):
                continue
            cut = next(at for at in range(start, end) if _raised(raw, first + at, word, out))  # "V8²³"
        elif _raised(raw, first + start, first + end, out):  # "¹word"
            cut = end
        else:
            continue
        pieces.append(stripped[done:cut])
        pieces.append(" ")
        done = cut
    if not pieces:
        return stripped
    pieces.append(stripped[done:])
    return "".join(pieces)


def continues_mark(raw: Any, previous_last: int, first: int, out: Outputs) -> str | None:
    """How the piece of a line starting at char index ``first`` follows the one ending at
    ``previous_last`` when pdfium broke the line after a raised mark there ("2" of "process²"):
    "" or " " (a word gap), None when it is a line of its own."""
    if previous_last < 1 or not _raised(raw, previous_last, first, out):
        return None
    refs = (out.left_ref, out.right_ref, out.bottom_ref, out.top_ref)
    GET_CHAR_BOX(raw, previous_last, *refs)
    mark_right = out.right.value
    GET_CHAR_BOX(raw, first, *refs)
    size = drawn_size(raw, first, out)
    gap = out.left.value - mark_right
    if gap < -0.1 * size or gap > size:  # behind the mark, or far from it: not the same line
        return None
    return " " if gap > 0.2 * size else ""
