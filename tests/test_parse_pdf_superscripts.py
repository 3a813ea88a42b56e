"""The footnote-mark candidates a PDF line is checked for: found where they were before the pattern was
rewritten to begin with its digit (a look-behind first cost 9 microseconds a line, most of a line's
reading), so that no parsed text changes."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parse.pdf_superscripts import _CANDIDATE

# The pattern as first written: digits after a letter ("process2"), or before one ("1https").
_AS_WRITTEN = re.compile(r"(?<=[^\W\d_])\d{1,3}(?!\d)|(?<![\w])\d{1,3}(?=[^\W\d_])")

_LINE_CHARS = "ab Z_ 0123456789 ٣٤ é Ω . , ( ) - ²"


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=_LINE_CHARS, max_size=14))
def test_candidates_are_found_where_the_pattern_as_written_finds_them(line: str) -> None:
    assert [m.span() for m in _CANDIDATE.finditer(line)] == [m.span() for m in _AS_WRITTEN.finditer(line)]


def test_candidates_of_lines_a_reader_sees() -> None:
    found = {
        line: [m.group() for m in _CANDIDATE.finditer(line)]
        for line in (
            "the release process2. Older branches",
            "1https://example.org/calendar",
            "V823 and 1234abc and abc1234 and x_1 and 12",
            "Section 3.2 covers 10 items",
        )
    }
    assert found == {
        "the release process2. Older branches": ["2"],
        "1https://example.org/calendar": ["1"],
        "V823 and 1234abc and abc1234 and x_1 and 12": ["823"],
        "Section 3.2 covers 10 items": [],
    }
