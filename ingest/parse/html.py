"""HTML: ``<meta name>`` fields and ``<title>``, then the page's main content as blocks.

Main content: the page's ``main`` (or ``[role=main]``), else its one ``article``, else
Sphinx's ``div.body`` / ``div.document``, else the whole body — unless that element holds
too little of the page's text to be the content. Furniture dropped wherever it is: script,
style, nav, noscript, template, forms, hidden elements, navigation/banner/search landmarks,
DocBook's navigation bars and per-page tables of contents (``div.navheader``,
``div.navfooter``, ``div.toc``), permalink marks (``a.headerlink``, a ``¶``/``#`` link to
the element itself), and outside the content: header, footer, aside and site footers.

Blocks: h1–h6 headings; p paragraphs; ul/ol one list block (one item a line, code and
tables inside an item keep their lines, indented under it); table one block (one row a
line, cells joined by `` | ``); pre code (line breaks kept); an admonition (``div.note``,
``div.warning``, ``div.admonition``, ``aside.admonition`` …) one ``note`` block of its lines,
title first, never a heading; each term of a definition list with its description one
``definition`` block (term lines, then the description's lines; a definition list nested
in the description ends it and gives its own blocks); a footnote one paragraph. Loose text
in divs, sections and articles becomes paragraphs. Whitespace in a paragraph is collapsed.

The tree is built by lxml (libxml2's HTML parser, in C) and walked directly: a soup
would cost five times the parse for the same tree.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

import lxml.etree
from bs4.dammit import EncodingDetector

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse._common import Draft, assemble, collapse_spaces, normalise_newlines, strip_controls

DROPPED = {
    "script",
    "style",
    "nav",
    "noscript",
    "template",
    "head",
    "iframe",
    "object",
    "svg",
    "button",
    "select",
    "form",
}
PAGE_CHROME = {"header", "footer", "aside"}  # dropped unless inside the content itself
CHROME_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search"}
CONTENT_ROOTS = {"article", "main"}
# Class names of furniture dropped wherever it is: DocBook's navigation bars and per-page
# tables of contents, permalink marks, breadcrumbs and skip links.
FURNITURE_CLASSES = {
    "navheader",
    "navfooter",
    "toc",
    "list-of-tables",
    "list-of-figures",
    "list-of-examples",
    "list-of-procedures",
    "headerlink",
    "breadcrumb",
    "breadcrumbs",
    "skip-link",
    "skiplink",
}
SITE_FOOTER_CLASSES = {"footer", "site-footer", "page-footer"}  # dropped unless inside the content
ADMONITION_CLASSES = {
    "admonition",
    "note",
    "warning",
    "tip",
    "caution",
    "important",
    "attention",
    "danger",
    "error",
    "hint",
    "seealso",
    "todo",
    "callout",
    "markdown-alert",
}
ADMONITION_ELEMENTS = {"div", "aside", "section", "blockquote"}
PERMALINK_MARKS = {"¶", "#", "§", "🔗", "⚓"}  # the whole text of a link to the element itself
MIN_CONTENT_SHARE = 0.25  # a content element with less of the page's text is not the content
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
BLOCK_CONTAINERS = {
    "html",
    "body",
    "div",
    "section",
    "article",
    "main",
    "blockquote",
    "figure",
    "figcaption",
    "dl",
    "dt",
    "dd",
    "li",
    "address",
    "details",
    "summary",
    "fieldset",
    "center",
    "caption",
    "header",
    "footer",
    "hgroup",
    "tbody",
    "thead",
    "tfoot",
    "tr",
    "td",
    "th",
    "hr",
}
BREAKING = BLOCK_CONTAINERS | set(HEADINGS) | {"p", "ul", "ol", "table", "pre", "br"}  # end a run of words
# Tags whose class names are looked at (furniture, site footers, admonitions): block-level
# elements and links. An inline span is never furniture by its class alone.
CLASS_CHECKED = BLOCK_CONTAINERS | ADMONITION_ELEMENTS | {"a", "p", "ul", "ol", "dl", "table", "aside"}
# Descendants that stop a subtree's text from being taken whole, as lxml serialises it.
_SPECIAL_INSIDE = tuple(DROPPED | BREAKING)
# Hiding attributes as written in a tag, at the attribute's name (the source lower-cased).
_HIDING_ATTRIBUTES = {
    "hidden": re.compile(r"hidden(?=[\s=/>])"),
    "aria-hidden": re.compile(r"""aria-hidden\s*=\s*["']?\s*true"""),
    "role": re.compile(r"""role\s*=\s*["']?\s*(?:navigation|banner|contentinfo|complementary|search)"""),
    "style": re.compile(r"""style\s*=\s*["'][^"'>]*(?:display\s*:\s*none|visibility\s*:\s*hidden)"""),
}
_TAG_NAME = re.compile(r"<([a-z][a-z0-9-]*)")

Element = lxml.etree._Element


_RESOURCE_LIMIT = getattr(lxml.etree.ErrorTypes, "ERR_RESOURCE_LIMIT", -1)


def _text_of(node: Element) -> str:
    """All text in a subtree (comments aside), as one string, joined in C."""
    return lxml.etree.tostring(node, method="text", encoding=str, with_tail=False)


def parse_html(data: bytes) -> ParsedDocument:
    source = _decode(data)
    tree = _tree(source)
    if tree is None:
        raise UnreadableFile("no text")
    body = tree.find("body")
    if body is None:
        body = tree
    hidden = _hidden_elements(source, body)
    page = _Page(body, hidden | _permalinks(body))
    root = _content_root(body, page)
    drafts = _Walker(page).blocks(body if root is None else root, root is not None)
    if not drafts:  # everything was furniture: keep the page rather than lose it
        drafts = _Walker(_Page(body, hidden), furniture=False).blocks(body, False)
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
        # libxml2 names the limit ERR_RESOURCE_LIMIT from 2.11 on (lxml >= 5.1); older ones only say so.
        if error.type == _RESOURCE_LIMIT or "excessive depth" in error.message.lower():
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
            value = collapse_spaces("".join(str(part) for part in title.itertext()))
            if value:
                fields["title"] = value
    return fields


# ---------------------------------------------------------------------------- blocks


def _name(node: Element) -> str:
    """The element's tag name ("" for comments); libxml2 gives HTML names in lower case."""
    tag = node.tag
    return tag if tag.__class__ is str else ""


def _classes(node: Element) -> set[str]:
    value = node.get("class")
    return set(value.lower().split()) if value else set()


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


def _hidden_elements(source: str, body: Element) -> set[Element]:
    """Every hidden element of the page (see :func:`_hidden`), found once.

    Looking at the attributes of every element costs more than building the tree, so
    only elements of the tag names that carry a hiding attribute somewhere in the source
    are looked at (all elements when a tag name cannot be read).
    """
    lowered = source.lower()
    tags: set[str] = set()
    for word, pattern in _HIDING_ATTRIBUTES.items():
        at = lowered.find(word)
        while at != -1:  # str.find runs in C; a regex over the whole source would not
            if at > 0 and lowered[at - 1].isspace() and pattern.match(lowered, at):
                opening = lowered.rfind("<", 0, at)
                if opening > lowered.rfind(">", 0, at):  # inside a tag, not running text
                    name = _TAG_NAME.match(lowered, opening)
                    if name is None:
                        return {node for node in body.iter() if _name(node) and _hidden(node)}
                    tags.add(name.group(1))
            at = lowered.find(word, at + len(word))
    return {node for node in body.iter(*tags) if _hidden(node)} if tags else set()


def _permalinks(body: Element) -> set[Element]:
    """Every permalink mark of the page (see :func:`_is_permalink`)."""
    return {node for node in body.iter("a") if _is_permalink(node)}


class _Page:
    """What is known of the whole page while its blocks are made, found once: the elements
    whose text is never shown (hidden elements and permalink marks), and those whose text
    can be taken whole as lxml serialises it (nothing inside is hidden, dropped or a block,
    which would need a look or a space)."""

    def __init__(self, body: Element, hidden: set[Element]) -> None:
        self.hidden = hidden
        self.mixed: set[Element] = set()  # elements with such a descendant
        for node in (*hidden, *body.iter(*_SPECIAL_INSIDE)):
            for ancestor in node.iterancestors():
                if ancestor in self.mixed:
                    break
                self.mixed.add(ancestor)

    def skipped(self, node: Element, name: str) -> bool:
        """Not part of a block's text: dropped, hidden, or a permalink mark."""
        return name in DROPPED or node in self.hidden

    def strings(self, node: Element, out: list[str], excluded: frozenset[Element] = frozenset()) -> None:
        """The node's text pieces appended to ``out``; block elements and <br> are set apart by spaces."""
        if node.text:
            out.append(node.text)
        for child in node:
            name = child.tag
            if name.__class__ is str and child not in excluded and not self.skipped(child, name):
                if name in BREAKING:
                    out.append(" ")
                    self.strings(child, out, excluded)
                    out.append(" ")
                elif len(child):
                    self.strings(child, out, excluded)
                elif child.text:
                    out.append(child.text)
            if child.tail:
                out.append(child.tail)

    def inline_text(self, node: Element) -> str:
        """The node's text, whitespace collapsed."""
        if node not in self.mixed:
            return collapse_spaces(_text_of(node))
        out: list[str] = []
        self.strings(node, out)
        return collapse_spaces("".join(out))

    def code_text(self, node: Element) -> str:
        """Preformatted text as written; <br> is a line break."""
        if node not in self.mixed:
            text = str(_text_of(node))
        else:
            out: list[str] = []
            self.code_strings(node, out)
            text = "".join(out)
        return text.rstrip().strip("\n")

    def code_strings(self, node: Element, out: list[str]) -> None:
        if node.text:
            out.append(node.text)
        for child in node:
            name = _name(child)
            if name == "br":
                out.append("\n")
            elif name and not self.skipped(child, name):
                self.code_strings(child, out)
            if child.tail:
                out.append(child.tail)

    def table_rows(self, table: Element) -> list[str]:
        rows: list[str] = []
        for row in table.iter("tr"):
            if next(row.iterancestors("table"), None) is not table:
                continue  # a nested table's row
            cells = [self.inline_text(cell) for cell in row if cell.tag == "td" or cell.tag == "th"]
            if any(cells):
                rows.append(" | ".join(cells))
        return rows

    def list_lines(self, node: Element, depth: int) -> list[str]:
        """One line per item (``- `` or ``N. ``), nested lists indented under their item; code
        and tables inside an item keep their lines, indented under it."""
        lines: list[str] = []
        ordered = node.tag == "ol"
        number = _start_number(node)
        indent, inner = "  " * depth, "  " * (depth + 1)
        stray: list[str] = [node.text or ""]  # text outside the items: a line of its own
        for item in node:
            name = _name(item)
            if name == "li":
                self.item_lines(item, f"{indent}{number}." if ordered else f"{indent}-", inner, stray, lines, depth)
                number += 1
            elif name and not self.skipped(item, name):
                stray.append(" ")
                self.strings(item, stray)
                stray.append(" ")
            stray.append(item.tail or "")
        self.stray_line(stray, indent, lines)
        while lines and not lines[-1]:
            lines.pop()
        return lines

    @staticmethod
    def stray_line(stray: list[str], indent: str, lines: list[str]) -> None:
        text = collapse_spaces("".join(stray))
        stray.clear()
        if text:
            lines.append(f"{indent}{text}")

    def item_lines(
        self, item: Element, marker: str, inner: str, stray: list[str], lines: list[str], depth: int
    ) -> None:
        """The lines of one list item (after any text before it that belongs to no item)."""
        self.stray_line(stray, "  " * depth, lines)
        if item not in self.mixed:
            text = collapse_spaces(_text_of(item))
            if text:
                lines.append(f"{marker} {text}")
            return
        nested = [
            sub
            for sub in item.iter("ul", "ol")
            if sub is not item and _nearest_list_item(sub) is item and self.shown_within(sub, item)
        ]
        first = True
        for kind, content in self.item_parts(item, frozenset(nested)):
            item_lines = [collapse_spaces("".join(content))] if kind == "text" else content
            for line in item_lines:
                if not line.strip():
                    if kind == "lines" and not first:
                        lines.append("")  # a blank line inside code
                    continue
                lines.append(f"{marker} {line}" if first else f"{inner}{line}")
                first = False
        for sub in nested:
            lines.extend(self.list_lines(sub, depth + 1))

    def shown_within(self, node: Element, container: Element) -> bool:
        """Neither the node nor an element between it and ``container`` is dropped or hidden."""
        for element in (node, *node.iterancestors()):
            if element is container:
                return True
            if self.skipped(element, _name(element)):
                return False
        return True

    def item_parts(self, item: Element, excluded: frozenset[Element]) -> list[tuple[str, list[str]]]:
        """A list item's content in order: runs of text, and the lines of code or tables in it."""
        parts: list[tuple[str, list[str]]] = []
        pieces: list[str] = []

        def visit(node: Element) -> None:
            nonlocal pieces
            if node.text:
                pieces.append(node.text)
            for child in node:
                name = _name(child)
                if name and child not in excluded and not self.skipped(child, name):
                    if name == "pre" or name == "table":
                        if pieces:
                            parts.append(("text", pieces))
                            pieces = []
                        lines = self.code_text(child).split("\n") if name == "pre" else self.table_rows(child)
                        parts.append(("lines", [line.rstrip() for line in lines]))
                    elif name in BREAKING:
                        pieces.append(" ")
                        visit(child)
                        pieces.append(" ")
                    else:
                        visit(child)
                if child.tail:
                    pieces.append(child.tail)

        visit(item)
        if pieces:
            parts.append(("text", pieces))
        return parts


def _content_root(body: Element, page: _Page) -> Element | None:
    """The element holding the page's main content, or None for the whole body.

    In order: ``main`` or ``[role=main]``; the only ``article``; Sphinx's ``div.body``,
    then ``div.document``. A candidate that is hidden, inside furniture, or holds less than
    a quarter of the body's text (a page whose ``main`` is a banner) is passed over.
    """
    found: list[list[Element]] = [[], [], [], []]
    for node in body.iter("main", "article", "div", "section"):
        name = node.tag
        if name == "main" or (node.get("role") or "").strip().lower() == "main":
            found[0].append(node)
        elif name == "article":
            found[1].append(node)
        elif name == "div":
            classes = _classes(node)
            if "body" in classes:
                found[2].append(node)
            elif "document" in classes:
                found[3].append(node)
    body_chars = 0
    for rank, nodes in enumerate(found):
        if not nodes or (rank == 1 and len(nodes) > 1):
            continue  # several articles: a listing, whose content is all of them
        node = nodes[0]
        if not _shown(node, body, page):
            continue
        body_chars = body_chars or _text_length(body)
        if _text_length(node) >= MIN_CONTENT_SHARE * body_chars:
            return node
    return None


def _shown(node: Element, body: Element, page: _Page) -> bool:
    """Neither the node nor an ancestor below ``body`` is hidden or dropped furniture."""
    for element in (node, *node.iterancestors()):
        if element is body:
            return True
        if _name(element) in DROPPED or element in page.hidden or _classes(element) & FURNITURE_CLASSES:
            return False
    return True


def _text_length(node: Element) -> int:
    """Characters of text in the element (script and style included: a rough measure)."""
    return len(_text_of(node))


class _Walker:
    """Blocks in document order; loose inline text is gathered into paragraphs.

    A note (admonition) or a definition (term and description) is *captured*: the blocks
    found inside it are made, then merged into one block of their lines. Inside a capture,
    admonitions and definition lists are merged like any other block, except that a
    definition list inside a definition's description ends the capture (the nested terms
    get blocks of their own, the rest of the description follows as ordinary blocks).
    """

    def __init__(self, page: _Page, furniture: bool = True) -> None:
        self.page = page
        self.furniture = furniture  # drop class-named furniture and keep asides only in content
        self.drafts: list[Draft] = []
        self.loose: list[str] = []
        self.capture: tuple[str, list[str], int] | None = None  # kind, leading lines, first draft

    def blocks(self, root: Element, in_content: bool) -> list[Draft]:
        self.walk(root, in_content)
        self.flush()
        return self.drafts

    def flush(self) -> None:
        if self.loose:
            text = collapse_spaces("".join(self.loose))
            self.loose.clear()
            if text:
                self.drafts.append(Draft("paragraph", text))

    def add(self, kind: str, text: str, level: int = 0) -> None:
        self.flush()
        self.drafts.append(Draft(kind, text, level=level))

    def begin(self, kind: str, lines: list[str]) -> tuple[str, list[str], int]:
        self.flush()
        self.capture = (kind, lines, len(self.drafts))
        return self.capture

    def end(self, capture: tuple[str, list[str], int]) -> None:
        """Merge the blocks made since ``capture`` began into one block (if it is still open)."""
        if self.capture is not capture:
            return
        self.flush()
        kind, lines, first = capture
        merged = "\n".join([*lines, *(draft.text for draft in self.drafts[first:] if draft.text.strip())])
        del self.drafts[first:]
        if merged.strip():
            self.drafts.append(Draft(kind, merged))
        self.capture = None

    def walk(self, node: Element, in_content: bool) -> None:
        if node.text:
            self.loose.append(node.text)
        for child in node:
            self.visit(child, in_content)
            if child.tail:
                self.loose.append(child.tail)

    def visit(self, child: Element, in_content: bool) -> None:
        """One element's blocks, or its share of the loose text (not its tail)."""
        page, loose = self.page, self.loose
        name = child.tag
        if (
            name.__class__ is not str
            or name in DROPPED
            or child in page.hidden
            or name in CLASS_CHECKED
            and self.furniture
            and self.is_furniture(child, name, in_content)
            or name in PAGE_CHROME
            and not in_content
        ):
            pass
        elif name in HEADINGS:
            self.add("heading", page.inline_text(child), HEADINGS[name])
        elif name == "p":
            self.add("paragraph", page.inline_text(child))
        elif name == "ul" or name == "ol":
            self.add("list", "\n".join(page.list_lines(child, 0)))
        elif name == "table":
            self.add("table", "\n".join(page.table_rows(child)))
        elif name == "pre":
            self.add("code", page.code_text(child))
        elif name == "dl":
            self.definitions(child, in_content)
        elif name in ADMONITION_ELEMENTS and _classes(child) & ADMONITION_CLASSES:
            if self.capture is None:
                capture = self.begin("note", [])
                self.walk(child, in_content)
                self.end(capture)
            else:
                self.flush()
                self.walk(child, in_content)
                self.flush()
        elif name == "aside" and "footnote" in _classes(child):
            self.add("paragraph", page.inline_text(child))
        elif name in BLOCK_CONTAINERS or name == "aside":
            self.flush()
            self.walk(child, in_content or name in CONTENT_ROOTS)
            self.flush()
        elif name == "br":
            loose.append(" ")
        elif not len(child):  # inline element holding text only: the commonest case
            if child.text:
                loose.append(child.text)
        else:  # inline element: its text joins the loose run around it
            self.walk(child, in_content)

    def is_furniture(self, node: Element, name: str, in_content: bool) -> bool:
        classes = _classes(node)
        if classes & FURNITURE_CLASSES:
            return True
        return not in_content and bool(classes & SITE_FOOTER_CLASSES)

    def definitions(self, dl: Element, in_content: bool) -> None:
        """Each group of terms and its description as one definition block."""
        if self.capture is not None:
            if self.capture[0] != "definition":  # inside a note: its lines, merged into the note
                self.flush()
                self.walk(dl, in_content)
                self.flush()
                return
            self.end(self.capture)  # a nested list ends the description it is nested in
        self.flush()
        terms: list[str] = []
        for child in _definition_items(dl, self.page):
            name = _name(child) if not isinstance(child, str) else ""
            if name == "dt" and not isinstance(child, str):
                term = self.page.inline_text(child)
                if term:
                    terms.append(term)
            elif name == "dd" and not isinstance(child, str):
                capture = self.begin("definition", terms)
                self.walk(child, in_content)
                self.end(capture)
                terms = []
            elif isinstance(child, str) and not child.strip():
                continue  # the white space between items
            else:  # text or an element outside dt and dd: ends the terms before it
                if terms:
                    self.add("definition", "\n".join(terms))
                    terms = []
                if isinstance(child, str):
                    self.loose.append(child)
                elif name:
                    self.visit(child, in_content)
                self.flush()
        if terms:
            self.add("definition", "\n".join(terms))


def _definition_items(dl: Element, page: _Page) -> list[Element | str]:
    """The dt and dd elements of a list in order, also those grouped in a ``div`` (as HTML
    allows), with the text between them (the tails, which are not theirs to keep)."""
    items: list[Element | str] = [dl.text or ""]
    for child in dl:
        if child.tag == "div" and child not in page.hidden and not _classes(child) & ADMONITION_CLASSES:
            items.append(child.text or "")
            for grouped in child:
                items.extend((grouped, grouped.tail or ""))
        else:
            items.append(child)
        items.append(child.tail or "")
    return items


def _is_permalink(node: Element) -> bool:
    """A link to the element it sits in, shown as a mark (Sphinx's ``¶``, many sites' ``#``)."""
    if "headerlink" in _classes(node):
        return True
    href = node.get("href")
    return href is not None and href.startswith("#") and _text_of(node).strip() in PERMALINK_MARKS


def _start_number(node: Element) -> int:
    start = node.get("start")
    if start is not None and re.fullmatch(r"\s*-?\d{1,6}\s*", start):
        return int(start)
    return 1


def _nearest_list_item(node: Element) -> Element | None:
    return next(node.iterancestors("li"), None)
