"""PDF document information through pypdf: the info dictionary, XMP title and keyword fields
(``ingest.parse.pdf_keywords``) that the metadata reader turns into front matter."""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Collection
from typing import Any

import pypdfium2 as pdfium
from pypdf import PdfReader
from pypdf._utils import read_non_whitespace, skip_over_comment
from pypdf.generic import BooleanObject, FloatObject, IndirectObject, NameObject, NumberObject, read_object
from pypdf.xmp import DC_NAMESPACE, RDF_NAMESPACE

from ingest.model import UnreadableFile
from ingest.parse.pdf_info_check import check_against_pdfium, trailer_info_problem
from ingest.parse.pdf_keywords import read_keyword_fields, refuse_unread_title
from ingest.parse.pdf_title import without_placeholders


def _read_information(
    data: bytes, document: pdfium.PdfDocument | None = None, labels: Collection[str] = ()
) -> dict[str, Any]:
    """The document information entries (and key=value pairs in /Keywords, and XMP dc:title); ``labels``,
    the corpus's access labels, are what ``access LABEL`` without a sign names (pdf_keywords).

    The fields that decide who reads a document are read again by pdfium (``document``, opened
    here when not given): a file the two readers read differently is refused, never indexed
    with one reader's guess (see ``check_against_pdfium``)."""
    if b"%PDF-" not in data[:1024]:
        raise UnreadableFile("not a PDF")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader = _open_reader(data)
        _check_trailer(reader, data)
        entries = _info_entries(reader)
        fields = _information_fields(reader, entries, labels)
    if document is not None:
        check_against_pdfium(entries, document)
        return fields
    try:
        opened = pdfium.PdfDocument(data)
    except Exception:  # noqa: BLE001 - a file pdfium cannot open is refused when it is parsed
        return fields
    try:
        check_against_pdfium(entries, opened)
    finally:
        opened.close()
    return fields


def _check_trailer(reader: PdfReader, data: bytes) -> None:
    """Refuses a trailer that names /Info twice (pypdf keeps the first, pdfium and MuPDF the last)."""
    for position in _trailer_positions(reader, data):
        if data.count(b"/Info", position) <= 1 and data.find(b"#", position) == -1:
            # What pypdf reads from here on cannot name /Info twice: the name is written once at
            # most, and never with a #xx escape (/I#6efo). (bytes.count and find: no dictionary read)
            continue
        stream = reader.stream
        saved = stream.tell()
        try:
            stream.seek(position)
            entries = _dictionary_entries(stream, reader) or []
        except Exception:  # noqa: BLE001 - a trailer pypdf cannot re-read: pdfium's reading is compared
            entries = []
        finally:
            stream.seek(saved)
        problem = trailer_info_problem(entries)
        if problem:
            raise UnreadableFile(problem)


def _trailer_positions(reader: PdfReader, data: bytes) -> list[int]:
    """Where trailer dictionaries start: after each ``trailer`` keyword (the last few, for
    incremental updates), and the dictionary of the cross-reference stream ``startxref`` names."""
    positions = []
    found = data.find(b"trailer", max(0, len(data) - _TRAILER_TAIL))  # (bytes.find: a regular expression costs 30x)
    while found >= 0:
        positions.append(found + len(b"trailer"))
        found = data.find(b"trailer", found + 1)
    start = getattr(reader, "_startxref", 0)
    if 0 < start < len(data) and _OBJECT_HEADER.match(data, start):
        header = _OBJECT_HEADER.match(data, start)
        positions.append(header.end() if header else start)
    return positions[-_MAX_TRAILERS:]


_OBJECT_HEADER = re.compile(rb"\s*\d+\s+\d+\s+obj\b")
_TRAILER_TAIL = 1 << 20  # bytes at the end of a file where trailers are looked for
_MAX_TRAILERS = 32


def _open_reader(data: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        encrypted = reader.is_encrypted
    except Exception:  # noqa: BLE001 - pypdf raises many kinds of errors on damaged files
        raise UnreadableFile("not a PDF") from None
    if encrypted:
        raise UnreadableFile("encrypted PDF")
    return reader


def _add_declared(given: list[Any], value: Any) -> None:
    """An empty or repeated value declares nothing new: hyperref writes `/Title (LaTeX News)` and
    later `/Title ()` in the same dictionary (49 TeX Live manuals do)."""
    if value in ("", None):
        if not given:
            given.append(value)
    elif value not in given:
        if given and given[0] in ("", None):
            given[0] = value
        else:
            given.append(value)


def _info_entries(reader: PdfReader) -> list[tuple[str, Any]]:
    """The information dictionary's (key, value) entries, duplicates kept where it can be re-read;
    none when pypdf cannot read it."""
    try:
        entries, alone = _raw_info_entries(reader)
        if entries is None or not alone:
            # pypdf's own reading: it may fail (no fields then), and repair where the object lies
            info = reader.metadata
            if entries is None:
                entries = _raw_info_entries(reader)[0]
            if entries is None:  # not re-readable: pypdf's dictionary (which keeps one value per key)
                entries = [(str(key), info[key]) for key in list(info.keys())] if info is not None else []
        return entries
    except Exception:  # noqa: BLE001 - a damaged information dictionary yields no fields, not a failure
        return []


def _information_fields(reader: PdfReader, entries: list[tuple[str, Any]], labels: Collection[str]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    try:
        values_by_name: dict[str, list[Any]] = {}
        for key, value in entries:
            name = key.lstrip("/").lower()
            _refuse_unwritten_number(key, value.get_object() if isinstance(value, IndirectObject) else value)
            plain = _plain_value(value)
            if name:
                _add_declared(values_by_name.setdefault(name, []), plain)
        # A key given twice with different values (`/access (public) /access (staff)`, or `/Access`
        # and `/access`) keeps every value, so the metadata check reports "given 2 times" instead of
        # picking one: pypdf keeps the first, MuPDF shows the last.
        fields = {name: values[0] if len(values) == 1 else values for name, values in values_by_name.items()}
    except UnreadableFile:
        raise
    except Exception:  # noqa: BLE001 - a damaged information dictionary yields no fields, not a failure
        fields = {}
    # An empty /Title () states nothing (hyperref writes one by default), nor does a producer's placeholder
    # ("untitled", "Microsoft Word - report.docx", "dvips.dvi"): read as no title, before /Keywords' title
    # is compared with it, and the XMP title (where producers copy it) likewise.
    if "title" in fields:
        title = without_placeholders(fields.pop("title"))
        if title is not None:
            fields["title"] = title
    read_keyword_fields(fields, reader, labels)
    if not fields.get("title"):
        title = without_placeholders(_xmp_title(reader, labels))
        if title:
            fields["title"] = title
    return fields


def _raw_info_entries(reader: PdfReader) -> tuple[list[tuple[str, Any]] | None, bool]:
    """Every (key, value) of the document information dictionary in file order, duplicates kept,
    and whether that reading stands alone.

    pypdf's DictionaryObject keeps only the first of two equal keys (with a log warning), so the
    dictionary is read again entry by entry with pypdf's own object reader. None when the
    dictionary is not a plain indirect object at a known offset (inline in the trailer, in an
    object stream, or damaged): then pypdf's dictionary is used as is. The reading stands alone
    (pypdf's dictionary, which costs as much again, is not needed) unless pypdf would read the
    object elsewhere (from an object stream) or further (a stream after the dictionary), where
    it may fail.
    """
    reference = reader.trailer.raw_get("/Info") if "/Info" in reader.trailer else None
    if not isinstance(reference, IndirectObject):
        return None, False
    if reference.generation == 0 and reference.idnum in reader.xref_objStm:
        # (pypdf reads an object stream's object before its offset in the xref table, as here)
        return _object_stream_entries(reader, reference), True
    start = reader.xref.get(reference.generation, {}).get(reference.idnum)
    if not isinstance(start, int):
        return None, False
    return _entries_at(reader, reference, start, True)


def _entries_at(
    reader: PdfReader, reference: IndirectObject, start: int, alone: bool
) -> tuple[list[tuple[str, Any]] | None, bool]:
    """The entries of the dictionary object ``reference`` at offset ``start`` (see _raw_info_entries)."""
    stream = reader.stream
    saved = stream.tell()
    try:
        stream.seek(start)
        if reader.read_object_header(stream) != (reference.idnum, reference.generation):
            return None, False
        entries = _dictionary_entries(stream, reader)
        if entries is None:
            return None, False
        return entries, alone and not _stream_follows(stream)
    except Exception:  # noqa: BLE001 - a dictionary pypdf cannot re-read falls back to pypdf's view
        return None, False
    finally:
        stream.seek(saved)


def _dictionary_entries(stream: Any, reader: PdfReader) -> list[tuple[str, Any]] | None:
    """The (key, value) entries of the dictionary that starts at the stream's position (after
    white space), duplicates kept, in file order; the stream is left after its closing ``>``.
    None when no dictionary can be read there."""
    read_non_whitespace(stream)
    stream.seek(-1, 1)
    if stream.read(2) != b"<<":
        return None
    entries: list[tuple[str, Any]] = []
    for _ in range(_MAX_INFO_ENTRIES):
        token = read_non_whitespace(stream)
        if token == b"%":
            stream.seek(-1, 1)
            skip_over_comment(stream)
            continue
        if token == b">":
            return entries
        if not token:
            return None
        stream.seek(-1, 1)
        key = read_object(stream, reader)
        if not isinstance(key, NameObject):
            return None
        read_non_whitespace(stream)
        stream.seek(-1, 1)
        at = stream.tell()
        value = read_object(stream, reader)
        if isinstance(value, NumberObject | FloatObject):
            value = _with_text(value, stream, at)
        entries.append((str(key), value))
    return None


class _WrittenInteger(NumberObject):
    """A PDF integer with its text as written (pypdf's NumberObject keeps the int: 007 is 7)."""

    written = ""


class _WrittenReal(FloatObject):
    """A PDF real with its text as written (pypdf's FloatObject keeps the float: 2.10 is 2.1, 2.0 is 2)."""

    written = ""


def _with_text(value: NumberObject | FloatObject, stream: Any, at: int) -> NumberObject | FloatObject:
    """``value``, read from ``at`` to the stream's position, with the text it was read from."""
    end = stream.tell()
    stream.seek(at)
    text = stream.read(end - at).decode("latin-1")
    written = _WrittenInteger(value) if isinstance(value, NumberObject) else _WrittenReal(value)
    written.written = text
    return written


_PDF_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def _as_written(value: Any) -> str | None:
    """The text of a number read with :func:`_with_text` when it is a PDF number, else None."""
    text = getattr(value, "written", None)
    return text if isinstance(text, str) and _PDF_NUMBER.fullmatch(text) else None


def _refuse_unwritten_number(key: str, value: Any) -> None:
    """A number in a field the metadata check reads whose text as written is not known: refused, since
    its float or int (2.1 for 2.10, 7 for 007) would be a guessed doc_id or version."""
    from ingest.field_names import field_name
    from ingest.metadata import KNOWN_FIELDS

    if not isinstance(value, NumberObject | FloatObject) or _as_written(value) is not None:
        return
    if field_name(key.lstrip("/")) not in KNOWN_FIELDS:
        return
    written = getattr(value, "written", "")
    how = (
        f"{written!r} is not a PDF number (pypdf reads {value!r})"
        if written
        else f"a PDF number ({value!r} as pypdf reads it) whose text as written cannot be read back"
    )
    raise UnreadableFile(f"{key}: {how}; write it as a text string, {key} (…) (nothing was guessed)")


def _object_stream_entries(reader: PdfReader, reference: IndirectObject) -> list[tuple[str, Any]] | None:
    """The entries of the dictionary ``reference`` that lies in an object stream, read from the
    stream's decoded content as pypdf finds it there (its ``_get_object_from_stream``), with
    duplicates kept. None when it cannot be read so."""
    try:
        number, _ = reader.xref_objStm[reference.idnum]
        container = IndirectObject(number, 0, reader).get_object()
        content = io.BytesIO(container.get_data())  # type: ignore[union-attr]
        first = int(container["/First"])  # type: ignore[index]
        for _ in range(min(int(container["/N"]), _MAX_INFO_ENTRIES)):  # type: ignore[index]
            read_non_whitespace(content)
            content.seek(-1, 1)
            idnum = NumberObject.read_from_stream(content)
            read_non_whitespace(content)
            content.seek(-1, 1)
            offset = NumberObject.read_from_stream(content)
            if idnum == reference.idnum:
                content.seek(first + int(offset))
                return _dictionary_entries(content, reader)
        return None
    except Exception:  # noqa: BLE001 - an object stream pypdf cannot re-read falls back to pypdf's view
        return None


_MAX_INFO_ENTRIES = 10_000


def _stream_follows(stream: Any) -> bool:
    """Whether the dictionary whose closing ``>`` was just read is a stream's (as pypdf checks it);
    True when that cannot be told."""
    try:
        stream.read(1)
        return bool(read_non_whitespace(stream) == b"s" and stream.read(5) == b"tream")
    except Exception:  # noqa: BLE001 - whatever pypdf makes of it, it reads further than the dictionary
        return True


def _plain_value(value: Any) -> Any:
    if isinstance(value, IndirectObject):
        value = value.get_object()
    if isinstance(value, BooleanObject):
        return bool(value)
    written = _as_written(value)
    if written is not None:  # a number as written: /version 2.10 is "2.10", as front matter's 2.10 is
        return written
    if isinstance(value, NumberObject):
        return int(value)
    if isinstance(value, FloatObject):
        return float(value)
    if isinstance(value, NameObject):
        return str(value).lstrip("/")
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    # Arrays and dictionaries stay structured, so the metadata check refuses them
    # instead of indexing their Python text ("[1, 2]") as a title.
    if isinstance(value, list):
        return [_plain_value(item) for item in value[:1000]]
    if isinstance(value, dict):
        return {str(k): _plain_value(v) for k, v in list(value.items())[:1000]}
    return str(value)


def _xmp_title(reader: PdfReader, labels: Collection[str]) -> str | list[str] | None:
    """dc:title from the XMP packet: its x-default entry, else its first. One language given twice
    with different values (two x-default entries, or two dc:title elements) returns both, for the
    "given 2 times" problem: pypdf's ``dc_title`` keeps the last silently."""
    try:
        xmp = reader.xmp_metadata
        if xmp is None:
            return None
        by_language: dict[str, list[str]] = {}
        for element in xmp.get_element("", DC_NAMESPACE, "title"):
            alternatives = element.getElementsByTagNameNS(RDF_NAMESPACE, "Alt")
            items = [item for alt in alternatives for item in alt.getElementsByTagNameNS(RDF_NAMESPACE, "li")]
            if alternatives:
                pairs = [(item.getAttribute("xml:lang"), xmp._get_text(item)) for item in items]
            else:
                pairs = [("x-default", xmp._get_text(element))]
            for language, text in pairs:
                values = by_language.setdefault(language, [])
                if text and text not in values:
                    values.append(text)
    except Exception as exc:  # noqa: BLE001 - a packet pypdf cannot parse: refused only if it has a title
        refuse_unread_title(reader, exc, labels)
        return None
    titles = by_language.get("x-default") or next((v for v in by_language.values() if v), None)
    if not titles:
        return None
    return titles[0] if len(titles) == 1 else titles
