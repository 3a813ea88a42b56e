"""A PDF whose document information gives a field that decides access two ways is refused,
whatever the file's layout: the dictionary in an object stream (compressed or not, a key
name-escaped), a trailer naming /Info twice, or any file pypdf and pdfium read differently."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from ingest.metadata import resolve_metadata
from ingest.model import UnreadableFile
from ingest.parse import parse_bytes, read_metadata
from ingest.parse.pdf_info_check import check_against_pdfium
from ingest.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
TEXT = b"BT /F1 12 Tf 72 720 Td (Merger terms alpha.) Tj ET"


def _page_objects() -> dict[int, bytes]:
    return {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >>"
        b" /Contents 6 0 R >>",
        4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        6: b"<< /Length %d >>\nstream\n" % len(TEXT) + TEXT + b"\nendstream",
    }


def object_stream_pdf(info: bytes, compress: bool) -> bytes:
    """A PDF 1.5 file whose information dictionary (object 5) lies in an object stream (7)."""
    objects = _page_objects()
    data, flate = b"5 0 " + info + b"\n", b""
    if compress:
        data, flate = zlib.compress(data), b"/Filter /FlateDecode "
    objects[7] = (
        b"<< /Type /ObjStm /N 1 /First 4 %s/Length %d >>\nstream\n" % (flate, len(data)) + data + b"\nendstream"
    )
    out, offsets = bytearray(b"%PDF-1.5\n"), {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    offsets[8] = len(out)
    rows = b"".join(
        struct.pack(">BIH", 0, 0, 65535)
        if n == 0
        else struct.pack(">BIH", 2, 7, 0)
        if n == 5
        else struct.pack(">BIH", 1, offsets[n], 0)
        for n in range(9)
    )
    out += b"8 0 obj\n<< /Type /XRef /Size 9 /W [1 4 2] /Root 1 0 R /Info 5 0 R /Length %d >>\nstream\n" % len(rows)
    out += rows + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % offsets[8]
    return bytes(out)


def two_info_pdf(first: bytes, second: bytes) -> bytes:
    """A classic file whose trailer names /Info twice: object 5 (``first``), then 7 (``second``)."""
    objects = _page_objects()
    objects[5], objects[7] = first, second
    out, offsets = bytearray(b"%PDF-1.4\n"), {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    start = len(out)
    out += b"xref\n0 8\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % offsets[n] for n in range(1, 8))
    out += b"trailer\n<< /Size 8 /Root 1 0 R /Info 5 0 R /Info 7 0 R >>\nstartxref\n%d\n%%%%EOF\n" % start
    return bytes(out)


def updated_info_pdf(first: bytes, second: bytes) -> bytes:
    """A classic file with information dictionary ``first`` (object 5), and an incremental update that
    writes object 5 again as ``second`` under generation 1 while its cross-reference entry says 0:
    pypdf keeps the first dictionary, pdfium reads the update's."""
    objects = _page_objects()
    objects[5] = first
    out, offsets = bytearray(b"%PDF-1.4\n"), {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    start = len(out)
    out += b"xref\n0 7\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % offsets.get(n, 0) for n in range(1, 7))
    out += b"trailer\n<< /Size 7 /Root 1 0 R /Info 5 0 R >>\nstartxref\n%d\n%%%%EOF\n" % start
    again = len(out)
    out += b"5 1 obj\n" + second + b"\nendobj\n"
    update = len(out)
    out += b"xref\n5 1\n%010d 00000 n \ntrailer\n<< /Size 7 /Root 1 0 R /Info 5 0 R /Prev %d >>\n" % (again, start)
    out += b"startxref\n%d\n%%%%EOF\n" % update
    return bytes(out)


def info(access: bytes) -> bytes:
    return b"<< /Title (Merger) /doc_id (merger) /version (1) " + access + b" >>"


AMBIGUOUS = {
    "objstm": object_stream_pdf(info(b"/access (public) /access (staff)"), compress=False),
    "objstm-flate": object_stream_pdf(info(b"/access (public) /access (staff)"), compress=True),
    "objstm-escaped": object_stream_pdf(info(b"/access (public) /acc#65ss (staff)"), compress=True),
    "trailer": two_info_pdf(info(b"/access (public)"), info(b"/access (staff)")),
}


def _refused(fields: dict[str, object]) -> list[str]:
    meta, problems, _ = resolve_metadata("x.pdf", fields, None, Settings())
    assert meta is None
    return problems


@pytest.mark.parametrize("layout", sorted(AMBIGUOUS))
def test_a_field_given_two_ways_is_never_indexed_with_either(layout: str) -> None:
    data = AMBIGUOUS[layout]
    if layout == "trailer":
        with pytest.raises(UnreadableFile, match="ambiguous: the trailer names /Info 2 times"):
            parse_bytes(data, "x.pdf")
        with pytest.raises(UnreadableFile, match="ambiguous"):
            read_metadata(data, "x.pdf")
        return
    assert parse_bytes(data, "x.pdf").metadata["access"] == ["public", "staff"]
    assert read_metadata(data, "x.pdf")["access"] == ["public", "staff"]
    assert _refused(read_metadata(data, "x.pdf")) == ["x.pdf: access: given 2 times: ['public', 'staff']"]


@pytest.mark.parametrize("layout", ["objstm", "objstm-flate"])
def test_one_value_in_an_object_stream_is_read(layout: str) -> None:
    data = object_stream_pdf(info(b"/access (staff) /status /current"), compress=layout == "objstm-flate")
    metadata = parse_bytes(data, "x.pdf").metadata
    assert (metadata["access"], metadata["status"], metadata["doc_id"]) == ("staff", "current", "merger")


def test_the_same_info_named_twice_is_not_ambiguous() -> None:
    data = two_info_pdf(info(b"/access (staff)"), info(b"/access (staff)")).replace(b"/Info 7 0 R", b"/Info 5 0 R")
    assert parse_bytes(data, "x.pdf").metadata["access"] == "staff"


def test_a_field_pdfium_reads_otherwise_is_refused() -> None:
    """The second reader's check, whatever made the readers differ."""
    document = pdfium.PdfDocument(two_info_pdf(info(b"/access (staff)"), info(b"/access (staff)")))
    try:
        check_against_pdfium([("/access", "staff"), ("/doc_id", "merger"), ("/version", "1")], document)
        with pytest.raises(UnreadableFile, match="access: 'public' as pypdf reads the file, 'staff' as pdfium"):
            check_against_pdfium([("/access", "public"), ("/doc_id", "merger"), ("/version", "1")], document)
        with pytest.raises(UnreadableFile, match="access: not given as pypdf reads the file, 'staff' as pdfium"):
            check_against_pdfium([("/doc_id", "merger"), ("/version", "1")], document)
    finally:
        document.close()


def test_validate_refuses_each_layout(tmp_path: Path) -> None:
    documents = tmp_path / "documents"
    documents.mkdir()
    for layout, data in AMBIGUOUS.items():
        (documents / f"{layout}.pdf").write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-m", "ingest.cli", "validate", str(tmp_path)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "rejected: 4" in out
    for layout in ("objstm", "objstm-flate", "objstm-escaped"):
        assert f"documents/{layout}.pdf: access: given 2 times" in out
    assert "documents/trailer.pdf: unreadable file: the document information is ambiguous" in out


def test_key_value_keywords_given_twice_are_refused() -> None:
    data = object_stream_pdf(info(b"/Keywords (access=public) /Keywords (access=staff)"), compress=True)
    with pytest.raises(UnreadableFile, match="gives /Keywords 2 times"):
        parse_bytes(data, "x.pdf")
    with pytest.raises(UnreadableFile, match="gives /Keywords 2 times"):
        read_metadata(data, "x.pdf")


def test_a_trailer_naming_info_twice_with_an_escaped_name_is_refused() -> None:
    """The trailer check skips re-reading a trailer that writes ``/Info`` once and no ``#`` escape:
    ``/I#6efo`` is /Info too, and the trailer that writes it so is still read and refused."""
    data = two_info_pdf(info(b"/access (public)"), info(b"/access (staff)")).replace(b"/Info 7 0 R", b"/I#6efo 7 0 R")
    with pytest.raises(UnreadableFile, match="ambiguous: the trailer names /Info 2 times"):
        parse_bytes(data, "x.pdf")
    with pytest.raises(UnreadableFile, match="ambiguous"):
        read_metadata(data, "x.pdf")


# pypdf reads the bytes of an odd-length UTF-16 string as PDFDocEncoding; pdfium reads them as UTF-16
ODD_UTF16 = b"<FEFF" + "access: staff".encode("utf-16-be").hex().encode() + b"00>"

SUBJECT_READ_TWO_WAYS = {
    "incremental-update": updated_info_pdf(info(b"/access (public) /Subject (Memo)"),
                                           info(b"/access (public) /Subject (access: staff)")),
    "decoded-otherwise": object_stream_pdf(info(b"/access (public) /Subject " + ODD_UTF16), compress=True),
}  # fmt: skip


@pytest.mark.parametrize("layout", sorted(SUBJECT_READ_TWO_WAYS))
def test_a_subject_pdfium_reads_otherwise_is_refused(layout: str) -> None:
    """/Subject is read by pdfium too, like the fields that decide access: no field is read from it, but
    one naming a field is refused, and a file whose /Subject only pdfium sees as 'access: staff' must not
    pass as an ordinary subject."""
    data = SUBJECT_READ_TWO_WAYS[layout]
    for read in (parse_bytes, read_metadata):
        with pytest.raises(UnreadableFile, match=r"ambiguous: subject: .* as pypdf reads the file, 'access: staff' as"):
            read(data, "x.pdf")


def test_a_subject_given_twice_is_read_in_each_value() -> None:
    for twice in (b"/Subject (Memo) /Subject (access: staff)", b"/Subject (access: staff) /Subject (Memo)"):
        data = object_stream_pdf(info(b"/access (public) " + twice), compress=True)
        for read in (parse_bytes, read_metadata):
            with pytest.raises(UnreadableFile, match="/Subject names 'access' in a form not read"):
                read(data, "x.pdf")
    alike = object_stream_pdf(info(b"/access (public) /Subject (Memo) /Subject (Board memo)"), compress=True)
    assert read_metadata(alike, "x.pdf")["subject"] == ["Memo", "Board memo"]


def test_a_subject_given_twice_must_hold_what_pdfium_reads() -> None:
    document = pdfium.PdfDocument(updated_info_pdf(info(b"/Subject (Memo)"), info(b"/Subject (access: staff)")))
    fields = [("/doc_id", "merger"), ("/version", "1")]
    try:
        check_against_pdfium([*fields, ("/Subject", "Memo"), ("/Subject", "access: staff")], document)
        with pytest.raises(UnreadableFile, match="subject: 'Memo' as pypdf reads the file, 'access: staff' as pdfium"):
            check_against_pdfium([*fields, ("/Subject", "Memo"), ("/Subject", "Board memo")], document)
    finally:
        document.close()
