"""HTML furniture and main-content rules: which elements are dropped (scripts, navigation,
hidden ones are found by html_hidden, permalinks, site chrome) and which element of the page is its
content."""

from __future__ import annotations

import functools
import itertools
import re

from ingest.parse._common import collapse_spaces
from ingest.parse.html_source import Element, _text_of

DROPPED = {
    "script",
    "style",
    "nav",
    "noscript",
    "template",
    "head",
    "iframe",
    "object",
    "button",
    "select",
    "datalist",
    "search",  # the <search> landmark: a site's search box
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
    "comment-respond",  # WordPress's comment form ("Leave a Reply", "Name *", "Email *")
    "comment-form",
}


FURNITURE_IDS = {"respond", "commentform"}  # WordPress's comment form, in themes that give it no class


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
    "form",  # a form's text is the page's (a page wrapped in one, a fieldset of explanations)
    "fieldset",
    "legend",
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


# Parts of an inline SVG drawing whose text is never drawn (a tooltip, a description, metadata); its
# ``<text>`` labels are drawn, each set apart from the next (SVG_LABELS). Style and script are DROPPED.
SVG_UNDRAWN = ("title", "desc", "metadata")
SVG_LABELS = {"text"}


# Form controls are drawn as boxes between the words around them: a text box (its text, a <textarea>'s
# content, is words of its own), and the controls DROPPED, whose place still sets the words around apart.
CONTROLS = {"input", "textarea", "select", "button"}
# An edit's removed and inserted text (<del>24</del><ins>36</ins>, a struck-out old price): both kept, as
# the page shows both (a strike-through is as often a style or a sale as a retraction), never glued into
# one new word ("2436").
EDITS = {"del", "ins", "s", "strike"}
WORDS_APART = SVG_LABELS | CONTROLS | EDITS
SPACERS = CONTROLS | {"br"}  # a space before them, whether their text is read or not


# Tags whose class names are looked at (furniture, site footers, admonitions): block-level
# elements and links. An inline span is never furniture by its class alone.
CLASS_CHECKED = BLOCK_CONTAINERS | ADMONITION_ELEMENTS | {"a", "p", "ul", "ol", "dl", "table", "aside"}


# Descendants that stop a subtree's text from being taken whole, as lxml serialises it.
_SPECIAL_INSIDE = tuple(DROPPED | BREAKING | WORDS_APART)


# NEL, U+2028 and U+2029: white space to str.split, which collapses every other block's text, and spaces in
# preformatted text too, as the C0 separators are from the decoding on (html_source._decode): HTML breaks a
# line at \n and <br> alone, and a chunk never holds a line break that str.splitlines reads and "\n" not.
_UNICODE_SEPARATORS = re.compile("[\x85\u2028\u2029]")


def _name(node: Element) -> str:
    """The element's tag name ("" for comments); libxml2 gives HTML names in lower case."""
    tag = node.tag
    return tag if tag.__class__ is str else ""


_NO_CLASSES: frozenset[str] = frozenset()


def _classes(node: Element) -> frozenset[str]:
    value = node.get("class")
    return _class_set(value) if value else _NO_CLASSES


@functools.lru_cache(maxsize=4096)
def _class_set(value: str) -> frozenset[str]:
    """The class names of a ``class`` attribute, lower-cased (a page repeats a few values thousands of times)."""
    return frozenset(value.lower().split())


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
        # elements with such a descendant: the parents of those, then their ancestors (most are parents too)
        nodes = itertools.chain(hidden, body.iter(*_SPECIAL_INSIDE))
        mixed = {parent for node in nodes if (parent := node.getparent()) is not None}
        for parent in list(mixed):
            ancestor = parent.getparent()
            while ancestor is not None and ancestor not in mixed:  # up to the first one already known
                mixed.add(ancestor)
                ancestor = ancestor.getparent()
        self.mixed = mixed

    def skipped(self, node: Element, name: str) -> bool:
        """Not part of a block's text: dropped, hidden, or a permalink mark."""
        return name in DROPPED or node in self.hidden

    def strings(self, node: Element, out: list[str], excluded: frozenset[Element] = frozenset()) -> None:
        """The node's text pieces appended to ``out``; block elements and <br> are set apart by spaces."""
        if node.text:
            out.append(node.text)
        hidden = self.hidden
        for child in node:
            name = child.tag
            if name.__class__ is not str or child in excluded:
                pass
            elif name in DROPPED or child in hidden:  # (self.skipped, inline: the hottest loop of a page)
                if name in CONTROLS:
                    out.append(" ")  # a control dropped: drawn between the words around it all the same
            elif name in BREAKING or name in WORDS_APART:
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
        if _UNICODE_SEPARATORS.search(text):
            text = _UNICODE_SEPARATORS.sub(" ", text)
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
        """One line per row (cells joined by `` | ``), the table's caption a line of its own where it is."""
        rows: list[str] = []
        spanning: dict[int, _Cell] = {}  # by column: the cells of rows above spanning into the next
        group = None
        for row in table.iter("tr", "caption"):
            if next(row.iterancestors("table"), None) is not table:
                continue  # a nested table's row or caption: in the text of the cell holding it
            if not self.shown_within(row, table):
                continue  # hidden, or in a hidden row group
            if row.tag == "caption":
                rows.append(self.inline_text(row))
                continue
            if row.getparent() is not group:  # a rowspan ends with its row group (thead, tbody, tfoot)
                group, spanning = row.getparent(), {}
            cells = [
                (
                    self.inline_text(cell),
                    1 if cell.get("rowspan") is None else _span(cell, "rowspan", 65534),
                    1 if cell.get("colspan") is None else _span(cell, "colspan", 1000),
                )
                for cell in row
                if (cell.tag == "td" or cell.tag == "th") and cell not in self.hidden
            ]
            texts = _row_texts(cells, spanning) if spanning or any(span[1] != 1 for span in cells) else cells
            if any(text for text, _, _ in texts):
                rows.append(" | ".join(text for text, _, _ in texts))
        return [row for row in rows if row]

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
        for element in itertools.chain((node,), node.iterancestors()):  # (lazily: only up to the container)
            if element is container:
                return True
            if self.skipped(element, _name(element)):
                return False
        return True

    def item_parts(self, item: Element, excluded: frozenset[Element]) -> list[tuple[str, list[str]]]:
        """A list item's content in order: runs of text, and the lines of code or tables in it."""
        parts: list[tuple[str, list[str]]] = []
        run: list[list[str]] = [[]]  # the run of text being gathered (a method, not a recursive closure:
        # that would be a reference cycle keeping the page's whole tree alive until the cycle collector runs)
        self.item_visit(item, excluded, parts, run)
        if run[0]:
            parts.append(("text", run[0]))
        return parts

    def item_visit(
        self, node: Element, excluded: frozenset[Element], parts: list[tuple[str, list[str]]], run: list[list[str]]
    ) -> None:
        pieces = run[0]
        if node.text:
            pieces.append(node.text)
        for child in node:
            name = _name(child)
            if name and child not in excluded and not self.skipped(child, name):
                if name == "pre" or name == "table":
                    if pieces:
                        parts.append(("text", pieces))
                        pieces = run[0] = []
                    lines = self.code_text(child).split("\n") if name == "pre" else self.table_rows(child)
                    parts.append(("lines", [line.rstrip() for line in lines]))
                elif name in BREAKING or name in WORDS_APART:
                    pieces.append(" ")
                    self.item_visit(child, excluded, parts, run)
                    pieces = run[0]
                    pieces.append(" ")
                else:
                    self.item_visit(child, excluded, parts, run)
                    pieces = run[0]
            elif name in CONTROLS:
                pieces.append(" ")
            if child.tail:
                pieces.append(child.tail)


def _content_root(body: Element, page: _Page) -> Element | None:
    """The element holding the page's main content, or None for the whole body.

    In order: ``main`` or ``[role=main]``; the only ``article``; Sphinx's ``div.body``,
    then ``div.document``. Two shown main regions, neither inside the other, make the choice ambiguous:
    the whole body, so that none is dropped. A candidate that is hidden, inside furniture, or holds less than
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
    mains = [node for node in found[0] if _shown(node, body, page)]
    if len([node for node in mains if not any(other in mains for other in node.iterancestors())]) > 1:
        return None  # two main regions side by side (two <main>, [role=main] and <main>): all of the body
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
    for element in itertools.chain((node,), node.iterancestors()):
        if element is body:
            return True
        if _name(element) in DROPPED or element in page.hidden or _furniture(element):
            return False
    return True


def _furniture(node: Element) -> bool:
    """Furniture by its class or id (see FURNITURE_CLASSES, FURNITURE_IDS), wherever it is."""
    return not FURNITURE_CLASSES.isdisjoint(_classes(node)) or node.get("id") in FURNITURE_IDS


def _text_length(node: Element) -> int:
    """Characters of text in the element (script and style included: a rough measure)."""
    return len(_text_of(node))


def _is_permalink(node: Element) -> bool:
    """A link to the element it sits in, shown as a mark (Sphinx's ``¶``, many sites' ``#``)."""
    href = node.get("href")
    if href is None or not href.startswith("#"):
        return "headerlink" in _classes(node)
    if "headerlink" in _classes(node):
        return True
    mark = (node.text or "" if not len(node) else _text_of(node)).strip()  # a link of text alone: its text
    if mark in PERMALINK_MARKS:
        return True
    # in a heading, a link into the page drawn as a symbol alone (Doxygen's "◆") marks the heading
    return not any(char.isalnum() for char in mark) and next(node.iterancestors(*HEADINGS), None) is not None


def _span(cell: Element, name: str, most: int) -> int:
    """A cell's rowspan or colspan (1 unless a number; rowspan 0, to the group's end, as the most)."""
    value = (cell.get(name) or "").strip()
    if not value.isdigit():
        return 1
    return min(int(value), most) or (most if name == "rowspan" else 1)


_Cell = tuple[str, int, int]  # a table cell's text, its rowspan (rows it still spans) and colspan


def _row_texts(cells: list[_Cell], spanning: dict[int, _Cell]) -> list[_Cell]:
    """The row's cells with those of rows above that span into it, in their columns (the grid a browser
    lays out): "Gold" of ``rowspan=2`` begins the next row too. ``spanning`` is updated for the rows after."""
    out: list[_Cell] = []
    column = 0

    def spanned() -> None:
        nonlocal column
        while column in spanning:
            text, rows, columns = spanning.pop(column)
            out.append((text, 1, columns))
            if rows > 1:
                spanning[column] = (text, rows - 1, columns)
            column += columns

    for text, rows, columns in cells:
        spanned()
        out.append((text, rows, columns))
        if rows > 1:
            spanning[column] = (text, rows - 1, columns)
        column += columns
    spanned()
    for later in sorted(key for key in spanning if key > column):  # past the row's own cells (a short row)
        if later >= column:  # (not one that spanned() just took)
            column = later
            spanned()
    return out


def _start_number(node: Element) -> int:
    start = node.get("start")
    if start is not None and re.fullmatch(r"\s*-?\d{1,6}\s*", start):
        return int(start)
    return 1


def _nearest_list_item(node: Element) -> Element | None:
    return next(node.iterancestors("li"), None)
