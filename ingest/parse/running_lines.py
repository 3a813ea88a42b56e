"""Running headers and footers shared by the PDF and text parsers: lines that repeat at the top or
bottom of most pages (a title, a chapter name, a page number in a band) are not the document's text."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ingest.parse._common import collapse_spaces
from ingest.parse.page_numbers import leading_heading_number, page_numbers, running_head_numbers

_NUMBER = re.compile(r"\d+")
MAX_RUNNING_CHARS = 120  # a longer line is text, not a running header or footer
BAND_TOLERANCE = 2.0  # PDF units: lines this close in height on two pages sit in one band


def line_key(line: str) -> str:
    """A line's shape for spotting running headers: spaces collapsed, digits as ``#``."""
    return _NUMBER.sub("#", collapse_spaces(line)).casefold()


@dataclass(frozen=True)
class EdgeLine:
    """A line at the top or bottom of a page that may be a running header or footer.

    ``band`` is its height on the page when known (PDF), ``apart`` whether it stands
    apart from the page's other lines by more than a paragraph gap, ``cells`` its text split
    at wide gaps (PDF; empty when not known).
    """

    page: int  # 1-based
    index: int  # its index among the page's lines
    text: str
    band: float | None = None
    apart: bool = False
    cells: tuple[str, ...] = ()


def running_line_indices(zones: Sequence[Sequence[Sequence[EdgeLine]]], page_count: int) -> list[set[int]]:
    """For each page, the indices of its running lines (headers, footers, page numbers).

    ``zones`` holds the candidate lines per zone (say, the top lines of every page, then
    the bottom lines). A line is running only when it repeats as it is or carries the page's
    number; within a zone that is
    - its shape (digits as ``#``) is on at least half of the pages, the same text there (in one
      height band, when positions are known) or differing only in a number that counts with the
      page (``Page 3 of 9``, ``Owner's Manual 3``); or
    - (positions known) it sits in a height band that the zone shares on many pages and sets
      apart a page number there (``2.1 Fonts      9``, ``iv``; see page_numbers.edge_page_numbers),
      or repeats there as it is, set apart from the text.
    A number numbering a part of the text (``Section 3``, ``§ 3``, ``3. Scope``, ``3 Scope``) is never
    taken for the page's: a heading or numbered line at the top of each page is the text's own.
    """
    drop: list[set[int]] = [set() for _ in range(page_count)]
    for zone in zones:
        keys = running_keys(_zone_pages(zone, page_count))
        if keys:  # (most documents have none: no line's key made again)
            for line in _keyed_running_lines(zone, keys, page_count):
                drop[line.page - 1].add(line.index)
        for line in _band_running_lines(zone, page_count):
            drop[line.page - 1].add(line.index)
    return drop


def _zone_pages(zone: Sequence[Sequence[EdgeLine]], page_count: int) -> list[list[str]]:
    pages: list[list[str]] = [[] for _ in range(page_count)]
    for page_lines in zone:
        for line in page_lines:
            pages[line.page - 1].append(line.text)
    return pages


def _keyed_running_lines(
    zone: Sequence[Sequence[EdgeLine]], keys: Mapping[str, bool], page_count: int
) -> list[EdgeLine]:
    """The zone's lines whose key is running (``keys``: key -> its lines are the same text). The
    same text is running only in a height band that holds it on enough pages, when heights are known:
    "1. Remove the cover." set at the top of pages at different heights is each page's own."""
    found: list[EdgeLine] = []
    same_text: dict[str, list[EdgeLine]] = {}
    for page_lines in zone:
        for line in page_lines:
            key = line_key(line.text)
            if key not in keys:
                continue
            if keys[key] and line.band is not None:
                same_text.setdefault(key, []).append(line)
            else:
                found.append(line)
    needed = _needed_pages(page_count)
    for lines in same_text.values():
        for band in _bands(lines):
            if len({line.page for line in band}) >= needed:
                found.extend(band)
    return found


def _bands(lines: Sequence[EdgeLine]) -> list[list[EdgeLine]]:
    """Lines grouped by height: each band holds the lines within BAND_TOLERANCE above its lowest."""
    bands: list[list[EdgeLine]] = []
    for line in sorted(lines, key=lambda line: line.band or 0.0):
        if bands and (line.band or 0.0) - (bands[-1][0].band or 0.0) <= BAND_TOLERANCE:
            bands[-1].append(line)
        else:
            bands.append([line])
    return bands


def _band_running_lines(zone: Sequence[Sequence[EdgeLine]], page_count: int) -> list[EdgeLine]:
    candidates = [
        line
        for page_lines in zone
        for line in page_lines
        if line.band is not None and line.apart and len(line.text) <= MAX_RUNNING_CHARS
    ]
    needed = max(3, page_count // 4)
    found: list[EdgeLine] = []
    for lines in _bands(candidates):
        if len({line.page for line in lines}) < needed:
            continue
        counted = _page_counted(lines)
        # repeated as it is: "Section 2", "Section 3" … at the top of each page are the text's own
        repeats = Counter(_exact_key(line.text) for line in lines)
        for line in lines:
            if id(line) in counted or repeats[_exact_key(line.text)] >= 2:
                found.append(line)
    return found


def _page_counted(lines: Sequence[EdgeLine]) -> set[int]:
    """ids of the band's lines that carry a number counting with the page: for each style of
    numbering (arabic, roman: front matter counts apart), the page plus the offset most lines of that
    style share, on at least 3 pages and half the band's lines of that style."""
    numbers = _band_numbers(lines)
    offsets: Counter[tuple[str, int]] = Counter()
    styled: Counter[str] = Counter()
    for line in lines:
        found = {(style, number - line.page) for style, number in numbers[id(line)]}
        offsets.update(found)
        styled.update({style for style, _ in found})
    counted: set[int] = set()
    for style in styled:
        offset, count = max(((o, c) for (s, o), c in offsets.items() if s == style), key=lambda pair: pair[1])
        if count >= max(3, styled[style] // 2):
            counted.update(
                id(line) for line in lines if any(s == style and n - line.page == offset for s, n in numbers[id(line)])
            )
    return counted


def _band_numbers(lines: Sequence[EdgeLine]) -> dict[int, set[tuple[str, int]]]:
    """Each line's page-number candidates (page_numbers.running_head_numbers), by id: a number opening
    a line before words counts only when those words repeat in the band (``8 CHAPTER 3. INSTALLATION``
    on pages 8 and 10; not ``3 Scope``, ``4 Payment`` … at the top of each page)."""
    titles: Counter[str] = Counter()
    for line in lines:
        start = leading_heading_number(line.text)
        if start:
            titles[_exact_key(line.text[start:])] += 1
    return {
        id(line): running_head_numbers(
            line.text, line.cells, titles[_exact_key(line.text[leading_heading_number(line.text) :])] >= 2
        )
        for line in lines
    }


def _needed_pages(page_count: int) -> int:
    return max(2, (page_count + 1) // 2)


def _exact_key(line: str) -> str:
    return collapse_spaces(line).casefold()


def running_keys(zones: Sequence[Sequence[str]]) -> dict[str, bool]:
    """Keys of lines repeated in the same zone (top or bottom) of most pages, each with whether its
    lines are the same text (else they differ only in a page number).

    ``zones[i]`` holds the candidate lines of page ``i + 1``. A key is running when it
    is found on at least two pages and half of all pages, and its lines there are
    identical or differ only in a number that counts with the page (a page number; see
    page_numbers.page_numbers for the numbers that never are).
    """
    page_count = len(zones)
    if page_count < 2:
        return {}
    found: dict[str, dict[int, str]] = {}
    for page, lines in enumerate(zones, start=1):
        for line in lines:
            found.setdefault(line_key(line), {}).setdefault(page, collapse_spaces(line))
    needed = _needed_pages(page_count)
    keys: dict[str, bool] = {}
    for key, by_page in found.items():
        if key and len(by_page) >= needed:
            same = len(set(by_page.values())) == 1
            if same or _page_counter(by_page):
                keys[key] = same
    return keys


def _page_counter(by_page: Mapping[int, str]) -> bool:
    numbers = {page: page_numbers(line) for page, line in by_page.items()}
    slots = min(len(values) for values in numbers.values())
    return any(len({values[slot] - page for page, values in numbers.items()}) == 1 for slot in range(slots))
