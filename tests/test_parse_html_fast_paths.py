"""The HTML parser's shortcuts give what their plain definitions give.

The source is cleaned as UTF-8 bytes (not decoded, cleaned and encoded again), and hidden
elements are looked for only among the tag names a hiding attribute is written in; here
each is held against the plain way on generated pages (well-formed tags: the scan does not
claim to read hiding attributes in broken markup such as ``<y hidden<div>`` or ``style=display:none``
written without quotes, which it misses as it always did).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.model import UnreadableFile
from ingest.parse._common import normalise_newlines, strip_controls
from ingest.parse.html_hidden import _hidden, _hidden_elements
from ingest.parse.html_rules import _name
from ingest.parse.html_source import _decode, _tree

PIECES = st.sampled_from(
    [
        "<p>",
        "</p>",
        "text",
        "é",
        "日本",
        "\r\n",
        "\r",
        "\n",
        "\t",
        "\x01",
        "\x0b",
        "\x0c",
        "\x1f",
        "\x7f",
        "\x85",
        "\xa0",
        "\u2028",
        "<meta charset='latin-1'>",
        '<meta charset="utf-8">',
        "\xff",
        "\xc3",
        "\xef\xbb\xbf",
    ]
)


def plain_decode(data: bytes) -> bytes:
    """The definition: decode (BOM, declared charset as browsers read it, else strict UTF-8), clean the
    text, encode."""
    from bs4.dammit import EncodingDetector

    from ingest.parse.html_source import _byte_order_mark, _charset_named, _usable_encoding, _why_no_charset

    text_data, encoding = _byte_order_mark(data)
    declared = None
    if encoding is None:
        if b"\x00" in data:
            raise UnreadableFile("binary file")
        declared = EncodingDetector.find_declared_encoding(data, is_html=True)
        encoding = _usable_encoding(declared)
    if encoding is not None and encoding.name != "utf-8":
        try:  # strictly, as the README says: never text with U+FFFD
            text = encoding.codec_info.decode(text_data)[0]
        except UnicodeDecodeError as exc:
            raise UnreadableFile(
                f"not {encoding.name} text ({_charset_named(declared, encoding)}): {exc.reason} at byte {exc.start}"
            ) from None
    else:
        try:
            text = text_data.decode("utf-8")
        except UnicodeDecodeError:
            raise UnreadableFile("not UTF-8 text" + ("" if encoding else _why_no_charset(data, declared))) from None
    if "\x00" in text:
        raise UnreadableFile("binary file")
    return strip_controls(normalise_newlines(text)).encode("utf-8")


def outcome(function, data: bytes) -> object:
    try:
        return function(data)
    except UnreadableFile as exc:
        return ("refused", str(exc))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(PIECES, st.binary(max_size=3)), max_size=20))
def test_the_source_is_cleaned_as_the_decoded_text_would_be(pieces: list[str | bytes]) -> None:
    data = b"".join(
        p if isinstance(p, bytes) else p.encode("latin-1" if "\xff" in p or "\xc3" in p or "\xef" in p else "utf-8")
        for p in pieces
    )
    assert outcome(_decode, data) == outcome(plain_decode, data)


ATTRIBUTES = st.sampled_from(
    [
        "hidden",
        "HIDDEN",
        "hidden=''",
        "aria-hidden='true'",
        'ARIA-HIDDEN = "TRUE"',
        "aria-hidden=false",
        "role=navigation",
        "role = 'Banner'",
        "role=main",
        "style='display:none'",
        'style="color:red; DISPLAY : NONE"',
        "style='visibility: hidden'",
        "style='display:block'",
        "class=x",
        "data-hidden=1",
        "title='hidden'",
    ]
)
SPACES = st.sampled_from([" ", "  ", "\n", "\t", "\xa0", "\u3000", " \xa0"])
TAGS = st.sampled_from(["div", "p", "span", "section", "DIV", "my-el", "li", "a"])


@st.composite
def pages(draw: st.DrawFn) -> str:
    parts = ["<html><body>"]
    for _ in range(draw(st.integers(1, 12))):
        tag = draw(TAGS)
        attributes = "".join(draw(SPACES) + draw(ATTRIBUTES) for _ in range(draw(st.integers(0, 3))))
        text = draw(st.sampled_from(["words", "hidden", "role=navigation", "x < y hidden", "é"]))
        opening = f"<{tag} {attributes}>"  # an ASCII space ends the tag name (U+00A0 would be part of it)
        parts.append(f"{opening}{text}</{tag}>" if draw(st.booleans()) else f"{opening}{text}")
    return "".join(parts)


@settings(max_examples=400, deadline=None)
@given(pages())
def test_the_hidden_elements_found_are_all_the_hidden_elements(page: str) -> None:
    source = _decode(page.encode("utf-8"))
    tree = _tree(source)
    assert tree is not None
    body = tree.find("body")
    body = tree if body is None else body
    every = {node for node in body.iter() if _name(node) and _hidden(node)}
    assert _hidden_elements(source, body) == every
