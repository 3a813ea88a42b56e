"""The document information fields that decide who may read a PDF, read by a second reader.

pypdf and pdfium resolve an ambiguous file differently: a trailer that names /Info twice, a
dictionary in an object stream that gives a key twice, a damaged cross-reference table each
reader repairs its own way. pypdf's reading is what gets indexed; pdfium's (``FPDF_GetMetaText``,
what viewers built on it show) must agree on every such field, or the file is refused.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pypdf.generic import BooleanObject, FloatObject, IndirectObject, NameObject, NumberObject

from ingest.field_names import field_name
from ingest.model import UnreadableFile

# the fields that say who reads which version when (and /Keywords, which can carry them as key=value, and
# /Subject, from which none is read but one it names in any form refuses the file: pdf_keywords)
CHECKED_FIELDS = (
    "doc_id",
    "version",
    "access",
    "status",
    "effective_from",
    "effective_to",
    "superseded_by",
    "keywords",
    "subject",
)

# the spellings of each field looked up in pdfium's reading when pypdf's has none (pdfium looks a key
# up as written; the metadata reader takes any case)
_SPELLINGS = tuple(
    sorted(
        {
            form
            for name in CHECKED_FIELDS
            for written in (name, name.replace("_", "-"))  # "-" is "_" in field names (field_names.field_name)
            for form in (written, written.capitalize(), written.upper())
        }
    )
)

_SPELLING_SET = frozenset(_SPELLINGS)

_MAX_TEXT_BYTES = 1 << 20

_EMPTY = {"", "''", "b''", "None"}

_READ_EACH = frozenset({"keywords", "subject"})  # given twice: each value read (pdf_keywords), none refused


def check_against_pdfium(entries: Sequence[tuple[str, Any]], document: pdfium.PdfDocument) -> None:
    """Refuses the file (UnreadableFile) when pdfium reads one of CHECKED_FIELDS otherwise than
    pypdf's ``entries``: a value one reader sees and the other does not, or different values
    (after trimming white space)."""
    ours: dict[str, list[Any]] = {}
    texts: dict[str, set[str]] = {}
    for key, value in entries:
        tag = key[1:] if key.startswith("/") else key
        if field_name(tag) in CHECKED_FIELDS and tag.isascii():
            ours.setdefault(tag, []).append(value)
            texts.setdefault(field_name(tag), set()).add(_text(value).strip() or repr(value)[:200])
    # a field pypdf reads two ways is refused as "given 2 times" by the metadata check, which says more;
    # /Keywords and /Subject given twice are not (only key=value /Keywords are, by pdf_keywords, before
    # this check): pdfium's reading must then be one of pypdf's values
    given_twice = {name for name, values in texts.items() if len(values - _EMPTY) > 1} - _READ_EACH
    for tag in sorted(_SPELLING_SET.union(ours)):
        if field_name(tag) in given_twice:
            continue
        theirs = _pdfium_text(document, tag)
        values = ours.get(tag)
        if values is None:
            if theirs is not None and theirs.strip():
                raise UnreadableFile(
                    f"the document information is ambiguous: {tag.lower()}: not given as pypdf reads the file, "
                    f"{_shown(theirs)} as pdfium reads it"
                )
            continue
        if theirs is not None and not any(_same(value, theirs) for value in values):
            raise UnreadableFile(
                f"the document information is ambiguous: {tag.lower()}: {_shown(_text(values[0]))} as pypdf "
                f"reads the file, {_shown(theirs)} as pdfium reads it"
            )


def trailer_info_problem(entries: Sequence[tuple[str, Any]]) -> str | None:
    """The problem with a trailer dictionary's entries that name /Info more than once (with
    different values), or None."""
    infos = [value for key, value in entries if key == "/Info"]
    distinct = {
        (value.idnum, value.generation) if isinstance(value, IndirectObject) else repr(value) for value in infos
    }
    if len(distinct) > 1:
        return f"the document information is ambiguous: the trailer names /Info {len(infos)} times"
    return None


def _pdfium_text(document: pdfium.PdfDocument, tag: str) -> str | None:
    """pdfium's text for the information dictionary's key ``tag`` ("" when it has none, which
    pdfium does not tell from an empty value); None when it cannot be read."""
    key = tag.encode("ascii")
    size = pdfium_c.FPDF_GetMetaText(document.raw, key, None, 0)
    if size <= 2:
        return ""
    if size > _MAX_TEXT_BYTES:
        return None
    buffer = ctypes.create_string_buffer(size)
    pdfium_c.FPDF_GetMetaText(document.raw, key, buffer, size)
    return buffer.raw[: size - 2].decode("utf-16-le", errors="replace")


def _same(value: Any, theirs: str) -> bool:
    """Whether pypdf's ``value`` and pdfium's text ``theirs`` say the same."""
    if isinstance(value, IndirectObject):
        value = value.get_object()
    if not theirs.strip() and not isinstance(value, str | bytes):
        return True  # pdfium's text of a number, a boolean, an array or a dictionary is empty
    if isinstance(value, BooleanObject):
        return theirs.strip().lower() in (("true",) if value else ("false", ""))
    if isinstance(value, NumberObject | FloatObject):
        try:
            return float(theirs) == float(value)
        except ValueError:
            return False
    return _text(value).strip() == theirs.strip()


def _text(value: Any) -> str:
    if isinstance(value, IndirectObject):
        value = value.get_object()
    if isinstance(value, NameObject):
        return str(value)[1:]
    if isinstance(value, str):  # (pypdf's text strings)
        return str(value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return ""


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")
