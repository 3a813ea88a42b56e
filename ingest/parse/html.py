"""HTML: ``<meta name>`` fields and ``<title>``, then the page's content as blocks.

Page furniture (script, style, nav, aside, noscript, template, header/footer outside an
article or main, hidden elements and navigation/banner/contentinfo landmarks) is dropped. h1–h6 are headings, p paragraphs, ul/ol one list block (one item a
line), table one block (one row a line, cells joined by `` | ``), pre code; loose text in
divs, sections and articles becomes paragraphs. Whitespace in a paragraph is collapsed.

The tree is built by lxml (libxml2's HTML parser, in C) and walked directly: a soup
would cost five times the parse for the same tree.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

from bs4.dammit import EncodingDetector
import lxml.etree

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
_HIDING_ATTRIBUTES = ("hidden", "aria-hidden", "role", "style")

Element = lxml.etree._Element


def parse_html(data: bytes) -> ParsedDocument:
    tree = _tree(_decode(data))
    if tree is None:
        raise UnreadableFile("no text")
    body = tree.find("body")
    drafts: list[Draft] = []
    walker = _Walker(drafts)
    walker.walk(tree if body is None else body, False)
    walker.flush()
    return assemble("html", drafts, _metadata(tree))


def read_html_metadata(data: bytes) -> dict[str, Any]:
    """Only the ``<meta>`` fields and ``<title>``: what a sync needs for a file it already holds."""
    tree = _tree(_decode(data), refuse_deep=False)  # the head lies near the root
    return {} if tree is None else _metadata(tree)


def _tree(text: str, refuse_deep: bool = True) -> Element | None:
    """The document's element tree (None when it holds no element at all).

    ``huge_tree`` lifts libxml2's depth limit of 256 to 2048; deeper nesting is refused
    rather than cut off, which libxml2 would otherwise do silently.
    """
    parser = lxml.etree.HTMLParser(encoding="utf-8", huge_tree=True, remove_pis=True)
    try:
        tree = lxml.etree.fromstring(text.encode("utf-8"), parser)
    except lxml.etree.ParserError:
        return None  # "Document is empty"
    for error in parser.error_log if refuse_deep else ():
        if error.type == lxml.etree.ErrorTypes.ERR_RESOURCE_LIMIT:
            raise UnreadableFile("nested too deeply to parse")
    return tree


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


def _metadata(tree: Element) -> dict[str, Any]:
    """Every ``<meta name content>`` (names lower-cased; a repeated name gives a list)."""
    fields: dict[str, Any] = {}
    for meta in tree.iter("meta"):
        name, content = meta.get("name"), meta.get("content")
        if name is None or content is None or not name.strip():
            continue
        _add_field(fields, name.strip().lower(), content)
    if "title" not in fields:
        title = next(tree.iter("title"), None)
        if title is not None:
            value = collapse_spaces("".join(title.itertext()))
            if value:
                fields["title"] = value
    return fields


# ---------------------------------------------------------------------------- blocks


def _name(node: Element) -> str:
    """The element's tag name, lower-case; "" for comments and processing instructions."""
    tag = node.tag
    return tag.lower() if isinstance(tag, str) else ""


class _Walker:
    """Blocks in document order; loose inline text is gathered into paragraphs."""

    def __init__(self, drafts: list[Draft]) -> None:
        self.drafts = drafts
        self.loose: list[str] = []

    def flush(self) -> None:
        if self.loose:
            text = collapse_spaces("".join(self.loose))
            self.loose.clear()
            if text:
                self.drafts.append(Draft("paragraph", text))

    def add(self, kind: str, text: str, level: int = 0) -> None:
        self.flush()
        self.drafts.append(Draft(kind, text, level=level))

    def walk(self, node: Element, in_article: bool) -> None:
        loose = self.loose
        if node.text:
            loose.append(node.text)
        for child in node:
            name = _name(child)
            if not name or name in DROPPED or (name in PAGE_CHROME and not in_article) or _hidden(child):
                pass
            elif name in HEADINGS:
                self.add("heading", _inline_text(child), HEADINGS[name])
            elif name == "p":
                self.add("paragraph", _inline_text(child))
            elif name == "ul" or name == "ol":
                self.add("list", "\n".join(_list_lines(child, 0)))
            elif name == "table":
                self.add("table", "\n".join(_table_rows(child)))
            elif name == "pre":
                self.add("code", _code_text(child))
            elif name in BLOCK_CONTAINERS:
                self.flush()
                self.walk(child, in_article or name in CONTENT_ROOTS)
                self.flush()
            elif name == "br":
                loose.append(" ")
            else:  # inline element: its text joins the loose run around it
                self.walk(child, in_article)
            if child.tail:
                loose.append(child.tail)


def _hidden(node: Element) -> bool:
    """Not shown to a reader (``hidden``, ``aria-hidden``, ``display:none``) or a landmark of page chrome."""
    attrib = node.attrib
    if not attrib:
        return False
    if "hidden" in attrib or attrib.get("aria-hidden", "").strip().lower() == "true":
        return True
    if attrib.get("role", "").strip().lower() in CHROME_ROLES:
        return True
    style = attrib.get("style")
    if not style:
        return False
    style = style.replace(" ", "").lower()
    return "display:none" in style or "visibility:hidden" in style


def _visible_strings(node: Element, out: list[str], excluded: frozenset[Element] = frozenset()) -> list[str]:
    """The node's text pieces appended to ``out``; block elements and <br> are set apart by spaces."""
    if node.text:
        out.append(node.text)
    for child in node:
        name = _name(child)
        if name and name not in DROPPED and child not in excluded and not _hidden(child):
            if name in BREAKING:
                out.append(" ")
                _visible_strings(child, out, excluded)
                out.append(" ")
            else:
                _visible_strings(child, out, excluded)
        if child.tail:
            out.append(child.tail)
    return out


def _inline_text(node: Element) -> str:
    return collapse_spaces("".join(_visible_strings(node, [])))


def _list_lines(node: Element, depth: int) -> list[str]:
    lines: list[str] = []
    ordered = _name(node) == "ol"
    number = _start_number(node)
    for item in node:
        if _name(item) != "li":
            continue
        nested = [sub for sub in item.iter("ul", "ol") if sub is not item and _nearest_list_item(sub) is item]
        text = collapse_spaces("".join(_visible_strings(item, [], frozenset(nested))))
        marker = f"{number}." if ordered else "-"
        number += 1
        if text:
            lines.append(f"{'  ' * depth}{marker} {text}")
        for sub in nested:
            lines.extend(_list_lines(sub, depth + 1))
    return lines


def _start_number(node: Element) -> int:
    start = node.get("start")
    if start is not None and re.fullmatch(r"\s*-?\d{1,6}\s*", start):
        return int(start)
    return 1


def _nearest_list_item(node: Element) -> Element | None:
    return next(node.iterancestors("li"), None)


def _table_rows(table: Element) -> list[str]:
    rows: list[str] = []
    for row in table.iter("tr"):
        if next(row.iterancestors("table"), None) is not table:
            continue  # a nested table's row
        cells = [_cell_text(cell) for cell in row if _name(cell) in ("td", "th")]
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


def _cell_text(cell: Element) -> str:
    return collapse_spaces("".join(_visible_strings(cell, [])))


def _code_text(node: Element) -> str:
    return "".join(_visible_strings(node, [])).rstrip().strip("\n")
