"""Page numbers in running headers and footers: which numbers of a line may be its page's number.

A page number is a plain count: ``3``, ``- 3 -``, ``Page 3 of 10``, ``3 / 10``, ``3 | Page`` (Word),
or a roman numeral (``iv``, ``Page iv``: front matter). A number that numbers a part of the text is
never the page's, even where it counts with the pages: one after Chapter, Section, Part, Article,
Clause, § … (``Section 3``), one opening the line as a list item or heading number (``3. Scope``,
``(3)``), one inside a dotted or decimal number (``2.3``, ``1,5``); and, where the rest of the line
is not repeated over pages, one opening it before a word (``3 Scope``). Used by the running-line
rules of PDF and text (running_lines.running_line_indices).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ARABIC = "arabic"
ROMAN = "roman"

MAX_ROMAN = 100  # front matter is shorter; larger "numerals" are words (mix, dix, CV)
MAX_LONE_ROMAN = 39  # a lone "l" or "c" is a letter (a figure's part) more often than a page number
MAX_FRONT_PAGES = 8  # pages a file may have before its front matter's page i (cover, half-title, blanks)

# A number not inside a dotted or decimal number ("2.3", "1,5"); one run into a word stays a
# candidate: ConTeXt's running heads come out of pdfium as "13Introduction", "Basics20"
_NUMBER = re.compile(r"(?<!\d[.,])\d+(?![.,]\d)")

# A number right after one of these words numbers a part of the text, not the page ("Section 3",
# "Chapter 2:", "§ 4", "Step 5", "No. 7"), even on pages where it counts with the page.
_NUMBERED_PART = re.compile(
    r"(?:\b(?:chapter|chap|ch|section|sect|sec|subsection|part|subpart|article|art|clause|subclause|step"
    r"|item|appendix|annex|annexe|schedule|exhibit|attachment|lesson|unit|lecture|module|week|day|session"
    r"|stage|phase|level|question|exercise|problem|example|case|task|activity|rule|regulation|reg|table"
    r"|figure|fig|listing|equation|eq|line|slide|paragraph|para|point|note|footnote|theorem|lemma"
    r"|corollary|proposition|definition|remark|volume|vol|book|act|scene|title|division|version|ver"
    r"|release|rev|revision|edition|issue|no|nr|kapitel|abschnitt|artikel|teil|chapitre|capitulo"
    r"|cap[ií]tulo|art[ií]culo|secci[oó]n)\.?|[§#№])\s*$",
    re.IGNORECASE,
)

# A number opening the line as a list item or heading number: "3. Scope", "3) Scope", "(3) The",
# "[3] Smith", "3: Remove" (not "3 / 10", "3 of 10": those are page numbers)
_ENUMERATION = re.compile(r"\s*[(\[]?\d+(?:[.):\]]\s*[^\W\d_]|[)\]])")

_VALID_ROMAN = re.compile(r"(?=.)m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}

_NUMERAL = r"(?:\d{1,5}|[ivxlc]{1,8}|[IVXLC]{1,8})"
# A page label: the whole of a line or of one of its cells (the numeral's case is checked apart)
_PAGE_LABEL = re.compile(
    r"(?i:(?:page|pg|p|seite|p[aá]gina|p[aá]g)\.?\s*)?"
    rf"(?:[-–—]\s*)?(?P<number>{_NUMERAL})(?:\s*[-–—])?"
    rf"(?:\s*(?i:of|/|von|de)\s*{_NUMERAL})?"
    r"(?:\s*\|\s*(?i:p\s*a\s*g\s*e))?"  # Word's "3 | Page"
)


def roman_value(token: str) -> int | None:
    """The value of a roman numeral written all in lower or all in upper case (up to MAX_ROMAN), else None."""
    if not (token.islower() or token.isupper()):
        return None
    lowered = token.lower()
    if not _VALID_ROMAN.fullmatch(lowered):
        return None
    total = 0
    for char, following in zip(lowered, [*lowered[1:], ""], strict=True):
        value = _ROMAN_VALUES[char]
        total += -value if following and _ROMAN_VALUES[following] > value else value
    return total if total <= MAX_ROMAN else None


def page_numbers(line: str) -> list[int]:
    """The arabic numbers of a line that may be its page's number, in order (see the module's doc)."""
    if not any(char.isdigit() for char in line):
        return []
    enumeration = _ENUMERATION.match(line)
    found = []
    for match in _NUMBER.finditer(line):
        if enumeration and match.start() < enumeration.end():
            continue
        if _NUMBERED_PART.search(line, 0, match.start()):
            continue
        found.append(int(match.group()[-9:]))
    return found


_LEADING_NUMBER = re.compile(r"\s*(?:\d+|[ivxlc]+|[IVXLC]+)\s+(?=[^\W\d_])")


def leading_heading_number(text: str) -> int:
    """Where the words start after a number (arabic or roman) that opens ``text`` and is followed by a
    space and a word (``3 Scope``, ``IV Results``: a heading's number; or a running head's page number
    before a title repeated on other pages: ``8 CHAPTER 3. INSTALLATION``); 0 when it does not open so."""
    match = _LEADING_NUMBER.match(text)
    return match.end() if match else 0


def page_label(text: str) -> tuple[str, int] | None:
    """(ARABIC or ROMAN, number) when ``text`` is all a page label (``3``, ``- iv -``, ``Page 3 of 9``)."""
    match = _PAGE_LABEL.fullmatch(text.strip())
    if match is None:
        return None
    number = match.group("number")
    if number.isdigit():
        return ARABIC, int(number)
    value = roman_value(number)
    return (ROMAN, value) if value is not None else None


def lone_page_label(text: str, page: int = 0) -> bool:
    """Whether ``text`` is a page label even without other pages to count with (a one-page document):
    arabic, or roman in lower case ("I", "II" alone number parts as often as pages) where it can number
    the front matter of ``page`` (1-based; 0: not known): no greater than the page's place in the file,
    at most MAX_FRONT_PAGES below it ("xx" ending an example on page 130 is the text's)."""
    match = _PAGE_LABEL.fullmatch(text.strip())
    if match is None:
        return False
    number = match.group("number")
    if number.isdigit():
        return True
    value = roman_value(number) if number.islower() else None
    if value is None or value > MAX_LONE_ROMAN:
        return False
    return not page or 0 <= page - value <= MAX_FRONT_PAGES


def running_head_numbers(text: str, cells: Sequence[str], title_repeats: bool) -> set[tuple[str, int]]:
    """The (style, number) pairs a line in a running head's place may carry as its page's number:
    the whole line when it is a page label (``iv``, ``Page 3 of 9``); else its first and last cell
    when page labels (split at a wide gap: ``iv      Contents``), and the first and last of its
    ``page_numbers`` (``Chapter 2: Installation 3``, ``2 1. Contents``). A number opening the line
    before a word (``3 Scope``, see leading_heading_number) only when the words after it repeat on
    other pages (``title_repeats``): the title of a running head, not a heading of its own."""
    whole = page_label(text)
    if whole is not None:
        return {whole}
    opening = leading_heading_number(text) > 0 and not title_repeats
    found: set[tuple[str, int]] = set()
    if len(cells) > 1:
        first, last = page_label(cells[0]), page_label(cells[-1])
        if first is not None and not opening:
            found.add(first)
        if last is not None:
            found.add(last)
    numbers = page_numbers(text)
    if opening and text.lstrip()[:1].isdigit():
        numbers = numbers[1:]  # (the opening number is the first of them)
    found.update((ARABIC, number) for number in numbers[:1] + numbers[-1:])
    return found
