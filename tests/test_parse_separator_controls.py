"""Separator controls (vertical tab, form feed, the file/group/record/unit separators, NEL, U+2028 and
U+2029) keep the words on either side apart in every format, and no control character reaches a chunk."""

from __future__ import annotations

import pytest

from ingest.parse import parse_bytes

SEPARATORS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028", "\u2029"]


def _pages(separator: str) -> dict[str, bytes]:
    words = f"Alpha words{separator}beta words"
    return {
        "t.txt": f"{words}\n\nGamma.\n".encode(),
        "t.md": f"# Head\n\n{words}\n\nGamma.\n".encode(),
        "t.html": f"<html><head><title>T</title></head><body><p>{words}</p></body></html>".encode(),
    }


@pytest.mark.parametrize("separator", SEPARATORS, ids=[f"U+{ord(s):04X}" for s in SEPARATORS])
@pytest.mark.parametrize("name", ["t.txt", "t.md", "t.html"])
def test_a_separator_keeps_two_words_apart(separator: str, name: str) -> None:
    doc = parse_bytes(_pages(separator)[name], name)
    assert "words beta" in doc.text, repr(doc.text)
    assert separator not in doc.text


@pytest.mark.parametrize("name", ["t.txt", "t.md", "t.html"])
def test_no_control_character_reaches_the_text(name: str) -> None:
    doc = parse_bytes(_pages("\x01\x07\x1b")[name], name)
    assert not any(ord(c) < 0x20 and c not in "\n\t" for c in doc.text), repr(doc.text)
    assert "Alpha words" in doc.text
    assert all(0 <= block.start < block.end <= len(doc.text) for block in doc.blocks)
