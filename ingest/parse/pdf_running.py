"""PDF page furniture: running headers and footers repeated over pages or carrying the page
number, small top-of-page headers, and line-end hyphens resolved over the whole document."""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from itertools import accumulate
from operator import itemgetter

from ingest.parse.page_numbers import lone_page_label
from ingest.parse.pdf_lines import _LEADING_LETTERS, _SHY, PARAGRAPH_GAP, Line
from ingest.parse.running_lines import EdgeLine, running_line_indices

HEADER_GAP = 3.0  # a small-font top line this many body sizes above the rest is a page header


RUNNING_ZONE = 2  # lines at the top and bottom of a page that may be running headers


_SHY_PAIR = re.compile(r"([^\W\d_]+)\u00ad([^\W\d_]+)")


_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


_HYPHEN_END = re.compile(r"([^\W\d_]+)-$")


def _without_running_lines(pages: list[list[Line]]) -> list[list[Line]]:
    """Pages without their running headers and footers (see ``running_line_indices``)."""
    tops: list[list[EdgeLine]] = []
    bottoms: list[list[EdgeLine]] = []
    for number, page in enumerate(pages, start=1):
        heights = [-line.y for line in page]
        order = sorted(range(len(page)), key=heights.__getitem__)
        tops.append([_edge_line(page, order, p, number) for p in range(min(RUNNING_ZONE, len(order)))])
        bottoms.append(
            [_edge_line(page, order, p, number) for p in range(max(len(order) - RUNNING_ZONE, 0), len(order))]
        )
    drops = running_line_indices([tops, bottoms], len(pages))
    kept = [
        [line for i, line in enumerate(page) if i not in drop] if drop else page
        for page, drop in zip(pages, drops, strict=True)
    ]
    if not any(kept):
        # Every line "repeats": one line a page, all alike. That is the document, not its
        # furniture; refusing it as "no extractable text" would lose it.
        kept = [list(page) for page in pages]
    body_size = _body_size([line for page in kept for line in page])
    return [_without_page_furniture(page, body_size, number) for number, page in enumerate(kept, start=1)]


def _edge_line(page: list[Line], order: list[int], position: int, number: int) -> EdgeLine:
    """The line at ``position`` from the top of page ``number`` (``order``: its lines from the
    top down), and whether it stands a paragraph gap apart from the lines above and below."""
    line = page[order[position]]
    neighbours = [page[order[p]] for p in (position - 1, position + 1) if 0 <= p < len(order)]
    apart = all(abs(line.y - other.y) > PARAGRAPH_GAP * max(line.size, other.size) for other in neighbours)
    return EdgeLine(number, order[position], line.text, band=line.y, apart=apart, cells=line.cells)


def _without_page_furniture(page: list[Line], body_size: float, number: int = 0) -> list[Line]:
    """Drop what is page furniture even when not repeated (say, on a one-page document).

    A page number (``3``, ``- 3 -``, ``Page 3 of 9``, ``iv`` near the start) standing apart at the top or bottom
    of page ``number``,
    and a top line in a smaller font than the body set well apart above everything else.
    """
    if len(page) < 2:
        return page
    by_height = sorted(page, key=lambda line: -line.y)
    drop: list[Line] = []
    top, below_top = by_height[0], by_height[1]
    bottom, above_bottom = by_height[-1], by_height[-2]
    for edge, neighbour in ((top, below_top), (bottom, above_bottom)):
        apart = abs(edge.y - neighbour.y) > PARAGRAPH_GAP * max(edge.size, neighbour.size)
        if apart and lone_page_label(edge.text, number):
            drop.append(edge)
    if top not in drop and top.size < body_size and top.y - below_top.y > HEADER_GAP * body_size:
        drop.append(top)
    if not drop:
        return page
    dropped = {id(line) for line in drop}
    return [line for line in page if id(line) not in dropped]


def _body_size(lines: Sequence[Line]) -> float:
    """The font size most of the prose is set in (code and table lines left out, unless
    there is nothing else)."""
    # a plain dict: a Counter's per-key Python calls cost more than the counting; of sizes
    # tied for the largest count the first seen wins, as with Counter.most_common
    sizes: dict[float, int] = {}
    get = sizes.get
    for line in lines:
        if not line.mono and len(line.cells) == 1:
            sizes[line.size] = get(line.size, 0) + len(line.text)
    if not sizes:
        for line in lines:
            sizes[line.size] = get(line.size, 0) + len(line.text)
    return max(sizes.items(), key=itemgetter(1))[0] if sizes else 0.0


SEARCHES_BEFORE_SPLITTING = 64


class _WordCounts:
    """How often each word (as ``_WORD`` finds them, case-folded) occurs in the lines of a text,
    counted only for the words asked about.

    A hyphenated word is looked for only in the lines that hold a hyphen (most do not), all
    of whose hyphenated words are counted at the first such question: the line-end hyphens
    ask first whether their hyphenated form is used, and only when it is, whether the joined
    one is. A word without a hyphen absent from the case-folded text is absent (folding
    works character by character and keeps the line breaks); one that is there is counted in
    the lines it occurs in (no word spans a line break). Splitting the whole text into words
    costs as much as a few hundred such searches: after ``SEARCHES_BEFORE_SPLITTING`` such
    questions it is split once.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.folded = ""  # the text case-folded, once a word without a hyphen is searched for
        self.lines: list[str] = []
        self.line_starts: list[int] = []  # of each line in the folded text
        self.counted: dict[str, int] = {}
        self.searches = 0
        self.all_words: Counter[str] | None = None
        self.hyphenated: Counter[str] | None = None

    def __getitem__(self, word: str) -> int:
        """Occurrences of ``word`` (case-folded)."""
        count = self.counted.get(word)
        if count is None:
            count = self.counted[word] = self._hyphenated_count(word) if "-" in word else self._count(word)
        return count

    def _hyphenated_count(self, word: str) -> int:
        if self.all_words is not None:
            return self.all_words[word]
        if self.hyphenated is None:
            self.hyphenated = Counter(
                found.casefold()
                for line in self.text.split("\n")
                if "-" in line
                for found in _WORD.findall(line)
                if "-" in found
            )
        return self.hyphenated[word]

    def _count(self, word: str) -> int:
        self.searches += 1
        if self.all_words is None and self.searches > SEARCHES_BEFORE_SPLITTING:
            self.all_words = Counter(map(str.casefold, _WORD.findall(self.text)))
        if self.all_words is not None:
            return self.all_words[word]
        if not self.folded:
            self.folded = self.text.casefold()
        folded = self.folded
        at = folded.find(word)
        if at < 0:
            return 0
        if not self.lines:
            self.lines = self.text.split("\n")
            self.line_starts = [0, *accumulate(len(line) + 1 for line in folded.split("\n"))]
        numbers: set[int] = set()
        while at >= 0:
            numbers.add(bisect_right(self.line_starts, at) - 1)
            at = folded.find(word, at + 1)
        return sum(found.casefold() == word for number in numbers for found in _WORD.findall(self.lines[number]))


def _with_hyphens_resolved(lines: list[Line]) -> list[Line]:
    """A line-end hyphen before a lower-case word part is kept when the hyphenated form is
    the word (``self-`` + ``contained``: "selfcontained" is nowhere else in the document,
    "self-contained" is) and dropped otherwise, by ending the line without it or with it.

    Lines whose hyphen stays are marked ``keep_hyphen``; the joining does the rest.
    """
    candidates = [
        index
        for index in range(len(lines) - 1)
        if lines[index].text.endswith("-")
        and lines[index + 1].text[:1].islower()
        and _HYPHEN_END.search(lines[index].text[-64:])
    ]
    joined_by_pdfium = [index for index, line in enumerate(lines) if _SHY in line.text]
    if not candidates and not joined_by_pdfium:
        return lines
    words = _WordCounts("\n".join([line.text for line in lines]))

    def resolve(match: re.Match[str]) -> str:
        left, right = match.group(1), match.group(2)
        hyphen = words[f"{left}-{right}".casefold()] > 0 and words[(left + right).casefold()] == 0
        return f"{left}-{right}" if hyphen else left + right

    result = list(lines)
    for index in joined_by_pdfium:
        line = lines[index]
        cells = tuple(_SHY_PAIR.sub(resolve, cell).replace(_SHY, "") for cell in line.cells)
        result[index] = dataclasses.replace(line, text=_SHY_PAIR.sub(resolve, line.text).replace(_SHY, ""), cells=cells)
    for index in candidates:
        left_match = _HYPHEN_END.search(lines[index].text[-64:])
        right_match = _LEADING_LETTERS.match(lines[index + 1].text)
        if not left_match or not right_match:  # (left always matches: candidates were chosen so)
            continue
        left = left_match.group(1)
        right = right_match.group()
        joined, hyphenated = (left + right).casefold(), f"{left}-{right}".casefold()
        if words[hyphenated] > 0 and words[joined] == 0:
            result[index] = dataclasses.replace(result[index], keep_hyphen=True)
    return result
