"""PDF document information through pypdf: the info dictionary, XMP title and keyword fields
that the metadata reader turns into front matter."""

from __future__ import annotations

import io
import re
import warnings
from typing import Any

from pypdf import PdfReader
from pypdf.generic import BooleanObject, FloatObject, IndirectObject, NameObject, NumberObject

from ingest.model import UnreadableFile

_KEYWORD_FIELD = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*=\s*([^;]*)")


def _read_information(data: bytes) -> dict[str, Any]:
    """The document information entries (and key=value pairs in /Keywords, and XMP dc:title)."""
    if b"%PDF-" not in data[:1024]:
        raise UnreadableFile("not a PDF")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader = _open_reader(data)
        return _information_fields(reader)


def _open_reader(data: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        encrypted = reader.is_encrypted
    except Exception:  # noqa: BLE001 - pypdf raises many kinds of errors on damaged files
        raise UnreadableFile("not a PDF") from None
    if encrypted:
        raise UnreadableFile("encrypted PDF")
    return reader


def _information_fields(reader: PdfReader) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    try:
        info = reader.metadata
        for key in list(info.keys()) if info is not None else ():
            name = str(key).lstrip("/").lower()
            if name and info is not None:
                fields[name] = _plain_value(info[key])
    except Exception:  # noqa: BLE001 - a damaged information dictionary yields no fields, not a failure
        fields = {}
    keywords = fields.get("keywords")
    if isinstance(keywords, str) and "=" in keywords:
        for part in keywords.split(";"):
            match = _KEYWORD_FIELD.fullmatch(part)
            if match and match.group(2).strip():
                name, value = match.group(1).lower(), match.group(2).strip()
                given = fields.get(name)
                if given not in (None, "") and str(given).strip() != value:
                    # Two values for one field in one file: never pick one silently.
                    raise UnreadableFile(
                        f"PDF metadata gives {name} twice: {str(given).strip()!r} in the document "
                        f"information and {value!r} in /Keywords"
                    )
                fields[name] = value
    if not fields.get("title"):
        title = _xmp_title(reader)
        if title:
            fields["title"] = title
    return fields


def _plain_value(value: Any) -> Any:
    if isinstance(value, IndirectObject):
        value = value.get_object()
    if isinstance(value, BooleanObject):
        return bool(value)
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


def _xmp_title(reader: PdfReader) -> str | None:
    try:
        xmp = reader.xmp_metadata
        titles = xmp.dc_title if xmp is not None else None
    except Exception:  # noqa: BLE001 - malformed XMP is ignored
        return None
    if not titles:
        return None
    title = titles.get("x-default") or next(iter(titles.values()), None)
    return str(title) if title else None
