"""The bulk cross-reference stream reader fills pypdf's tables exactly as pypdf does."""

from __future__ import annotations

import io
import re
import warnings
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pypdf import PdfReader

from ingest.parse import pdf_xref
from ingest.parse.pdf_xref import FastXrefReader

ROOT = Path(__file__).resolve().parents[1]


def _pdf_with_xref_stream(widths: list[int], index: list[int] | None, rows: bytes) -> bytes:
    """A small PDF whose cross-reference stream has these /W, /Index and (uncompressed) rows."""
    head = b"%PDF-1.5\n"
    catalog = b"1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    pages = b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
    start = len(head) + len(catalog) + len(pages)
    w = " ".join(map(str, widths)).encode()
    extra = b" /Index [" + " ".join(map(str, index)).encode() + b"]" if index is not None else b""
    stream = (
        b"3 0 obj\n<< /Type /XRef /Size 4 /Root 1 0 R /W ["
        + w
        + b"]"
        + extra
        + b" /Length "
        + str(len(rows)).encode()
        + b" >>\nstream\n"
        + rows
        + b"\nendstream\nendobj\n"
    )
    return head + catalog + pages + stream + b"startxref\n" + str(start).encode() + b"\n%%EOF\n"


def _tables(cls: type[PdfReader], data: bytes) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            reader = cls(io.BytesIO(data), strict=False)
        except Exception as exc:  # noqa: BLE001 - the same failure on both sides is what is compared
            return type(exc).__name__, str(exc)
    trailer = re.sub(r"IndirectObject\((\d+), (\d+), \d+\)", r"\1 \2 R", repr(reader.trailer))
    return reader.xref, reader.xref_objStm, trailer


@st.composite
def _rows(draw: st.DrawFn, widths: list[int]) -> bytes:
    """Rows for these widths: mostly entries of types 0-2 (the bulk path), some anything at all."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=120))
    rows = b""
    for _ in range(draw(st.integers(0, 14))):
        for field, width in enumerate(widths[:3]):
            if width > 0:
                value = draw(st.sampled_from([0, 1, 2]) if field == 0 else st.integers(0, 2 ** (8 * width) - 1))
                rows += value.to_bytes(width, "big")
    return rows + draw(st.binary(max_size=3))


@settings(max_examples=400, deadline=None)
@given(
    widths=st.lists(st.integers(-1, 9), min_size=3, max_size=4),
    index=st.none() | st.lists(st.integers(0, 12), min_size=2, max_size=6),
    data=st.data(),
)
def test_tables_match_pypdf(widths: list[int], index: list[int] | None, data: st.DataObject) -> None:
    pdf = _pdf_with_xref_stream(widths, index, data.draw(_rows(widths)))
    assert _tables(FastXrefReader, pdf) == _tables(PdfReader, pdf)


def test_plain_stream_read_in_bulk(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A well-formed stream (types 0, 1, 2 only) takes the bulk path, not pypdf's fallback."""
    rows = bytes([0, 0, 0, 0, 255, 1, 0, 0, 9, 0, 1, 0, 0, 60, 0, 2, 0, 0, 7, 1])  # free, 2 in use, compressed
    data = _pdf_with_xref_stream([1, 3, 1], [0, 4], rows)
    used: list[bool] = []
    original = pdf_xref._subsections
    monkeypatch.setattr(pdf_xref, "_subsections", lambda *args: used.append(original(*args)) or used[-1])
    assert _tables(FastXrefReader, data) == _tables(PdfReader, data)
    assert used == [True]


def test_repository_pdfs_match_pypdf() -> None:
    for path in sorted([*ROOT.glob("tests/fixtures/**/*.pdf"), *ROOT.glob("corpus/**/*.pdf")]):
        data = path.read_bytes()
        assert _tables(FastXrefReader, data) == _tables(PdfReader, data), path
