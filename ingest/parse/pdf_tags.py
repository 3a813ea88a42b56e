"""Headings of a tagged PDF, read from its structure tree through pdfium.

A tagged PDF (``/MarkInfo /Marked true``, a ``/StructTreeRoot``) says which of its content is
a heading: structure elements of type ``H1``-``H6`` (or ``H``, whose level is its depth in
``Sect`` elements), including custom types that the document's ``/RoleMap`` maps to them.
Each heading element's marked content (its MCIDs, in its whole subtree) is found among the
page's objects, and its text becomes an entry like an outline entry: (title, level, page),
which the outline's machinery then finds among the page's lines.

pdfium loads the part of the tree that holds content on one page (``FPDF_StructTree_GetForPage``);
it is read while the page is open anyway, so a tagged document costs one walk of its tree and
only the pages that hold headings have their objects looked at. The walk is bounded (depth,
elements, headings and page objects): a deep, cyclic or huge tree costs at most that, never a
crash or a hang.
"""

from __future__ import annotations

import ctypes
import io
import re
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ingest.parse._common import collapse_spaces, strip_controls
from ingest.parse.pdf_lines import MAX_OUTLINE_ENTRIES, OutlineEntry

MAX_TAG_DEPTH = 40  # structure elements nested deeper than this are not looked at


MAX_TAG_ELEMENTS = 200_000  # elements visited per document, over all its pages


MAX_PAGE_OBJECTS = 100_000  # page objects looked at for one page's heading text


MAX_FORM_DEPTH = 4  # form XObjects nested in form XObjects


MAX_TAG_TITLE_CHARS = 300  # a "heading" longer than this is mis-tagged text, not a heading


MAX_ROLE_CHAIN = 10


_HEADING_TYPE = re.compile(r"H([1-6])?")


# The standard structure types (PDF 1.7 and 2.0): a type outside these is custom and may be
# role-mapped to a heading in more than one step (pdfium follows one).
_STANDARD_TYPES = frozenset(
    (  # noqa: SIM905 - a word list reads better than a column of quoted names
        "Document DocumentFragment Part Art Sect Div BlockQuote Caption TOC TOCI Index NonStruct Private "
        "P H H1 H2 H3 H4 H5 H6 Title FENote Sub L LI Lbl LBody Table TR TH TD THead TBody TFoot Span Quote "
        "Note Reference BibEntry Code Link Annot Ruby RB RT RP Warichu WT WP Figure Formula Form Em Strong "
        "Artifact Aside"
    ).split()
)


_SECTION_TYPES = frozenset({"Sect", "Part", "Art"})


_CHAR_BUFFER = 512


class TagHeadings:
    """Collects the heading elements of a tagged document, page by page, while its pages are read."""

    def __init__(self, document: pdfium.PdfDocument, data: bytes) -> None:
        self._data = data
        self._raw = document.raw
        self._tagged = bool(pdfium_c.FPDFCatalog_IsTagged(document.raw))
        self._checked_untagged = False
        self._budget = MAX_TAG_ELEMENTS
        self._buffer = ctypes.create_string_buffer(_CHAR_BUFFER)
        self._role_map: dict[str, str] | None = None
        self.entries: list[OutlineEntry] = []

    def read_page(self, page: pdfium.PdfPage, textpage: pdfium.PdfTextPage, number: int) -> None:
        """The headings whose content is on this (open) page."""
        if self._budget <= 0 or len(self.entries) >= MAX_OUTLINE_ENTRIES:
            return
        if not self._tagged and self._checked_untagged:
            return
        try:
            self._read_page(page, textpage, number)
        except (pdfium.PdfiumError, ctypes.ArgumentError, ValueError, OverflowError, RecursionError):
            self._budget = 0  # a tree pdfium cannot walk: keep what was read, read no further

    def _read_page(self, page: pdfium.PdfPage, textpage: pdfium.PdfTextPage, number: int) -> None:
        tree = pdfium_c.FPDF_StructTree_GetForPage(page.raw)
        if not tree:
            self._checked_untagged = True
            return
        try:
            count = pdfium_c.FPDF_StructTree_CountChildren(tree)
            if not self._tagged:
                # No /MarkInfo: a /StructTreeRoot still counts when the first page has one.
                self._checked_untagged = True
                self._tagged = count > 0
            found: list[tuple[int, list[int], str]] = []  # (level, MCIDs, ActualText)
            for index in range(max(count, 0)):
                child = pdfium_c.FPDF_StructTree_GetChildAtIndex(tree, index)
                if child:
                    self._walk(child, 0, 0, found)
        finally:
            pdfium_c.FPDF_StructTree_Close(tree)
        if not found:
            return
        texts = _marked_texts(page, textpage, {mcid for _, mcids, _ in found for mcid in mcids})
        for level, mcids, actual in found:
            title = actual or "".join(texts.get(mcid, "") for mcid in mcids)
            title = collapse_spaces(strip_controls(title))
            if title and len(title) <= MAX_TAG_TITLE_CHARS and len(self.entries) < MAX_OUTLINE_ENTRIES:
                self.entries.append(OutlineEntry(title, level, number))

    def _walk(self, element: int, depth: int, sections: int, found: list[tuple[int, list[int], str]]) -> None:
        self._budget -= 1
        if self._budget <= 0 or depth > MAX_TAG_DEPTH:
            return
        kind = self._type(element)
        heading = _HEADING_TYPE.fullmatch(kind)
        if heading:
            level = int(heading.group(1)) if heading.group(1) else max(sections, 1)
            mcids: list[int] = []
            self._mcids(element, 0, mcids)
            found.append((min(level, 6), mcids, self._actual_text(element)))
            return  # a heading holds no headings
        if kind in _SECTION_TYPES:
            sections += 1
        for index in range(max(pdfium_c.FPDF_StructElement_CountChildren(element), 0)):
            child = pdfium_c.FPDF_StructElement_GetChildAtIndex(element, index)
            if child:
                self._walk(child, depth + 1, sections, found)

    def _mcids(self, element: int, depth: int, into: list[int]) -> None:
        """The marked-content IDs of an element and its descendants, in order."""
        self._budget -= 1
        if self._budget <= 0 or depth > MAX_TAG_DEPTH:
            return
        own = pdfium_c.FPDF_StructElement_GetMarkedContentIdCount(element)
        children = pdfium_c.FPDF_StructElement_CountChildren(element)
        # Kids in order: a marked-content kid gives its MCID, an element kid gives -1 here.
        for index in range(max(own, children, 0)):
            mcid = pdfium_c.FPDF_StructElement_GetMarkedContentIdAtIndex(element, index) if index < own else -1
            if mcid >= 0:
                into.append(mcid)
                continue
            child = pdfium_c.FPDF_StructElement_GetChildAtIndex(element, index) if index < children else None
            if child:
                self._mcids(child, depth + 1, into)

    def _type(self, element: int) -> str:
        """The element's type after the document's role map (pdfium follows one step; custom
        chains such as ``chapter`` → ``section-head`` → ``H1`` are followed here)."""
        kind = self._string(pdfium_c.FPDF_StructElement_GetType, element)
        if kind in _STANDARD_TYPES or not kind:
            return kind
        role_map = self._document_role_map()
        for _ in range(MAX_ROLE_CHAIN):
            mapped = role_map.get(kind)
            if mapped is None or mapped == kind:
                break
            kind = mapped
        return kind

    def _actual_text(self, element: int) -> str:
        return self._string(pdfium_c.FPDF_StructElement_GetActualText, element)

    def _string(self, call: Callable[[Any, Any, int], int], element: Any) -> str:
        """A UTF-16 string property of an element (pdfium's ``(element, buffer, length)`` calls)."""
        length = int(call(element, self._buffer, _CHAR_BUFFER))
        if length <= 2:
            return ""
        if length > _CHAR_BUFFER:
            buffer = ctypes.create_string_buffer(length)
            length = int(call(element, buffer, length))
            return buffer.raw[: max(length - 2, 0)].decode("utf-16-le", "replace")
        return self._buffer.raw[: length - 2].decode("utf-16-le", "replace")

    def _document_role_map(self) -> dict[str, str]:
        """The structure tree's /RoleMap, read once (through pypdf: pdfium does not expose it)."""
        if self._role_map is None:
            self._role_map = _role_map(self._data)
        return self._role_map


def _role_map(data: bytes) -> dict[str, str]:
    from pypdf import PdfReader

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            root: Any = PdfReader(io.BytesIO(data), strict=False).trailer["/Root"].get_object()
            tree: Any = root.get("/StructTreeRoot")
            role_map: Any = tree.get_object().get("/RoleMap") if tree is not None else None
            role_map = role_map.get_object() if role_map is not None else None
            if not isinstance(role_map, dict):
                return {}
            return {
                str(key).lstrip("/"): str(value.get_object()).lstrip("/")
                for key, value in list(role_map.items())[:10_000]
            }
    except Exception:  # noqa: BLE001 - a damaged role map maps nothing
        return {}


def _marked_texts(page: pdfium.PdfPage, textpage: pdfium.PdfTextPage, wanted: set[int]) -> dict[int, str]:
    """The text of the page's text objects marked with each wanted MCID, in content order."""
    texts: dict[int, list[str]] = {}
    if not wanted:
        return {}
    budget = [MAX_PAGE_OBJECTS]
    count = pdfium_c.FPDFPage_CountObjects(page.raw)
    objects = (pdfium_c.FPDFPage_GetObject(page.raw, index) for index in range(max(count, 0)))
    _collect(objects, textpage, wanted, texts, budget, 0)
    return {mcid: "".join(parts) for mcid, parts in texts.items()}


def _collect(
    objects: object,
    textpage: pdfium.PdfTextPage,
    wanted: set[int],
    texts: dict[int, list[str]],
    budget: list[int],
    depth: int,
) -> None:
    for obj in objects:  # type: ignore[attr-defined]
        budget[0] -= 1
        if budget[0] <= 0:
            return
        if not obj:
            continue
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH:
            count = pdfium_c.FPDFFormObj_CountObjects(obj)
            inner = (pdfium_c.FPDFFormObj_GetObject(obj, index) for index in range(max(count, 0)))
            _collect(inner, textpage, wanted, texts, budget, depth + 1)
            continue
        if kind != pdfium_c.FPDF_PAGEOBJ_TEXT:
            continue
        mcid = pdfium_c.FPDFPageObj_GetMarkedContentID(obj)
        if mcid in wanted:
            texts.setdefault(mcid, []).append(_object_text(obj, textpage))


def _object_text(obj: object, textpage: pdfium.PdfTextPage) -> str:
    length = pdfium_c.FPDFTextObj_GetText(obj, textpage.raw, None, 0)
    if length <= 2:
        return ""
    buffer = ctypes.create_string_buffer(length)
    pdfium_c.FPDFTextObj_GetText(obj, textpage.raw, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)), length)
    return buffer.raw[: length - 2].decode("utf-16-le", "replace")


def document_headings(outline: Sequence[OutlineEntry], tagged: Sequence[OutlineEntry]) -> list[OutlineEntry]:
    """The headings the document itself declares: its outline, completed by its tagged headings.

    The outline comes first: it is what a reader navigates by and its levels are the ones
    shown. But an outline is often shallower than the tags (hyperref's bookmarks stop at the
    table-of-contents depth, a writer may bookmark only chapters), and a tagged heading is
    the author's own markup of a heading, so the tagged headings the outline does not list
    (compared on letters and digits, on the same page) are added, at their tag level shifted
    by the usual difference between the two where they agree. Entries in the outline that
    are not headings in the tags (a bookmarked figure, "Cover") stay: they are findable
    navigation points the writer chose.
    """
    if not tagged:
        return list(outline)
    if not outline:
        return _unique(tagged)
    listed = {(entry.page, _key(entry.title)) for entry in outline}
    listed_texts = {_key(entry.title): entry.level for entry in outline}
    shifts: Counter[int] = Counter(
        listed_texts[_key(entry.title)] - entry.level for entry in tagged if _key(entry.title) in listed_texts
    )
    shift = shifts.most_common(1)[0][0] if shifts else 0
    extra = [
        OutlineEntry(entry.title, min(max(entry.level + shift, 1), 6), entry.page)
        for entry in tagged
        if (entry.page, _key(entry.title)) not in listed and _key(entry.title) not in listed_texts
    ]
    return list(outline) + _unique(extra)


_NON_ALNUM = re.compile(r"[\W_]+")


def _key(title: str) -> str:
    return _NON_ALNUM.sub("", title).casefold()


def _unique(entries: Sequence[OutlineEntry]) -> list[OutlineEntry]:
    """Entries without repeats (a heading whose content runs over a page break is on both)."""
    seen: set[tuple[int, str]] = set()
    unique: list[OutlineEntry] = []
    for entry in entries:
        key = (entry.page, _key(entry.title))
        if key not in seen and key[1]:
            seen.add(key)
            unique.append(entry)
    return unique
