"""Plain-text parsing: cleaning (running lines, hyphens, blank runs) and heading styles."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse import parse_bytes, parse_file

FIXTURES = Path(__file__).parent / "fixtures" / "parse"


def outline(doc: ParsedDocument) -> list[tuple[str, str, int, tuple[str, ...]]]:
    return [(b.kind, doc.text[b.start : b.end], b.level, b.heading_path) for b in doc.blocks]


def txt(source: str) -> ParsedDocument:
    return parse_bytes(source.encode("utf-8"), "notes.txt")


def test_handbook_fixture_with_form_feed_pages() -> None:
    doc = parse_file(FIXTURES / "handbook.txt")
    assert doc.format == "text"
    scope, returns = ("1. Scope",), ("1. Scope", "2.3 Returns")
    assert outline(doc) == [
        ("heading", "WARRANTY POLICY", 1, ("WARRANTY POLICY",)),
        ("paragraph", "The warranty regulation applies to all products sold in the EU.", 0, ("WARRANTY POLICY",)),
        ("heading", "1. Scope", 1, scope),
        ("paragraph", "This policy covers laptops.", 0, scope),
        ("heading", "2.3 Returns", 2, returns),
        ("list", "- Items must be unused\n- Receipts are required", 0, returns),
        ("heading", "Overview", 1, ("Overview",)),
        ("paragraph", "All good.", 0, ("Overview",)),
        ("heading", "Details", 2, ("Overview", "Details")),
        ("paragraph", "More text.", 0, ("Overview", "Details")),
    ]
    assert "ACME HANDBOOK" not in doc.text and "- 2 -" not in doc.text
    assert "\n\n\n" not in doc.text


def test_front_matter_read_and_removed() -> None:
    doc = txt("---\ndoc_id: notes\nversion: 2\n---\nHello there.\n")
    assert doc.metadata == {"doc_id": "notes", "version": "2"}
    assert doc.text == "Hello there."


def test_hyphen_joined_only_before_lower_case() -> None:
    doc = txt("The regu-\nlation of Anglo-\nSaxon law\nand self-\n  service.\n")
    assert doc.text == "The regulation of Anglo- Saxon law and selfservice."


def test_running_header_and_page_numbers_without_form_feeds() -> None:
    source = (
        "ACME Handbook\nFirst page text ends here.\nPage 1 of 3\n"
        "ACME Handbook\nSecond page text con-\nPage 2 of 3\n"
        "ACME Handbook\ntinues on page three.\nPage 3 of 3\n"
    )
    doc = txt(source)
    assert outline(doc) == [
        ("paragraph", "First page text ends here.", 0, ()),
        ("paragraph", "Second page text continues on page three.", 0, ()),
    ]


def test_repeated_content_lines_are_kept_without_page_numbers() -> None:
    doc = txt("Yes\n\nYes\n\nYes\n")
    assert doc.text == "Yes\n\nYes\n\nYes"


def test_blank_runs_collapsed_and_paragraph_lines_joined() -> None:
    doc = txt("one\ntwo   words\n\n\n\n\nthree\n")
    assert outline(doc) == [("paragraph", "one two words", 0, ()), ("paragraph", "three", 0, ())]


def test_heading_styles() -> None:
    source = (
        "GENERAL TERMS\n\nIntro.\n\n"
        "Scope\n=====\nScope text.\n\n"
        "Limits\n------\nLimit text.\n\n"
        "3. Returns Policy\n\nReturn text.\n\n"
        "3.1 Exceptions\n\nException text.\n\n"
        "1. apples\n2. pears\n\n"
        "NOT A HEADING BECAUSE IT ENDS WITH A PERIOD.\n"
    )
    doc = txt(source)
    assert [(b.kind, doc.text[b.start : b.end], b.level) for b in doc.blocks if b.kind == "heading"] == [
        ("heading", "GENERAL TERMS", 1),
        ("heading", "Scope", 1),
        ("heading", "Limits", 2),
        ("heading", "3. Returns Policy", 1),
        ("heading", "3.1 Exceptions", 2),
    ]
    assert doc.blocks[-1].heading_path == ("3. Returns Policy", "3.1 Exceptions")
    assert doc.text.endswith("1. apples 2. pears\n\nNOT A HEADING BECAUSE IT ENDS WITH A PERIOD.")


def test_list_markers_and_continuations() -> None:
    doc = txt("Intro\n- a\n* b\n\u2022 c\n  more c\n\n- d\nAfter.\n")
    assert outline(doc) == [
        ("paragraph", "Intro", 0, ()),
        ("list", "- a\n* b\n\u2022 c more c\n- d", 0, ()),
        ("paragraph", "After.", 0, ()),
    ]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xff\xfeh\x00i\x00", "binary file"),
        (b"caf\xe9", "not UTF-8"),
        (b"\n\n  \n", "no text"),
        (b"---\n: : :\n---\ntext", "front matter is not valid YAML"),
    ],
)
def test_unreadable_text(data: bytes, reason: str) -> None:
    with pytest.raises(UnreadableFile, match=reason):
        parse_bytes(data, "a.txt")


def test_dot_leader_lines_form_a_table_across_a_page_break() -> None:
    source = (
        "ACME Manual\n2. Specifications\n-----------------\n"
        "Idle speed ........ 850 rpm\nMaximum speed ..... 3,000 rpm\n"
        "\n                Page 1 of 3\nACME Manual\n\n"
        "Coolant ........... 50/50 mix\n\nA single line ........ is not a table.\n"
        "\n                Page 2 of 3\nACME Manual\nEnd.\n\n                Page 3 of 3\n"
    )
    doc = txt(source)
    assert outline(doc) == [
        ("heading", "2. Specifications", 1, ("2. Specifications",)),
        ("table", "Idle speed | 850 rpm\nMaximum speed | 3,000 rpm\nCoolant | 50/50 mix", 0, ("2. Specifications",)),
        ("paragraph", "A single line ........ is not a table.", 0, ("2. Specifications",)),
        ("paragraph", "End.", 0, ("2. Specifications",)),
    ]


def test_underlined_numbered_heading_takes_its_number_depth() -> None:
    doc = txt("1. Scope\n========\nText.\n\n1.2 Detail\n==========\nMore.\n")
    assert [(b.level, b.heading_path) for b in doc.blocks if b.kind == "heading"] == [
        (1, ("1. Scope",)),
        (2, ("1. Scope", "1.2 Detail")),
    ]


def test_caps_and_numbered_lines_are_headings_only_when_they_stand_alone() -> None:
    source = (
        "LICENCE\n\n"
        "THE SOFTWARE IS PROVIDED AS IS\nWITHOUT WARRANTY OF ANY KIND\n\n"
        "Steps:\n\n1. Open the case\n2. Remove the fan\n\n"
        "SAFETY\nNever work on a running engine.\n\n"
        "2. Fees\n\nThe fee is due on arrival.\n"
    )
    doc = txt(source)
    assert [doc.text[b.start : b.end] for b in doc.blocks if b.kind == "heading"] == ["LICENCE", "2. Fees"]
    assert "THE SOFTWARE IS PROVIDED AS IS WITHOUT WARRANTY OF ANY KIND" in doc.text
    assert "SAFETY Never work on a running engine." in doc.text


def test_every_restructuredtext_adornment_makes_a_heading_levels_in_order_of_use() -> None:
    source = (
        "#####\nGuide\n#####\n\nIntro.\n\n"
        "Install\n=======\n\nText.\n\n"
        "From source\n-----------\n\nMore.\n\n"
        "Options\n^^^^^^^\n\nSome.\n\n"
        "Flags\n~~~~~\n\nFew.\n\n"
        "Upgrade\n^^^^^^^\n\nAgain.\n\n"
        "Notes\n\"\"\"\"\"\n\nLast.\n"
    )
    doc = txt(source)
    assert [(doc.text[b.start : b.end], b.level) for b in doc.blocks if b.kind == "heading"] == [
        ("Guide", 1),
        ("Install", 1),  # = and - keep levels 1 and 2
        ("From source", 2),
        ("Options", 3),  # other underlines: 3, 4, ... in order of first use
        ("Flags", 4),
        ("Upgrade", 3),
        ("Notes", 5),
    ]
    assert doc.blocks[-1].heading_path == ("Install", "From source", "Upgrade", "Notes")
    for char in "=-`:'\"~^_*+#<>":
        heading = txt(f"Title\n{char * 5}\n\nBody.\n").blocks[0]
        assert heading.kind == "heading", char


def test_indented_and_fenced_code_keep_their_line_breaks() -> None:
    source = (
        "Run this::\n\n    make\n    make install\n\n        sudo ldconfig\n\n"
        "Then:\n\n```\nif x:\n    y()\n```\n\nDone.\n"
    )
    doc = txt(source)
    assert outline(doc) == [
        ("paragraph", "Run this::", 0, ()),
        ("code", "make\nmake install\n\n    sudo ldconfig", 0, ()),
        ("paragraph", "Then:", 0, ()),
        ("code", "if x:\n    y()", 0, ()),
        ("paragraph", "Done.", 0, ()),
    ]


def test_text_indented_throughout_is_prose_not_code() -> None:
    doc = txt("    First paragraph\n    goes on.\n\n    Second one.\n")
    assert outline(doc) == [
        ("paragraph", "First paragraph goes on.", 0, ()),
        ("paragraph", "Second one.", 0, ()),
    ]


def test_grid_and_simple_tables_are_written_row_by_row() -> None:
    grid = (
        "+--------+-------------+\n"
        "| Option | Meaning     |\n"
        "+========+=============+\n"
        "| -v     | Say more    |\n"
        "|        | as it runs. |\n"
        "+--------+-------------+\n"
        "| -q     | Say less.   |\n"
        "+--------+-------------+\n"
    )
    simple = "=====  ======\nName   Value\n=====  ======\nidle   850\nmax    3000\n=====  ======\n"
    doc = txt(grid + "\n" + simple + "\nAfter.\n")
    assert outline(doc) == [
        ("table", "Option | Meaning\n-v | Say more as it runs.\n-q | Say less.", 0, ()),
        ("table", "Name | Value\nidle | 850\nmax | 3000", 0, ()),
        ("paragraph", "After.", 0, ()),
    ]


def test_restructuredtext_literal_and_doctest_blocks_are_code() -> None:
    source = (
        "Example::\n\n   for x in range(3):\n       print(x)\n\nAnd in the shell:\n\n"
        ">>> if x < 0:\n...     x = 0\n...\n>>> x\n0\n\nEnd.\n"
    )
    doc = txt(source)
    assert outline(doc) == [
        ("paragraph", "Example::", 0, ()),
        ("code", "for x in range(3):\n    print(x)", 0, ()),
        ("paragraph", "And in the shell:", 0, ()),
        ("code", ">>> if x < 0:\n...     x = 0\n...\n>>> x\n0", 0, ()),
        ("paragraph", "End.", 0, ()),
    ]
