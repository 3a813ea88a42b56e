"""Filled PDF form fields (AcroForm): their text values, read through pdfium's form API, as lines of
the page their widget sits on.

A form field's value is not in the page's content stream (a viewer draws it from the field's widget
annotation), so pdfium's text page has none of it: a filled claim form parsed to its labels alone.
Each page's widgets are read with the document's form environment (``PdfDocument.init_forms``):
text fields, combo boxes and list boxes that hold a value and are shown (not hidden, not a password).
A one-line value beside a label on its row ("Name:") joins that line as a cell of its own, the way a
value typed into the page would read ("Name: | Jane Quimby" in a table of such rows); any other value
becomes lines of its own where its widget sits, after the line above it.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ingest.parse._common import collapse_spaces, drop_controls
from ingest.parse.pdf_lines import _SHY, Line

_TEXT_FIELDS = frozenset(
    {pdfium_c.FPDF_FORMFIELD_TEXTFIELD, pdfium_c.FPDF_FORMFIELD_COMBOBOX, pdfium_c.FPDF_FORMFIELD_LISTBOX}
)
_NOT_SHOWN = pdfium_c.FPDF_ANNOT_FLAG_HIDDEN | pdfium_c.FPDF_ANNOT_FLAG_NOVIEW
_PASSWORD = 1 << 13  # a text field's Password flag (PDF 32000-1, table 228): shown masked, never indexed
_MULTILINE = 1 << 12

MAX_WIDGETS = 10_000  # per page: more is a damaged or hostile file, not a form
MAX_VALUE_CHARS = 100_000
LINE_STEP = 1.2  # font sizes from one baseline of a multi-line value to the next


@dataclass(frozen=True)
class FieldValue:
    """One widget's value: its text lines, and where the widget sits on the page."""

    lines: tuple[str, ...]
    left: float
    bottom: float
    top: float
    multiline: bool


class FormFields:
    """A document's form, opened once; ``page_values`` reads one open page's filled fields."""

    def __init__(self, document: pdfium.PdfDocument) -> None:
        self.handle: Any = None
        # (only an AcroForm: a pdfium built without XFA reads no XFA form, and says so on stderr)
        if document.get_formtype() == pdfium_c.FORMTYPE_ACRO_FORM:
            document.init_forms()
            self.handle = document.formenv.raw if document.formenv else None

    def page_values(self, page: Any) -> list[FieldValue]:
        """The shown, filled text fields of ``page`` (an FPDF_PAGE), in annotation order."""
        if not self.handle:
            return []
        values: list[FieldValue] = []
        for index in range(min(pdfium_c.FPDFPage_GetAnnotCount(page), MAX_WIDGETS)):
            annot = pdfium_c.FPDFPage_GetAnnot(page, index)
            if not annot:
                continue
            try:
                value = self._value(annot)
            finally:
                pdfium_c.FPDFPage_CloseAnnot(annot)
            if value is not None:
                values.append(value)
        return values

    def _value(self, annot: Any) -> FieldValue | None:
        if pdfium_c.FPDFAnnot_GetSubtype(annot) != pdfium_c.FPDF_ANNOT_WIDGET:
            return None
        if pdfium_c.FPDFAnnot_GetFlags(annot) & _NOT_SHOWN:
            return None
        if pdfium_c.FPDFAnnot_GetFormFieldType(self.handle, annot) not in _TEXT_FIELDS:
            return None
        flags = pdfium_c.FPDFAnnot_GetFormFieldFlags(self.handle, annot)
        if flags & _PASSWORD:
            return None
        lines = _value_lines(self._text(annot))
        rect = pdfium_c.FS_RECTF()
        if not lines or not pdfium_c.FPDFAnnot_GetRect(annot, rect):
            return None
        bottom, top = sorted((rect.bottom, rect.top))
        return FieldValue(lines, min(rect.left, rect.right), bottom, top, bool(flags & _MULTILINE) or len(lines) > 1)

    def _text(self, annot: Any) -> str:
        size = pdfium_c.FPDFAnnot_GetFormFieldValue(self.handle, annot, None, 0)  # bytes, UTF-16LE with its NUL
        if size <= 2:
            return ""
        size = min(size, 2 * MAX_VALUE_CHARS + 2)
        buffer = ctypes.create_string_buffer(size)
        pdfium_c.FPDFAnnot_GetFormFieldValue(
            self.handle, annot, ctypes.cast(buffer, ctypes.POINTER(pdfium_c.FPDF_WCHAR)), size
        )
        return buffer.raw[: size - 2].decode("utf-16-le", errors="replace")


def _value_lines(text: str) -> tuple[str, ...]:
    # (a soft hyphen marks a hyphen pdfium joined a line over, see pdf_lines: none comes from a value)
    lines = (collapse_spaces(drop_controls(line.replace(_SHY, ""))) for line in text.splitlines())
    return tuple(line for line in lines if line)


def with_field_values(lines: list[Line], values: Sequence[FieldValue], page: int) -> list[Line]:
    """The page's ``lines`` with its field ``values`` added (see the module's doc)."""
    if not values:
        return lines
    result = list(lines)
    size = _body_size(lines)
    for value in values:
        label = None if value.multiline else _label_on_row(result, value)
        if label is not None:
            line = result[label]
            joined = f"{line.text} {value.lines[0]}"
            result[label] = Line(page, joined, (*line.cells, value.lines[0]), line.x, line.y, line.size, line.bold)
            continue
        first = value.top - size if value.multiline else (value.bottom + value.top) / 2 - 0.35 * size
        added = [
            Line(page, text, (text,), round(value.left, 1), round(first - LINE_STEP * size * n, 1), size, False)
            for n, text in enumerate(value.lines)
        ]
        at = _after_line_above(result, added[0])
        result[at:at] = added
    return result


def _label_on_row(lines: Sequence[Line], value: FieldValue) -> int | None:
    """The index of the plain line (one cell) whose baseline lies within the widget's height and that
    starts left of it, the nearest such: the field's label."""
    found = None
    for index, line in enumerate(lines):
        on_row = len(line.cells) == 1 and value.bottom <= line.y <= value.top and line.x < value.left
        if on_row and (found is None or line.x > lines[found].x):
            found = index
    return found


def _after_line_above(lines: Sequence[Line], added: Line) -> int:
    """Where ``added`` goes in the page's content order: after the last line above it, or on its row
    and left of it; first when there is none."""
    tolerance = added.size / 2
    above = [
        index
        for index, line in enumerate(lines)
        if line.y > added.y + tolerance or (abs(line.y - added.y) <= tolerance and line.x < added.x)
    ]
    return max(above) + 1 if above else 0


def _body_size(lines: Sequence[Line]) -> float:
    """The size most of the page's characters are set in (11 on a page of fields alone): the size its
    values are read at, never larger than the text, so a value is never taken for a heading."""
    sizes: dict[float, int] = {}
    for line in lines:
        sizes[line.size] = sizes.get(line.size, 0) + len(line.text)
    return max(sizes, key=sizes.__getitem__) if sizes else 11.0
