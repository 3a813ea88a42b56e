"""Footnote marks set as superscripts: a raised, smaller number after a word.

pdfium gives "process²" as "process2" (one token that no search for "process" finds) and, when the
text after the mark returns to the baseline, breaks its line there, so ". All older branches" reads as
a new line, and a new paragraph, on the same baseline. A raised mark is set apart by a space, and a
piece of a line that pdfium broke off after it is joined back to the line it belongs to.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any

import pypdfium2.raw as pdfium_c

# A number after a letter, or before one ("¹https://…" in a footnote): a candidate, checked by its glyphs.
_CANDIDATE = re.compile(r"(?<=[^\W\d_])\d{1,3}(?!\d)|(?<![\w])\d{1,3}(?=[^\W\d_])")

RAISED = 0.2  # a mark's baseline at least this many font sizes above the word's
SMALLER = 0.85  # and its size at most this share of the word's


def _size(raw: Any, index: int) -> float:
    """The size a character is drawn at: its font size scaled by its matrix."""
    size = float(pdfium_c.FPDFText_GetFontSize(raw, index))
    matrix = pdfium_c.FS_MATRIX()
    if pdfium_c.FPDFText_GetMatrix(raw, index, ctypes.byref(matrix)):
        scale = abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
        if scale > 0:
            size *= scale
    return size


def _baseline(raw: Any, index: int) -> float:
    x, y = ctypes.c_double(), ctypes.c_double()
    pdfium_c.FPDFText_GetCharOrigin(raw, index, ctypes.byref(x), ctypes.byref(y))
    return y.value


def _raised(raw: Any, mark: int, word: int) -> bool:
    """The character at char index ``mark`` is set smaller and higher than the one at ``word``."""
    word_size = _size(raw, word)
    return (
        word_size > 0
        and _size(raw, mark) <= SMALLER * word_size
        and _baseline(raw, mark) - _baseline(raw, word) >= RAISED * word_size
    )


def with_marks_apart(raw: Any, first: int, stripped: str) -> str:
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
            if not _raised(raw, first + end - 1, word):
                continue
            cut = next(at for at in range(start, end) if _raised(raw, first + at, word))  # "V8²³"
        elif _raised(raw, first + start, first + end):  # "¹word"
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


def continues_mark(raw: Any, previous_last: int, first: int) -> str | None:
    """How the piece of a line starting at char index ``first`` follows the one ending at
    ``previous_last`` when pdfium broke the line after a raised mark there ("2" of "process²"):
    "" or " " (a word gap), None when it is a line of its own."""
    if previous_last < 1 or not _raised(raw, previous_last, first):
        return None
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    pdfium_c.FPDFText_GetCharBox(raw, previous_last, *(ctypes.byref(v) for v in (left, right, bottom, top)))
    mark_right = right.value
    pdfium_c.FPDFText_GetCharBox(raw, first, *(ctypes.byref(v) for v in (left, right, bottom, top)))
    size = _size(raw, first)
    gap = left.value - mark_right
    if gap < -0.1 * size or gap > size:  # behind the mark, or far from it: not the same line
        return None
    return " " if gap > 0.2 * size else ""
