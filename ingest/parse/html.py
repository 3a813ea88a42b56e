"""HTML: ``<meta name>`` fields and ``<title>``, then the page's content as blocks.

Page furniture (script, style, nav, aside, noscript, template, header/footer outside an
article or main, hidden elements and navigation/banner/contentinfo landmarks) is dropped. h1–h6 are headings, p paragraphs, ul/ol one list block (one item a
line), table one block (one row a line, cells joined by `` | ``), pre code; loose text in
divs, sections and articles becomes paragraphs. Whitespace in a paragraph is collapsed.
"""

from __future__ import annotations

import codecs
import re
import warnings
from typing import Any, Iterator

from bs4 import BeautifulSoup, SoupStrainer, Comment, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning, Declaration, Doctype, NavigableString, ProcessingInstruction, Tag
from bs4.dammit import EncodingDetector
import lxml.etree
import lxml.html

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse._common import Draft, assemble, collapse_spaces, normalise_newlines, strip_controls

DROPPED = {"script", "style", "nav", "aside", "noscript", "template", "head", "iframe", "object", "svg", "button", "select", "form"}
PAGE_CHROME = {"header", "footer"}  # dropped unless inside the article itself
CHROME_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search"}
CONTENT_ROOTS = {"article", "main"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
BLOCK_CONTAINERS = {
    "html", "body", "div", "section", "article", "main", "blockquote", "figure", "figcaption",
    "dl", "dt", "dd", "li", "address", "details", "summary", "fieldset", "center", "caption",
    "header", "footer", "hgroup", "tbody", "thead", "tfoot", "tr", "td", "th", "hr",
}
BREAKING = BLOCK_CONTAINERS | set(HEADINGS) | {"p", "ul", "ol", "table", "pre", "br"}  # end a run of words
_SKIPPED_STRINGS = (Comment, Declaration, Doctype, ProcessingInstruction)


def parse_html(data: bytes) -> ParsedDocument:
    with warnings.catch_warnings():
        # bs4 warns about short inputs that look like URLs and about XHTML: both parse fine.
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(_decode(data), "lxml")
    metadata = _metadata(soup)
    body = soup.body or soup
    return assemble("html", _drafts(body), metadata)


def read_html_metadata(data: bytes) -> dict[str, Any]:
    """Only the ``<meta>`` fields and ``<title>``: what a sync needs for a file it already holds.

    lxml builds the tree in C, with no Python call per element, so this is several times
    faster than the soup; it finds the same fields (tests/test_parse_metadata_only.py).
    """
    text = _decode(data)
    try:
        tree = lxml.html.document_fromstring(text)
    except (ValueError, lxml.etree.ParserError):
        return _metadata_from_soup(text)
    fields: dict[str, Any] = {}
    for meta in tree.iter("meta"):
        name, content = meta.get("name"), meta.get("content")
        if name is None or content is None or not name.strip():
            continue
        _add_field(fields, name.strip().lower(), content)
    if "title" not in fields:
        title = tree.find(".//title")
        if title is not None:
            value = collapse_spaces(title.text_content())
            if value:
                fields["title"] = value
    return fields


def _metadata_from_soup(text: str) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(text, "lxml", parse_only=SoupStrainer(["meta", "title"]))
    return _metadata(soup)


# ---------------------------------------------------------------------------- decoding


def _decode(data: bytes) -> str:
    """The document as text: its BOM or declared charset, else UTF-8 (strictly)."""
    text_data, encoding = EncodingDetector.strip_byte_order_mark(data)
    if not encoding:
        if b"\x00" in data:
            raise UnreadableFile("binary file")
        encoding = _usable_encoding(EncodingDetector.find_declared_encoding(data, is_html=True))
    if encoding and encoding not in ("utf-8", "utf8"):
        text = text_data.decode(encoding, errors="replace")
    else:
        try:
            text = text_data.decode("utf-8")
        except UnicodeDecodeError:
            raise UnreadableFile("not UTF-8 text" + ("" if encoding else " and no charset declared")) from None
    if "\x00" in text:
        raise UnreadableFile("binary file")
    return strip_controls(normalise_newlines(text))


def _usable_encoding(declared: str | None) -> str | None:
    """A declared charset Python knows; UTF-16/32 declared without a BOM is ignored (as browsers do)."""
    if not declared:
        return None
    try:
        name = codecs.lookup(declared).name
    except LookupError:
        return None
    return None if name.startswith(("utf-16", "utf-32")) else name


# ---------------------------------------------------------------------------- metadata


def _add_field(fields: dict[str, Any], key: str, content: str) -> None:
    """A repeated name gives a list of its values, in document order."""
    if key not in fields:
        fields[key] = content
    elif isinstance(fields[key], list):
        fields[key].append(content)
    else:
        fields[key] = [fields[key], content]


def _metadata(soup: BeautifulSoup) -> dict[str, Any]:
    """Every ``<meta name content>`` (names lower-cased; a repeated name gives a list)."""
    fields: dict[str, Any] = {}
    for meta in soup.find_all("meta"):
        name, content = meta.get("name"), meta.get("content")
        if not isinstance(name, str) or not isinstance(content, str) or not name.strip():
            continue
        _add_field(fields, name.strip().lower(), content)
    if "title" not in fields and soup.title is not None:
        title = collapse_spaces(soup.title.get_text())
        if title:
            fields["title"] = title
    return fields


# ---------------------------------------------------------------------------- blocks


def _drafts(root: Tag) -> Iterator[Draft]:
    """Blocks in document order; loose inline text is gathered into paragraphs."""
    loose: list[str] = []

    def flush() -> Iterator[Draft]:
        text = collapse_spaces("".join(loose))
        loose.clear()
        if text:
            yield Draft("paragraph", text)

    def walk(node: Tag, in_article: bool) -> Iterator[Draft]:
        for child in node.children:
            if isinstance(child, NavigableString):
                if not isinstance(child, _SKIPPED_STRINGS):
                    loose.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name.lower() if child.name else ""
            if name in DROPPED or (name in PAGE_CHROME and not in_article) or _hidden(child):
                continue
            if name in HEADINGS:
                yield from flush()
                yield Draft("heading", _inline_text(child), level=HEADINGS[name])
            elif name == "p":
                yield from flush()
                yield Draft("paragraph", _inline_text(child))
            elif name in ("ul", "ol"):
                yield from flush()
                yield Draft("list", "\n".join(_list_lines(child, 0)))
            elif name == "table":
                yield from flush()
                yield Draft("table", "\n".join(_table_rows(child)))
            elif name == "pre":
                yield from flush()
                yield Draft("code", _code_text(child))
            elif name in BLOCK_CONTAINERS:
                yield from flush()
                yield from walk(child, in_article or name in CONTENT_ROOTS)
                yield from flush()
            elif name == "br":
                loose.append(" ")
            else:  # inline element: its text joins the loose run around it
                yield from walk(child, in_article)

    yield from walk(root, False)
    yield from flush()


def _hidden(node: Tag) -> bool:
    """Not shown to a reader (``hidden``, ``aria-hidden``, ``display:none``) or a landmark of page chrome."""
    if node.has_attr("hidden") or str(node.get("aria-hidden", "")).strip().lower() == "true":
        return True
    if str(node.get("role", "")).strip().lower() in CHROME_ROLES:
        return True
    style = str(node.get("style", "")).replace(" ", "").lower()
    return "display:none" in style or "visibility:hidden" in style


def _visible_strings(node: Tag, excluded: tuple[Tag, ...] = ()) -> Iterator[str]:
    """The node's text pieces; block elements and <br> are set apart by spaces."""
    for child in node.children:
        if isinstance(child, NavigableString):
            if not isinstance(child, _SKIPPED_STRINGS):
                yield str(child)
        elif isinstance(child, Tag) and not any(child is other for other in excluded):
            name = (child.name or "").lower()
            if name in DROPPED or _hidden(child):
                continue
            breaking = name in BREAKING
            if breaking:
                yield " "
            yield from _visible_strings(child, excluded)
            if breaking:
                yield " "


def _inline_text(node: Tag) -> str:
    return collapse_spaces("".join(_visible_strings(node)))


def _list_lines(node: Tag, depth: int) -> Iterator[str]:
    ordered = (node.name or "").lower() == "ol"
    number = _start_number(node)
    for item in node.find_all("li", recursive=False):
        nested = [child for child in item.find_all(("ul", "ol")) if _nearest_list_item(child) is item]
        text = collapse_spaces("".join(_visible_strings(item, tuple(nested))))
        marker = f"{number}." if ordered else "-"
        number += 1
        if text:
            yield f"{'  ' * depth}{marker} {text}"
        for sub in nested:
            yield from _list_lines(sub, depth + 1)


def _start_number(node: Tag) -> int:
    start = node.get("start")
    if isinstance(start, str) and re.fullmatch(r"\s*-?\d{1,6}\s*", start):
        return int(start)
    return 1


def _nearest_list_item(node: Tag) -> Tag | None:
    return node.find_parent("li")


def _table_rows(table: Tag) -> Iterator[str]:
    for row in table.find_all("tr"):
        if row.find_parent("table") is not table:
            continue  # a nested table's row
        cells = [_cell_text(cell) for cell in row.find_all(("td", "th"), recursive=False)]
        if any(cells):
            yield " | ".join(cells)


def _cell_text(cell: Tag) -> str:
    return collapse_spaces("".join(_visible_strings(cell)))


def _code_text(node: Tag) -> str:
    return "".join(_visible_strings(node)).rstrip().strip("\n")
