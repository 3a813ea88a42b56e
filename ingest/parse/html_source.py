"""HTML source: bytes decoded by their declared or sniffed encoding, and the lxml tree (deep nesting
refused)."""

from __future__ import annotations

import codecs
import re
from typing import NoReturn

import lxml.etree
import webencodings
from bs4.dammit import EncodingDetector

from ingest.model import UnreadableFile
from ingest.parse._common import normalise_newlines, strip_controls

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


def _page_body(tree: Element) -> Element:
    """The page's body with what follows it moved in, as a browser's parser builds it (the HTML Standard's
    "after body" and "after after body" modes read text and elements there into the body): libxml2 leaves
    what follows ``</body>`` beside the body and puts what follows ``</html>`` in further root elements,
    where nothing would be read. The whole ``<html>`` element when there is no body."""
    body = tree.find("body")
    if body is None:
        body = tree
    else:
        _append_text(body, body.tail)
        body.tail = None
        for sibling in list(body.itersiblings()):
            body.append(sibling)  # its tail comes along
    for root in list(tree.itersiblings()):
        if root.tag == "html":  # libxml2's wrapper of what followed </html>: its content, not itself
            _append_text(body, root.text)
            for child in list(root):
                body.append(child)
    return body


def _append_text(parent: Element, text: str | None) -> None:
    if not text:
        return
    if len(parent):
        parent[-1].tail = (parent[-1].tail or "") + text
    else:
        parent.text = (parent.text or "") + text


# Control characters dropped from the text (all but tab and line ends), as bytes: in UTF-8 they
# are bytes of their own, never part of another character's bytes.
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x1C), 0x7F])
_SEPARATORS_AS_SPACES = bytes.maketrans(b"\x0b\x0c\x1c\x1d\x1e\x1f", b"      ")  # as strip_controls
# C1 controls but NEL (white space, as in strip_controls) in UTF-8: C2 is a lead byte, never a continuation
_C1_BYTES = re.compile(rb"\xc2[\x80-\x84\x86-\x9f]")
# Numeric character references to a control (libxml2 gives the control itself; 0x80-0x9F it maps as the
# HTML Standard says, to windows-1252's characters, but for the five that have none)
_CONTROL_REFERENCE = re.compile(
    rb"&#(?:[xX]0*(?P<hex>[0-8bBcCdDeEfF]|1[0-9a-fA-F]|7[fF]|[89][0-9a-fA-F])(?![0-9a-fA-F])"
    rb"|0*(?P<dec>[0-8]|1[1-9]|2[0-9]|3[01]|12[7-9]|1[3-5][0-9])(?![0-9]));?"
)
_SEPARATOR_CODES = {0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F}  # a space, as the raw characters are


def _control_reference(match: re.Match[bytes]) -> bytes:
    hex_digits = match.group("hex")
    code = int(hex_digits, 16) if hex_digits else int(match.group("dec"))
    if code in _SEPARATOR_CODES:
        return b" "
    if code >= 0x80:
        try:
            bytes([code]).decode("cp1252")
        except UnicodeDecodeError:
            return b""  # 0x81, 0x8D, 0x8F, 0x90, 0x9D: a C1 control to browsers too
        return match.group()
    return b""


def _without_controls(data: bytes) -> bytes:
    """UTF-8 ``data`` without C1 controls (but NEL) and references to controls (separators as spaces)."""
    if b"\xc2" in data:
        data = _C1_BYTES.sub(b"", data)
    return _CONTROL_REFERENCE.sub(_control_reference, data) if b"&#" in data else data


def _decode(data: bytes) -> bytes:
    """The document as UTF-8 for lxml: its BOM or declared charset, else UTF-8 (strictly); line
    ends as ``\\n`` and control characters dropped (the text of ``_common.strip_controls``).

    A charset is decoded as browsers decode it, by the WHATWG Encoding Standard's encoding of its label
    (webencodings): ``iso-8859-1``, ``latin1`` and ``ascii`` are windows-1252, 0x93 a quotation mark.
    UTF-8 input is checked, not decoded: its bytes are cleaned as they are, so they never go
    through a Python string and back.
    """
    text_data, encoding = _byte_order_mark(data)
    declared = None
    if encoding is None:
        if b"\x00" in data:
            raise UnreadableFile("binary file")
        declared = EncodingDetector.find_declared_encoding(data, is_html=True)
        encoding = _usable_encoding(declared)
    if encoding is not None and encoding.name != "utf-8":
        try:  # strictly: bytes the charset cannot read (utf-7 garbage) would index U+FFFD
            text = encoding.codec_info.decode(text_data)[0]
        except UnicodeDecodeError as exc:
            raise UnreadableFile(
                f"not {encoding.name} text ({_charset_named(declared, encoding)}): {exc.reason} at byte {exc.start}"
            ) from None
        if "\x00" in text:
            raise UnreadableFile("binary file")
        return _without_controls(strip_controls(normalise_newlines(text)).encode("utf-8"))
    if not text_data.isascii():
        try:
            text_data.decode("utf-8")
        except UnicodeDecodeError:
            raise UnreadableFile("not UTF-8 text" + ("" if encoding else _why_no_charset(data, declared))) from None
    if b"\x00" in text_data:
        raise UnreadableFile("binary file")
    if b"\r" in text_data:
        text_data = text_data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return _without_controls(text_data.translate(_SEPARATORS_AS_SPACES, _CONTROL_BYTES))


def _byte_order_mark(data: bytes) -> tuple[bytes, webencodings.Encoding | None]:
    """The bytes after a byte order mark, and the encoding it gives (None without one). A UTF-32 mark is
    refused: browsers read none (the WHATWG Encoding Standard has no UTF-32: ``FF FE 00 00`` is UTF-16LE
    to them, the text a run of NULs)."""
    text_data, name = EncodingDetector.strip_byte_order_mark(data)
    if not name:
        return data, None
    encoding = webencodings.lookup(name)
    if encoding is None:
        raise UnreadableFile(
            f"a byte order mark of {name}, an encoding browsers do not read a page by (the WHATWG Encoding "
            "Standard has none; nothing was guessed): save the page as UTF-8"
        )
    return text_data, encoding


def _charset_named(declared: str | None, encoding: webencodings.Encoding) -> str:
    if declared is None:
        return "its byte order mark"
    if webencodings.ascii_lower(declared.strip()) == encoding.name:
        return "its declared charset"
    return f"its declared charset {declared!r}, which browsers read as {encoding.name}"


def _why_no_charset(data: bytes, declared: str | None) -> str:
    """Why no charset was used to read a page that is not UTF-8: none declared, one declared too late
    (after the bytes where a declaration is looked for), or one that cannot be used."""
    if declared:
        if _wide(declared):
            return f", and its declared charset {declared!r} is ignored without a byte order mark (as browsers do)"
        return f", and its declared charset {declared!r} is not one that can be read"
    late = EncodingDetector.find_declared_encoding(data, is_html=True, search_entire_document=True)
    if late:
        return f", and its charset declaration ({late!r}) comes too late to be read: declare it in the first 1024 bytes"
    return " and no charset declared"


def _wide(declared: str) -> bool:
    """A UTF-16 or UTF-32 label (WHATWG's or Python's): ignored in a page without a byte order mark."""
    whatwg = webencodings.lookup(declared)
    if whatwg is not None:
        return whatwg.name in ("utf-16le", "utf-16be")
    try:
        return codecs.lookup(declared).name.startswith(("utf-16", "utf-32"))
    except LookupError:
        return False


def _usable_encoding(declared: str | None) -> webencodings.Encoding | None:
    """The encoding browsers read a page by that declares ``declared`` (the WHATWG Encoding Standard's, from
    webencodings: ``latin1`` is windows-1252; ``x-user-defined`` in a ``<meta>`` is windows-1252, as the HTML
    Standard says); UTF-16/32 declared without a BOM is ignored (as browsers do). A label Python reads by
    that is not one of the WHATWG Encoding Standard's (``cp037``, ``utf-7``), or is one of its "replacement"
    labels, is refused: a browser reads that page otherwise than the label says. One neither knows is
    ignored by both (the page is read as UTF-8, strictly)."""
    if not declared:
        return None
    whatwg = webencodings.lookup(declared)
    if whatwg is None:
        try:
            codecs.lookup(declared)
        except LookupError:
            return None
        if _wide(declared):  # utf-32: no WHATWG label, ignored by browsers
            return None
        _refuse_unread_label(declared, None)
    if whatwg.name == "replacement":
        _refuse_unread_label(declared, whatwg)
    if whatwg.name in ("utf-16le", "utf-16be"):
        return None
    return webencodings.lookup("windows-1252") if whatwg.name == "x-user-defined" else whatwg


def _refuse_unread_label(declared: str, whatwg: webencodings.Encoding | None) -> NoReturn:
    what = "an encoding label of" if whatwg is None else "decoded (it is a 'replacement' label) by"
    raise UnreadableFile(
        f"declared charset {declared!r} is not {what} the WHATWG Encoding Standard, so browsers do not read "
        "the page by it (nothing was guessed): declare a charset browsers read, such as utf-8"
    )
