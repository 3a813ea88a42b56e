"""HTML source: bytes decoded by their declared or sniffed encoding, the lxml tree (deep nesting
refused), and the ``<meta name>`` fields and ``<title>`` read as front matter."""

from __future__ import annotations

import codecs
import re
from typing import Any

import lxml.etree

from ingest.model import UnreadableFile
from ingest.parse._common import collapse_spaces, normalise_newlines, strip_controls

_TAG_NAME = re.compile(rb"<([a-z][a-z0-9-]*)")


Element = lxml.etree._Element


_RESOURCE_LIMIT = getattr(lxml.etree.ErrorTypes, "ERR_RESOURCE_LIMIT", -1)


def _text_of(node: Element) -> str:
    """All text in a subtree (comments aside), as one string, joined in C."""
    return lxml.etree.tostring(node, method="text", encoding=str, with_tail=False)


def _tree(source: bytes, refuse_deep: bool = True) -> Element | None:
    """The element tree of the document's UTF-8 source (None when it holds no element at all).

    ``huge_tree`` lifts libxml2's depth limit of 256 to 2048; deeper nesting is refused
    rather than cut off, which libxml2 would otherwise do silently.
    """
    parser = lxml.etree.HTMLParser(encoding="utf-8", huge_tree=True, remove_pis=True)
    try:
        tree = lxml.etree.fromstring(source, parser)
    except lxml.etree.ParserError:
        return None  # "Document is empty"
    for error in parser.error_log if refuse_deep else ():
        # libxml2 names the limit ERR_RESOURCE_LIMIT from 2.11 on (lxml >= 5.1); older ones only say so.
        if error.type == _RESOURCE_LIMIT or "excessive depth" in error.message.lower():
            raise UnreadableFile("nested too deeply to parse")
    return tree


# Control characters dropped from the text (all but tab and line ends), as bytes: in UTF-8 they
# are bytes of their own, never part of another character's bytes.
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])


def _decode(data: bytes) -> bytes:
    """The document as UTF-8 for lxml: its BOM or declared charset, else UTF-8 (strictly); line
    ends as ``\\n`` and control characters dropped (the text of ``_common.strip_controls``).

    UTF-8 input is checked, not decoded: its bytes are cleaned as they are, so they never go
    through a Python string and back.
    """
    text_data, encoding = _strip_byte_order_mark(data)
    if not encoding:
        if b"\x00" in data:
            raise UnreadableFile("binary file")
        encoding = _usable_encoding(_declared_encoding(data))
    if encoding and encoding not in ("utf-8", "utf8"):
        try:  # strictly: bytes the declared charset cannot read (utf-7 garbage) would index U+FFFD
            text = text_data.decode(encoding)
        except UnicodeDecodeError as exc:
            raise UnreadableFile(
                f"not {encoding} text (its declared charset): {exc.reason} at byte {exc.start}"
            ) from None
        if "\x00" in text:
            raise UnreadableFile("binary file")
        return strip_controls(normalise_newlines(text)).encode("utf-8")
    if not text_data.isascii():
        try:
            text_data.decode("utf-8")
        except UnicodeDecodeError:
            raise UnreadableFile("not UTF-8 text" + ("" if encoding else " and no charset declared")) from None
    if b"\x00" in text_data:
        raise UnreadableFile("binary file")
    if b"\r" in text_data:
        text_data = text_data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return text_data.translate(None, _CONTROL_BYTES)


# beautifulsoup4's EncodingDetector.strip_byte_order_mark and find_declared_encoding(is_html=True)
# (bs4.dammit, 4.12-4.15), written out: importing bs4 (with soupsieve's CSS parser) cost every parser
# process about 0.25 CPU-s for these two functions. A test holds them equal to bs4's.
_BOMS = (
    (b"\xfe\xff", "utf-16be"),
    (b"\xff\xfe", "utf-16le"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\x00\x00\xfe\xff", "utf-32be"),
    (b"\xff\xfe\x00\x00", "utf-32le"),
)
_XML_ENCODING = re.compile(rb"^\s*<\?.*encoding=['\"](.*?)['\"].*\?>", re.IGNORECASE)
_HTML_CHARSET = re.compile(rb"<\s*meta[^>]+charset\s*=\s*[\"']?([^>]*?)[ /;'\">]", re.IGNORECASE)


def _strip_byte_order_mark(data: bytes) -> tuple[bytes, str | None]:
    """``data`` without its byte-order mark, and the encoding the mark implies (None: no mark)."""
    for mark, encoding in _BOMS:
        if data.startswith(mark):
            if len(mark) == 2 and (len(data) < 4 or data[2:4] == b"\x00\x00"):
                continue  # UTF-16 only when not the start of a UTF-32 mark (and at least 4 bytes)
            return data[len(mark) :], encoding
    return data, None


def _declared_encoding(data: bytes) -> str | None:
    """The encoding an XML declaration (first 1 KiB) or a ``<meta charset>`` (first 2 KiB or 5 %) names."""
    found = _XML_ENCODING.search(data, endpos=1024) or _HTML_CHARSET.search(
        data, endpos=max(2048, int(len(data) * 0.05))
    )
    declared = found.group(1) if found is not None else b""
    return declared.decode("ascii", "replace").lower() if declared else None


def _usable_encoding(declared: str | None) -> str | None:
    """A declared charset Python knows; UTF-16/32 declared without a BOM is ignored (as browsers do)."""
    if not declared:
        return None
    try:
        name = codecs.lookup(declared).name
    except LookupError:
        return None
    return None if name.startswith(("utf-16", "utf-32")) else name


def _add_field(fields: dict[str, Any], key: str, content: str) -> None:
    """A repeated name gives a list of its values, in document order."""
    if key not in fields:
        fields[key] = content
    elif isinstance(fields[key], list):
        fields[key].append(content)
    else:
        fields[key] = [fields[key], content]


def _metadata(tree: Element) -> dict[str, Any]:
    """Every ``<meta name content>`` (names lower-cased; a repeated name gives a list)."""
    fields: dict[str, Any] = {}
    for meta in tree.iter("meta"):
        name, content = meta.get("name"), meta.get("content")
        if name is None or content is None or not name.strip():
            continue
        _add_field(fields, name.strip().lower(), content)
    if "title" not in fields:
        # every <title> of the page outside SVG/MathML (whose <title> is an image's tooltip): two are the
        # title given twice, never the first picked silently
        for title in tree.iter("title"):
            if any(parent.tag in ("svg", "math") for parent in title.iterancestors()):
                continue
            value = collapse_spaces("".join(str(part) for part in title.itertext()))
            if value:
                _add_field(fields, "title", value)
    return fields
