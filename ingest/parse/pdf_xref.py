"""pypdf's reader with its cross-reference streams decoded in bulk.

pypdf reads a cross-reference stream (PDF 1.5+, what pdfTeX and most writers make) entry by
entry, each field through a Python function and ``struct``: about 4 µs an object, 2 CPU-s over
the TeX Live corpus (7 % of parsing it). ``FastXrefReader`` decodes the same bytes a column at a
time and fills the same tables in the same order; whatever it does not expect (a field wider
than 8 bytes, an unknown entry type, data shorter than its entries, a pypdf whose reading it
does not recognise) goes to pypdf's own code, so the tables are pypdf's in every case.
"""

from __future__ import annotations

from collections.abc import Callable
from io import BytesIO
from itertools import chain
from typing import Any

from pypdf import PdfReader


class FastXrefReader(PdfReader):
    """A ``PdfReader`` whose cross-reference stream subsections are read by ``_subsections``."""

    def _read_xref_subsections(
        self,
        idx_pairs: list[int],
        get_entry: Callable[[int], int | tuple[int, ...]],
        used_before: Callable[[int, int | tuple[int, ...]], bool],
    ) -> None:
        if not _subsections(self, idx_pairs, get_entry):
            super()._read_xref_subsections(idx_pairs, get_entry, used_before)


def _entry_source(get_entry: Callable[..., Any]) -> tuple[bytes, list[int]] | None:
    """The stream bytes not read yet and the field widths that pypdf's ``get_entry`` (a closure
    of ``_read_pdf15_xref_stream`` over ``stream_data`` and ``entry_sizes``) reads with."""
    code, cells = getattr(get_entry, "__code__", None), getattr(get_entry, "__closure__", None)
    if code is None or cells is None:
        return None
    free = dict(zip(code.co_freevars, (cell.cell_contents for cell in cells), strict=False))
    stream, widths = free.get("stream_data"), free.get("entry_sizes")
    if not isinstance(stream, BytesIO) or not isinstance(widths, list) or len(widths) < 3:
        return None
    return stream.getvalue()[stream.tell() :], widths[:3]


def _subsections(reader: PdfReader, idx_pairs: list[int], get_entry: Callable[..., Any]) -> bool:
    """pypdf's ``_read_xref_subsections`` for a cross-reference stream, a column at a time;
    False (nothing changed) where the entries are not the plain case it handles."""
    source = _entry_source(get_entry)
    if source is None:
        return False
    data, widths = source
    if not all(isinstance(width, int) for width in widths):
        return False
    if any(width > 8 for width in widths):  # (pypdf refuses such a field when it reads one)
        return False
    try:
        numbers = list(chain.from_iterable(range(start, start + size) for start, size in reader._pairs(idx_pairs)))
    except TypeError:  # (a start or count that is no integer: pypdf's error, raised where it raises it)
        return False
    # a field of width 0 or less reads nothing and takes its default (1 for the type, else 0)
    entry_bytes = sum(width for width in widths if width > 0)
    count = len(numbers)
    if entry_bytes == 0 or len(data) < count * entry_bytes:
        return False
    data = data[: count * entry_bytes]
    columns: list[Any] = []
    offset = 0
    for field, width in enumerate(widths):
        columns.append(_column(data, offset, width, entry_bytes, 1 if field == 0 else 0, count))
        offset += max(width, 0)
    types, firsts, seconds = columns
    if not set(types) <= {0, 1, 2}:  # an unknown type reads no more fields: pypdf's way
        return False
    _fill(reader, numbers, types, firsts, seconds)
    return True


def _column(data: bytes, offset: int, width: int, step: int, default: int, count: int) -> Any:
    """One field of every entry, big-endian, as pypdf's ``convert_to_int`` reads it."""
    if width <= 0:
        return [default] * count
    if width == 1:
        return data[offset::step]  # (bytes: its items are the values)
    return [int.from_bytes(data[at : at + width], "big") for at in range(offset, len(data), step)]


def _fill(reader: PdfReader, numbers: list[int], types: Any, firsts: Any, seconds: Any) -> None:
    """The entries into pypdf's tables as ``_read_xref_subsections`` puts them: an object seen in
    a later cross-reference section (read first) is not replaced."""
    xref: dict[Any, dict[int, Any]] = reader.xref
    in_streams: dict[int, Any] = reader.xref_objStm
    for number, kind, first, second in zip(numbers, types, firsts, seconds, strict=True):
        if kind == 1:  # in use: byte offset, generation
            by_generation = xref.get(second)
            if by_generation is None:
                by_generation = xref[second] = {}
            if number not in by_generation and number not in in_streams:
                by_generation[number] = first
        # kind 2, compressed: object stream number, index in it (generation 0)
        elif kind == 2 and number not in xref.get(0, ()) and number not in in_streams:
            in_streams[number] = (first, second)
