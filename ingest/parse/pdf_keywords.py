"""PDF fields given as ``key=value;`` keywords: in the document information's /Keywords, and in the
XMP packet's ``pdf:Keywords`` and ``dc:subject`` (where producers copy /Keywords, and where a viewer
shows keywords). Every source is read the same way, and two that disagree on a field refuse the file.

A field named in a form not read (``access: staff``, ``manual, access=staff``), in any of them or in
/Subject (or its XMP copy ``dc:description``), from which no field is read, refuses the file too:
dropping it as an ordinary word would index the document with the inventory's access or without its
dates.
"""

from __future__ import annotations

import codecs
import html
import re
import unicodedata
from collections.abc import Callable, Collection, Iterator
from typing import Any

from pypdf import PdfReader
from pypdf.generic import StreamObject
from pypdf.xmp import DC_NAMESPACE, PDF_NAMESPACE, RDF_NAMESPACE

from ingest.field_names import field_name, guarded_lookalike, named_field
from ingest.model import UnreadableFile
from ingest.settings import DEFAULT_LABELS

_KEYWORD_FIELD = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*=\s*([^;]*)")
_NAMED_IN_KEYWORDS = re.compile(r"[\"']?([^\W\d][\w-]*)[\"']?\s*[:=]")
# a name before its sign in one comma- or line-separated piece of an item: "acc ess=staff", "x, access: staff"
_NAME_BEFORE_SIGN = re.compile(r"(?:^|[,\n])\s*[\"']?([^,\n:=]*?)[\"']?\s*[:=]")
# a piece of an item that is a word and one more token: "access staff", "effective_to 2020-01-01"
_WORD_THEN_VALUE = re.compile(r"(?:^|[,\n])\s*([^\W\d][\w-]*)\s+([^\s,;]+)\s*(?=$|[,\n])")
# the tokens that make such a piece read as a field's value rather than a phrase: "access control",
# "status report" and "version control" are ordinary keywords, "access staff" and "version 2" are not
# (an access label: one of ``words``, see access_words)
_VALUE_SHAPED: dict[str, Callable[[str, frozenset[str]], bool]] = {
    "access": lambda token, words: token.casefold() in words,
    "status": lambda token, words: token.casefold() in {"current", "superseded"},
    "superseded_by": lambda token, words: "@" in token,
    "version": lambda token, words: any(c.isdigit() for c in token),
    "effective_from": lambda token, words: token[:1].isdigit(),
    "effective_to": lambda token, words: token[:1].isdigit(),
    "doc_id": lambda token, words: True,
}
# what does not show in a name (format such as U+200B/U+2060/U+00AD, combining, control, private-use,
# unassigned; line ends and tabs kept), as in front-matter keys; removed before a name is compared with the fields
_UNSEEN = frozenset({"Cf", "Cc", "Co", "Cn", "Mn", "Me"})

INFO_KEYWORDS = "/Keywords"


def access_words(labels: Collection[str] = ()) -> frozenset[str]:
    """The words that read as an access label after ``access`` without a sign (``access staff``): the
    default labels and the corpus's configured ``labels`` (``access internal``), case-folded."""
    return frozenset(label.casefold() for label in (*DEFAULT_LABELS, *labels))


def read_keyword_fields(fields: dict[str, Any], reader: PdfReader, labels: Collection[str] = ()) -> None:
    """Adds the ``key=value`` fields of every keyword source to ``fields`` (the information entries);
    refuses the file (UnreadableFile) where two sources disagree or a field is named in a form not read
    (``labels``: the corpus's access labels, which ``access LABEL`` names without a sign)."""
    words = access_words(labels)
    keywords = fields.get("keywords")
    if isinstance(keywords, list) and any("=" in str(value) for value in keywords):
        # fields given as key=value in two /Keywords: never pick one set of them
        raise UnreadableFile("PDF metadata gives /Keywords 2 times, with key=value fields")
    sources = [(INFO_KEYWORDS, keywords)] if isinstance(keywords, str) else []
    subject = fields.get("subject")
    # (/Subject given twice with different values: each is read, as a reader may show either)
    described = [
        ("/Subject", text) for text in (subject if isinstance(subject, list) else [subject]) if isinstance(text, str)
    ]
    for where, text in _xmp_texts(reader, words):
        if where.endswith("dc:description"):
            described.append((where, text))
        elif not (isinstance(keywords, str) and _words(text) == _words(keywords)):
            # (a copy of /Keywords says nothing more: Acrobat splits "tags=a, b" into items "tags=a" and "b")
            sources.append((where, text))
    read_from: dict[str, str] = {}  # name (as written, lower-cased) -> the keyword source it was read from
    for where, text in sources:
        for part in text.split(";"):
            match = _KEYWORD_FIELD.fullmatch(part) if "=" in part else None
            if match and match.group(2).strip():
                _read_pair(fields, match.group(1).lower(), match.group(2).strip(), where, read_from)
            else:  # an item not read as a field must not name one
                _refuse_named_field(part, where, words, keywords=True)
    for where, text in described:
        _refuse_named_field(text, where, words)


def _words(text: str) -> list[str]:
    return [word for word in (part.strip() for part in re.split(r"[;,\n]", text)) if word]


def _read_pair(fields: dict[str, Any], name: str, value: str, where: str, read_from: dict[str, str]) -> None:
    given = fields.get(name)
    if given not in (None, "") and str(given).strip() != value:
        # Two values for one field in one file: never pick one silently.
        before = read_from.get(name, "the document information")
        raise UnreadableFile(
            f"PDF metadata gives {name} twice: {str(given).strip()!r} in {before} and {value!r} in {where}"
        )
    fields[name] = value
    read_from.setdefault(name, where)


def _refuse_named_field(text: str, where: str, words: frozenset[str], keywords: bool = False) -> None:
    """Text not read as a field that names one (``access: staff``, ``foo, access=staff``, a full-width
    sign, one per line, ``access\u200b=staff``, ``acc ess=staff``; in a keyword item also ``access staff``;
    in /Subject any form) is refused, never dropped as an ordinary word."""
    from ingest.metadata import KNOWN_FIELDS, show

    named = _named_field(text, words, keywords)
    if named is not None:
        name = named_field(named, KNOWN_FIELDS) or guarded_lookalike(named, KNOWN_FIELDS)
        how = (
            f"no field is read from it: write {name}=value; in /Keywords (nothing was guessed)"
            if where == "/Subject" or where.endswith("dc:description")
            else f"write {name}=value; (key=value pairs separated by ';'; nothing was guessed)"
        )
        raise UnreadableFile(f"PDF metadata: {where} names {named!r} in a form not read ({show(text.strip())}): {how}")


def _named_field(text: str, words: frozenset[str], keywords: bool) -> str | None:
    """The name (as written, less what does not show) of a field that ``text`` names: a word just before
    ``:`` or ``=``, or a piece before one that is or nearly is a field once unseen characters are
    removed (the front-matter rule); in a keyword item also a field's name followed by a value (for
    access, one of the label ``words``), or a one-word name before a sign whose words read as a field that
    decides who reads and when (``access_level: staff``, ``doc-status=superseded``: the metadata check's
    rule for unknown fields; in /Subject, prose, only the fields themselves)."""
    from ingest.metadata import KNOWN_FIELDS

    seen = "".join(
        c for c in unicodedata.normalize("NFKC", text) if c in "\n\t" or unicodedata.category(c) not in _UNSEEN
    )
    for match in _NAMED_IN_KEYWORDS.finditer(seen):
        if field_name(match.group(1)) in KNOWN_FIELDS or (keywords and guarded_lookalike(match.group(1), KNOWN_FIELDS)):
            return match.group(1)
    for match in _NAME_BEFORE_SIGN.finditer(seen):
        if match.group(1).strip() and named_field(match.group(1).strip(), KNOWN_FIELDS):
            return match.group(1).strip()
    for match in _WORD_THEN_VALUE.finditer(seen) if keywords else ():
        shaped = _VALUE_SHAPED.get(field_name(match.group(1)))
        if shaped is not None and shaped(match.group(2), words):
            return match.group(1)
    return None


def _xmp_texts(reader: PdfReader, words: frozenset[str]) -> Iterator[tuple[str, str]]:
    """(where, text) of every ``pdf:Keywords`` (attribute or element), ``dc:subject`` (its items joined
    by ';') and ``dc:description`` item of the XMP packet, in every rdf:Description whatever its
    ``rdf:about`` (pypdf's own getters look only at ``rdf:about=""``); none when there is no packet, or
    one pypdf cannot parse that names no field (``_refuse_unread_packet``)."""
    try:
        xmp = reader.xmp_metadata
        descriptions = [] if xmp is None else list(xmp.rdf_root.getElementsByTagNameNS(RDF_NAMESPACE, "Description"))
    except Exception as exc:  # noqa: BLE001 - a packet pypdf cannot parse: refused only if its bytes name a field
        _refuse_unread_packet(reader, exc, words)
        return
    for description in descriptions:
        attribute = description.getAttributeNodeNS(PDF_NAMESPACE, "Keywords")
        if attribute is not None and attribute.value.strip():
            yield "the XMP pdf:Keywords", attribute.value
        for element in description.getElementsByTagNameNS(PDF_NAMESPACE, "Keywords"):
            yield "the XMP pdf:Keywords", _text(element)
        for element in description.getElementsByTagNameNS(DC_NAMESPACE, "subject"):
            items = element.getElementsByTagNameNS(RDF_NAMESPACE, "li")
            yield "the XMP dc:subject", "; ".join(_text(item) for item in items) if items else _text(element)
        for element in description.getElementsByTagNameNS(DC_NAMESPACE, "description"):
            items = element.getElementsByTagNameNS(RDF_NAMESPACE, "li")
            for item in items or [element]:
                yield "the XMP dc:description", _text(item)


def _text(element: Any) -> str:
    return "".join(child.data for child in element.childNodes if child.nodeType == child.TEXT_NODE)


def refuse_unread_title(reader: PdfReader, error: Exception, labels: Collection[str] = ()) -> None:
    """_refuse_unread_packet for a file with no other title than the XMP packet's."""
    _refuse_unread_packet(reader, error, access_words(labels), title=True)


def _refuse_unread_packet(reader: PdfReader, error: Exception, words: frozenset[str], title: bool = False) -> None:
    """Refuses the file (UnreadableFile) when the XMP packet, which pypdf cannot parse (``error``), names a
    field in its text or attribute values in any form a keyword item is refused for (``access=staff``,
    ``access: staff``, ``access staff``), or (``title``: the file has no other title) has a title element:
    reading the file without it would let the inventory or access.default fill what it says. A packet
    that names none (a producer's, dates, IDs, an XML declaration's ``version="1.0"``) is passed over,
    as is a stream pypdf cannot decode at all (no text of it can be read)."""
    text = _packet_text(reader)
    if not text:
        return
    named = _named_field(_packet_values(text), words, keywords=True)
    if named is None and not (title and _TITLE_ELEMENT.search(text)):
        return
    reason = " ".join(str(error).split())[:160] or type(error).__name__
    what = f"it names {named!r}" if named is not None else "it gives a dc:title (the file has no /Title)"
    raise UnreadableFile(
        f"PDF metadata: the XMP packet cannot be read ({reason}), and {what}: write the fields in the "
        "document information or /Keywords, or repair the packet (nothing was guessed)"
    )


def _packet_text(reader: PdfReader) -> str:
    """The XMP stream's decoded bytes as text (by its byte-order mark, else UTF-8); "" when it cannot be decoded."""
    try:
        stream = reader.root_object["/Metadata"].get_object()
        data = stream.get_data() if isinstance(stream, StreamObject) else b""
    except Exception:  # noqa: BLE001 - no stream, or a filter pypdf cannot undo
        return ""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return str(data[len(bom) :].decode(encoding, errors="replace"))
    return str(data.decode("utf-8", errors="replace"))


def _packet_values(text: str) -> str:
    """What the packet says, one piece a line: the text between its tags (CDATA sections opened) and the
    quoted values inside its tags (attributes, entity declarations), character references resolved;
    not the names of its elements and attributes, nor processing instructions (``<?xml version="1.0"?>``)."""
    text = _PROCESSING_INSTRUCTION.sub("\n", _CDATA.sub(lambda m: m.group(1).replace("<", "&lt;"), text))
    values: list[str] = []

    def kept_values(tag: re.Match[str]) -> str:
        values.extend(a or b for a, b in _QUOTED.findall(tag.group(0)))
        return "\n"

    between = _TAG.sub(kept_values, text)
    return html.unescape("\n".join([between, *values]))


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.DOTALL)
_PROCESSING_INSTRUCTION = re.compile(r"<\?.*?\?>", re.DOTALL)
_TAG = re.compile(r"<[^<>]*>")
_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'")
_TITLE_ELEMENT = re.compile(r"<(?:[\w.-]+:)?title[\s/>]", re.IGNORECASE)
