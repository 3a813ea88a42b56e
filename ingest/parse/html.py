"""HTML: ``<meta name>`` fields and ``<title>``, then the page's main content as blocks.

Main content: the page's ``main`` (or ``[role=main]``), else its one ``article``, else
Sphinx's ``div.body`` / ``div.document``, else the whole body — unless that element holds
too little of the page's text to be the content. Furniture dropped wherever it is: script,
style, nav, noscript, template, form controls (button, select, datalist; a form's own text is
kept), hidden elements (``aria-hidden`` only for decorations and drawn copies; tab panels are kept),
closed dialogs, cookie and consent notices,
site search forms, navigation/banner/search landmarks, WordPress's comment form, DocBook's
navigation bars and per-page tables of contents (``div.navheader``, ``div.navfooter``,
``div.toc``), permalink marks (``a.headerlink``, a ``¶``/``#`` link to the element itself),
and outside the content: header, footer, aside and site footers.

Blocks: h1–h6 headings; p paragraphs; ul/ol one list block (one item a line, code and
tables inside an item keep their lines, indented under it); table one block (its caption a
line where it stands, one row a line, cells joined by `` | ``); pre code (line breaks
kept); an admonition (``div.note``, ``div.warning``, ``div.admonition``,
``aside.admonition`` …) one ``note`` block of its lines, title first, never a heading; each
term of a definition list with its description one ``definition`` block (term lines, then
the description's lines; a definition list nested in the description ends it and gives its
own blocks); a footnote one paragraph. Loose text in divs, sections and articles becomes
paragraphs, and so do the drawn labels of an inline SVG (each ``<text>`` words of its own;
its title and description are not drawn). Whitespace in a paragraph is collapsed.

The tree is built by lxml (libxml2's HTML parser, in C) and walked directly: a soup
would cost five times the parse for the same tree.
"""

from __future__ import annotations

from typing import Any

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse._common import Draft, assemble, collapse_spaces
from ingest.parse.html_hidden import _hidden_elements
from ingest.parse.html_meta import _metadata
from ingest.parse.html_rules import (
    ADMONITION_CLASSES,
    ADMONITION_ELEMENTS,
    BLOCK_CONTAINERS,
    CLASS_CHECKED,
    CONTENT_ROOTS,
    DROPPED,
    HEADINGS,
    PAGE_CHROME,
    SITE_FOOTER_CLASSES,
    SPACERS,
    WORDS_APART,
    _classes,
    _content_root,
    _furniture,
    _name,
    _Page,
    _permalinks,
)
from ingest.parse.html_source import Element, _decode, _page_body, _tree


def parse_html(data: bytes) -> ParsedDocument:
    source = _decode(data)
    tree = _tree(source)
    if tree is None:
        raise UnreadableFile("no text")
    metadata = _metadata(tree, source)  # before the body takes in what follows </html> (refused there)
    body = _page_body(tree)
    hidden = _hidden_elements(source, body)
    page = _Page(body, hidden | _permalinks(body))
    root = _content_root(body, page)
    drafts = _Walker(page).blocks(body if root is None else root, root is not None)
    if not drafts:  # everything was furniture: keep the page rather than lose it
        drafts = _Walker(_Page(body, hidden), furniture=False).blocks(body, False)
    return assemble("html", drafts, metadata)


def read_html_metadata(data: bytes) -> dict[str, Any]:
    """Only the ``<meta>`` fields and ``<title>``: what a sync needs for a file it already holds."""
    source = _decode(data)
    tree = _tree(source, refuse_deep=False)  # the head lies near the root
    return {} if tree is None else _metadata(tree, source)


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
        if name in SPACERS:  # a line break, a form control's box (dropped or not): the words around stay apart
            loose.append(" ")
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
        elif (name == "ul" or name == "ol") and not _holds_heading(child):
            self.add("list", "\n".join(page.list_lines(child, 0)))
        elif name == "table":
            self.add("table", "\n".join(page.table_rows(child)))
        elif name == "pre":
            self.add("code", page.code_text(child))
        elif name == "dl":
            self.definitions(child, in_content)
        elif name in ADMONITION_ELEMENTS and _classes(child) & ADMONITION_CLASSES:
            self.note(child, in_content)
        elif name == "aside" and "footnote" in _classes(child):
            self.add("paragraph", page.inline_text(child))
        elif name in BLOCK_CONTAINERS or name == "aside" or name == "ul" or name == "ol":
            # (a list whose items hold headings lays out sections, as Javadoc's member lists do)
            self.flush()
            self.walk(child, in_content or name in CONTENT_ROOTS)
            self.flush()
        elif name in WORDS_APART:  # a label of a drawing, a text box: words of their own
            loose.append(" ")
            self.walk(child, in_content)
            loose.append(" ")
        elif not len(child):  # inline element holding text only: the commonest case
            if child.text:
                loose.append(child.text)
        else:  # inline element: its text joins the loose run around it
            self.walk(child, in_content)

    def note(self, node: Element, in_content: bool) -> None:
        """An admonition: one note block of its lines, or its lines merged into the capture it is in."""
        if self.capture is None:
            capture = self.begin("note", [])
            self.walk(node, in_content)
            self.end(capture)
        else:
            self.flush()
            self.walk(node, in_content)
            self.flush()

    def is_furniture(self, node: Element, name: str, in_content: bool) -> bool:
        return _furniture(node) or not in_content and not SITE_FOOTER_CLASSES.isdisjoint(_classes(node))

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


def _holds_heading(node: Element) -> bool:
    """A heading inside, not as an admonition's title: the list lays out sections (Javadoc's
    summaries and details), not items."""
    return any(not _in_admonition(heading, node) for heading in node.iter(*HEADINGS))


def _in_admonition(heading: Element, container: Element) -> bool:
    for ancestor in heading.iterancestors():
        if ancestor is container:
            return False
        if ancestor.tag in ADMONITION_ELEMENTS and _classes(ancestor) & ADMONITION_CLASSES:
            return True
    return False


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
