"""pdfium's text page queries as the PDF line reading calls them: bound without ctypes' argument
checks, with the output values they write into made once per document."""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2.raw as pdfium_c


def _unchecked(function: Any, restype: Any) -> Any:
    """pdfium's ``function`` (as pypdfium2 binds it) called without ctypes' per-argument checks.

    The per-line and per-gap queries are pdfium's cheapest calls, so ctypes converting each
    argument through pypdfium2's declared types costs more than pdfium's own work (about half
    of each call). Callers pass exactly the C types: the text page pointer pypdfium2 gives,
    Python ints for C ints and ``ctypes.byref`` of ctypes values for the output pointers.
    The GIL stays held over the call (PYFUNCTYPE): these queries take well under a microsecond
    and never call back into Python; letting it go and taking it back cost about 15 % of a call.
    """
    address = ctypes.cast(function, ctypes.c_void_p).value
    if not address:
        raise ImportError(f"pdfium has no {function.__name__}")
    # a prototype without argument types: each argument goes as it is (ints as C ints)
    return ctypes.PYFUNCTYPE(restype)(address)


GET_FONT_SIZE = _unchecked(pdfium_c.FPDFText_GetFontSize, ctypes.c_double)
GET_MATRIX = _unchecked(pdfium_c.FPDFText_GetMatrix, ctypes.c_int)
COUNT_RECTS = _unchecked(pdfium_c.FPDFText_CountRects, ctypes.c_int)
GET_RECT = _unchecked(pdfium_c.FPDFText_GetRect, ctypes.c_int)
GET_CHAR_ORIGIN = _unchecked(pdfium_c.FPDFText_GetCharOrigin, ctypes.c_int)
GET_FONT_INFO = _unchecked(pdfium_c.FPDFText_GetFontInfo, ctypes.c_ulong)
GET_FONT_WEIGHT = _unchecked(pdfium_c.FPDFText_GetFontWeight, ctypes.c_int)
GET_CHAR_BOX = _unchecked(pdfium_c.FPDFText_GetCharBox, ctypes.c_int)
IS_GENERATED = _unchecked(pdfium_c.FPDFText_IsGenerated, ctypes.c_int)
GET_UNICODE = _unchecked(pdfium_c.FPDFText_GetUnicode, ctypes.c_uint)
GET_TEXT = _unchecked(pdfium_c.FPDFText_GetText, ctypes.c_int)
COUNT_CHARS = _unchecked(pdfium_c.FPDFText_CountChars, ctypes.c_int)
TEXT_INDEX = _unchecked(pdfium_c.FPDFText_GetTextIndexFromCharIndex, ctypes.c_int)


class Outputs:
    """The ctypes values pdfium's queries write into, and the pointers to them that the calls take
    as they are (see _unchecked): made once for a document, not for each page or call."""

    def __init__(self) -> None:
        self.left, self.right = ctypes.c_double(), ctypes.c_double()
        self.bottom, self.top = ctypes.c_double(), ctypes.c_double()
        self.name = ctypes.create_string_buffer(256)
        self.flags = ctypes.c_int(0)
        self.matrix = pdfium_c.FS_MATRIX()
        # the matrix's a, b, c, d, e, f as floats: an item of a memoryview costs half a field's read
        self.matrix_floats = memoryview(self.matrix).cast("B").cast("f")
        self.left_ref, self.right_ref = ctypes.byref(self.left), ctypes.byref(self.right)
        self.bottom_ref, self.top_ref = ctypes.byref(self.bottom), ctypes.byref(self.top)
        self.name_ref, self.flags_ref = ctypes.byref(self.name), ctypes.byref(self.flags)
        self.matrix_ref = ctypes.byref(self.matrix)


def drawn_size(raw: Any, index: int, out: Outputs) -> float:
    """The size the character at ``index`` of the text page ``raw`` is drawn at: its font size (the
    Tf operand; many producers use 1 Tf) scaled by its matrices."""
    size: float = GET_FONT_SIZE(raw, index)
    if GET_MATRIX(raw, index, out.matrix_ref):
        m = out.matrix_floats
        scale = abs(m[0] * m[3] - m[1] * m[2]) ** 0.5
        if scale > 0:
            size *= scale
    return size
