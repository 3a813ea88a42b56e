"""Headings of a tagged PDF, read from its structure tree.

A tagged PDF (``/MarkInfo /Marked true``, a ``/StructTreeRoot``) says which of its content is
a heading: structure elements of type ``H1``-``H6`` (or ``H``, whose level is its depth in
``Sect`` elements), including custom types that the document's ``/RoleMap`` maps to them (in
as many steps as it takes). Each heading element's marked content (the MCIDs in its subtree)
is found among its page's objects by pdfium, and its text becomes an entry like an outline
entry, (title, level, page), which the outline's machinery then finds among the page's lines.

Measured on Chromium print-to-PDF documents (110 and 437 pages, 5,101 and 20,401 elements),
the tree is walked once by pypdf (0.29 s and 1.29 s), not page by page through pdfium's
``FPDF_StructTree_GetForPage`` (0.56 s and 4.7 s): pdfium loads every kid of each element that
holds content on the page, and Chromium hangs all its elements on one ``Document`` element, so
that costs pages × elements. Only the pages that hold headings have their objects looked at,
while the page is open anyway. Untagged documents cost one catalog lookup. The walk is bounded
(elements, depth, headings, page objects) and never visits an object twice: a deep, cyclic or
huge tree costs at most that, never a crash or a hang.
"""

from __future__ import annotations

import ctypes
import io
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, NumberObject

from ingest.parse._common import collapse_spaces, drop_controls
from ingest.parse.pdf_lines import MAX_OUTLINE_ENTRIES, OutlineEntry

MAX_TAG_DEPTH = 100  # structure elements nested deeper than this are not looked at


MAX_TAG_ELEMENTS = 100_000  # structure tree objects visited per document


MAX_PAGE_OBJECTS = 100_000  # page objects looked at for one page's heading text


MAX_FORM_DEPTH = 4  # form XObjects nested in form XObjects


MAX_TAG_TITLE_CHARS = 300  # a "heading" longer than this is mis-tagged text, not a heading


MAX_ROLE_CHAIN = 10


_HEADING_TYPE = re.compile(r"H([1-6])?")


_SECTION_TYPES = frozenset({"Sect", "Part", "Art"})


# Inline and paragraph-level types hold no headings: their subtrees are not walked (about
# half of a Chromium tree: every P holds a NonStruct element of its own).
_LEAF_TYPES = frozenset(
    {"P", "Span", "Link", "Figure", "Formula", "Code", "Quote", "Em", "Strong", "Reference", "BibEntry"}
    | {"Lbl", "Annot", "Ruby", "Warichu", "Artifact", "Sub"}
)


@dataclass(frozen=True)
class _TaggedHeading:
    """A heading element: its level, its marked-content IDs on its page, its /ActualText."""

    level: int
    mcids: tuple[int, ...]
    actual_text: str


class TagHeadings:
    """The heading elements of a tagged document, given their text page by page as its pages are read."""

    def __init__(self, document: pdfium.PdfDocument, data: bytes) -> None:
        self._data = data
        self._tagged = bool(pdfium_c.FPDFCatalog_IsTagged(document.raw))
        self._by_page: dict[int, list[_TaggedHeading]] | None = None
        self.entries: list[OutlineEntry] = []

    def read_page(self, page: Any, textpage: Any, number: int) -> None:
        """The headings whose content is on this (open) page: its pdfium FPDF_PAGE and FPDF_TEXTPAGE handles."""
        if self._by_page is None:
            if not self._tagged:
                # No /MarkInfo: a structure tree still counts when the first page has content in it.
                self._tagged = _page_has_structure(page)
            self._by_page = _tree_headings(self._data) if self._tagged else {}
        found = self._by_page.get(number)
        if not found or len(self.entries) >= MAX_OUTLINE_ENTRIES:
            return
        try:
            texts = _marked_texts(page, textpage, {mcid for heading in found for mcid in heading.mcids})
        except (pdfium.PdfiumError, ctypes.ArgumentError, ValueError, OverflowError):
            return
        for heading in found:
            title = heading.actual_text or "".join(texts.get(mcid, "") for mcid in heading.mcids)
            title = collapse_spaces(drop_controls(title))
            if title and len(title) <= MAX_TAG_TITLE_CHARS and len(self.entries) < MAX_OUTLINE_ENTRIES:
                self.entries.append(OutlineEntry(title, heading.level, number))


def _page_has_structure(page: Any) -> bool:
    tree = pdfium_c.FPDF_StructTree_GetForPage(page)
    if not tree:
        return False
    try:
        return bool(pdfium_c.FPDF_StructTree_CountChildren(tree) > 0)
    finally:
        pdfium_c.FPDF_StructTree_Close(tree)


def _tree_headings(data: bytes) -> dict[int, list[_TaggedHeading]]:
    """The heading elements of the document's structure tree by page number (1-based), in order."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _TreeWalk(PdfReader(io.BytesIO(data), strict=False)).headings()
    except Exception:  # noqa: BLE001 - a damaged tree gives no headings; the fonts still do
        return {}


class _TreeWalk:
    """One depth-first walk of /StructTreeRoot, each object visited at most once."""

    def __init__(self, reader: PdfReader) -> None:
        self.reader = reader
        root: Any = reader.trailer["/Root"].get_object()
        self.tree: Any = _resolved(root.get("/StructTreeRoot"))
        role_map = _resolved(self.tree.get("/RoleMap")) if isinstance(self.tree, DictionaryObject) else None
        self.role_map: dict[str, str] = {}
        if isinstance(role_map, DictionaryObject):
            for key, value in list(role_map.items())[:10_000]:
                self.role_map[str(key).lstrip("/")] = str(_resolved(value)).lstrip("/")
        self.pages = {
            page.indirect_reference.idnum: n for n, page in enumerate(reader.pages, start=1) if page.indirect_reference
        }
        self.seen: set[int] = set()
        self.budget = MAX_TAG_ELEMENTS
        self.found: dict[int, list[_TaggedHeading]] = {}
        self.count = 0

    def headings(self) -> dict[int, list[_TaggedHeading]]:
        if not isinstance(self.tree, DictionaryObject):
            return {}
        # (kid, depth, enclosing Sect count, inherited page)
        stack: list[tuple[Any, int, int, int]] = [(self.tree.get("/K"), 0, 0, 0)]
        while stack and self.budget > 0 and self.count < MAX_OUTLINE_ENTRIES:
            kid, depth, sections, page = stack.pop()
            element = self._visit(kid)
            if isinstance(element, ArrayObject):
                stack.extend((item, depth, sections, page) for item in reversed(element[:MAX_TAG_ELEMENTS]))
                continue
            if not isinstance(element, DictionaryObject) or "/S" not in element or depth > MAX_TAG_DEPTH:
                continue
            page = self._page(element, page)
            kind = self._type(element)
            heading = _HEADING_TYPE.fullmatch(kind)
            if heading:
                self._heading(element, int(heading.group(1)) if heading.group(1) else max(sections, 1), page)
                continue  # a heading holds no headings
            if kind in _LEAF_TYPES:
                continue
            inner = sections + (kind in _SECTION_TYPES)
            stack.append((element.get("/K"), depth + 1, inner, page))
        return self.found

    def _visit(self, kid: Any) -> Any:
        """The object a kid refers to, or None when it was visited already (a cycle) or the budget is spent."""
        self.budget -= 1
        if isinstance(kid, IndirectObject):
            if kid.idnum in self.seen:
                return None
            self.seen.add(kid.idnum)
            return kid.get_object()
        return kid

    def _page(self, element: DictionaryObject, inherited: int) -> int:
        ref = element.get("/Pg")  # the raw entry: an indirect reference to a page
        if isinstance(ref, IndirectObject):
            return self.pages.get(ref.idnum, inherited)
        return inherited

    def _type(self, element: DictionaryObject) -> str:
        kind = str(element.get("/S", "")).lstrip("/")
        for _ in range(MAX_ROLE_CHAIN):
            mapped = self.role_map.get(kind)
            if mapped is None or mapped == kind or _HEADING_TYPE.fullmatch(kind):
                break
            kind = mapped
        return kind

    def _heading(self, element: DictionaryObject, level: int, page: int) -> None:
        """A heading's MCIDs on the page of its first one (a heading split over a page break keeps
        its first part), and its /ActualText."""
        mcids: list[tuple[int, int]] = []
        stack: list[tuple[Any, int, int]] = [(element.get("/K"), page, 0)]
        while stack and self.budget > 0:
            kid, kid_page, depth = stack.pop()
            item = self._visit(kid)
            if isinstance(item, NumberObject | int) and not isinstance(item, bool):
                mcids.append((kid_page, int(item)))
            elif isinstance(item, ArrayObject):
                stack.extend((inner, kid_page, depth) for inner in reversed(item[:MAX_TAG_ELEMENTS]))
            elif isinstance(item, DictionaryObject) and depth <= MAX_TAG_DEPTH:
                inner_page = self._page(item, kid_page)
                if "/MCID" in item:  # a marked-content reference, perhaps on another page
                    mcids.append((inner_page, int(_resolved(item["/MCID"]))))
                elif "/S" in item:
                    stack.append((item.get("/K"), inner_page, depth + 1))
        actual = _resolved(element.get("/ActualText"))
        actual_text = str(actual) if isinstance(actual, str) else ""
        first_page = mcids[0][0] if mcids else page
        on_page = tuple(mcid for mcid_page, mcid in mcids if mcid_page == first_page)
        if first_page > 0 and (on_page or actual_text):
            self.found.setdefault(first_page, []).append(_TaggedHeading(min(level, 6), on_page, actual_text))
            self.count += 1


def _resolved(value: Any) -> Any:
    return value.get_object() if isinstance(value, IndirectObject) else value


def _marked_texts(page: Any, textpage: Any, wanted: set[int]) -> dict[int, str]:
    """The text of the page's objects marked with each wanted MCID, in content order.

    Generators number marked content in content order, so each MCID is looked for by
    bisecting the page's objects (a marked-content sequence is contiguous: the objects
    around the one found that carry the same MCID are the rest of it); an MCID not found so
    (numbered out of order, or inside a form XObject) is looked for object by object.
    """
    objects = _PageObjects(page)
    texts: dict[int, list[str]] = {}
    for mcid in sorted(wanted):
        index = objects.find(mcid)
        if index is None:
            continue
        start, end = index, index
        while start > 0 and objects.mcid(start - 1) == mcid:
            start -= 1
        while end + 1 < objects.count and objects.mcid(end + 1) == mcid:
            end += 1
        parts = texts.setdefault(mcid, [])
        for position in range(start, end + 1):
            obj = objects.object(position)
            _add_text(obj, pdfium_c.FPDFPageObj_GetType(obj), mcid, textpage, {mcid}, {mcid: parts}, 0)
    missing = wanted - texts.keys()
    if missing:
        texts.update(_scanned_texts(objects, textpage, missing))
    return {mcid: "".join(parts) for mcid, parts in texts.items()}


class _PageObjects:
    """A page's top-level objects and their MCIDs, each asked of pdfium once."""

    def __init__(self, page: Any) -> None:
        self.raw = page
        self.count = min(max(int(pdfium_c.FPDFPage_CountObjects(self.raw)), 0), MAX_PAGE_OBJECTS)
        self._objects: dict[int, Any] = {}
        self._mcids: dict[int, int] = {}

    def object(self, index: int) -> Any:
        found = self._objects.get(index)
        if found is None:
            found = self._objects[index] = pdfium_c.FPDFPage_GetObject(self.raw, index)
        return found

    def mcid(self, index: int) -> int:
        found = self._mcids.get(index)
        if found is None:
            obj = self.object(index)
            found = self._mcids[index] = int(pdfium_c.FPDFPageObj_GetMarkedContentID(obj)) if obj else -1
        return found

    def find(self, wanted: int) -> int | None:
        """An object marked ``wanted``, by bisection over MCIDs assumed to rise in content order
        (unmarked objects in between skipped)."""
        low, high = 0, self.count
        while low < high:
            middle = (low + high) // 2
            probe = middle
            while probe < high and self.mcid(probe) < 0:
                probe += 1
            if probe == high:
                high = middle
                continue
            found = self.mcid(probe)
            if found == wanted:
                return probe
            if found < wanted:
                low = probe + 1
            else:
                high = middle
        return None


def _scanned_texts(objects: _PageObjects, textpage: Any, wanted: set[int]) -> dict[int, list[str]]:
    """The texts of the wanted MCIDs, object by object; done once every one was seen and left behind."""
    texts: dict[int, list[str]] = {}
    pending = set(wanted)
    current = -1
    for index in range(objects.count):
        obj = objects.object(index)
        if not obj:
            continue
        mcid = objects.mcid(index)
        if mcid != current:
            if current in texts:
                pending.discard(current)  # its sequence is over
                if not pending:
                    break
            current = mcid
        if mcid in wanted or mcid < 0:  # an unmarked form may hold marked content
            _add_text(obj, pdfium_c.FPDFPageObj_GetType(obj), mcid, textpage, wanted, texts, 0)
    return texts


def _add_text(
    obj: Any,
    kind: int,
    mcid: int,
    textpage: Any,
    wanted: set[int],
    texts: dict[int, list[str]],
    depth: int,
) -> None:
    if kind == pdfium_c.FPDF_PAGEOBJ_TEXT:
        if mcid in wanted:
            texts.setdefault(mcid, []).append(_object_text(obj, textpage))
    elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH:
        for index in range(min(max(pdfium_c.FPDFFormObj_CountObjects(obj), 0), MAX_PAGE_OBJECTS)):
            inner = pdfium_c.FPDFFormObj_GetObject(obj, index)
            if inner:
                inner_mcid = pdfium_c.FPDFPageObj_GetMarkedContentID(inner)
                # content inside a form marked as a whole belongs to the form's sequence
                own = inner_mcid if inner_mcid >= 0 else mcid
                _add_text(inner, pdfium_c.FPDFPageObj_GetType(inner), own, textpage, wanted, texts, depth + 1)


def _object_text(obj: object, textpage: Any) -> str:
    length = pdfium_c.FPDFTextObj_GetText(obj, textpage, None, 0)
    if length <= 2:
        return ""
    buffer = ctypes.create_string_buffer(length)
    pdfium_c.FPDFTextObj_GetText(obj, textpage, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)), length)
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
        return list(tagged)
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
    return list(outline) + extra


_NON_ALNUM = re.compile(r"[\W_]+")


def _key(title: str) -> str:
    return _NON_ALNUM.sub("", title).casefold()
