"""HTML read otherwise than a browser reads it (attacker pass, session 10):

- text and elements after ``</body>`` or ``</html>`` were dropped (libxml2 leaves them beside the body or in
  a second root), while a browser puts them into the body: a passage a reader sees and the index did not;
- ``<meta property|itemprop|http-equiv="access" content=…>`` was ignored, so inventory.yaml or access.default
  filled the field with a label the author did not write;
- a charset label was decoded by Python's codec of that name (``iso-8859-1``, ``latin1``, ``ascii``: 0x93 a
  C1 control) where browsers decode it by the WHATWG Encoding Standard (windows-1252: 0x93 is “).
"""

from __future__ import annotations

import codecs

import pytest

from ingest.model import ParsedDocument, UnreadableFile
from ingest.parse import parse_bytes, read_metadata
from tests.helpers import search_hits
from tests.test_metadata_read_holes import corpus_with, ingest_cli, refused_on_run, validate_problems


def parse(source: str | bytes) -> ParsedDocument:
    return parse_bytes(source.encode("utf-8") if isinstance(source, str) else source, "page.html")


def outline(doc: ParsedDocument) -> list[tuple[str, str]]:
    return [(block.kind, doc.text[block.start : block.end]) for block in doc.blocks]


FIELDS = '<title>Memo</title><meta name="doc_id" content="memo"><meta name="version" content="1">'


# --- 1. what follows </body> or </html> is read into the body, in document order -----------------------


def test_text_and_elements_after_the_body_and_after_html_are_kept_in_order():
    doc = parse(
        f"<html><head>{FIELDS}</head><body><p>One.</p></body> two words <p>Three.</p></html>\n"
        "<p>Four.</p> five words <ul><li>Six.</li></ul><h2>Seven</h2><p>Eight.</p>\n"
    )
    assert outline(doc) == [
        ("paragraph", "One."),
        ("paragraph", "two words"),
        ("paragraph", "Three."),
        ("paragraph", "Four."),
        ("paragraph", "five words"),
        ("list", "- Six."),
        ("heading", "Seven"),
        ("paragraph", "Eight."),
    ]
    assert doc.metadata == {"doc_id": "memo", "version": "1", "title": "Memo"}


@pytest.mark.parametrize(
    "after",
    [
        "plain words",
        "<p>A passage.</p>",
        "<!-- c --><p>A passage.</p><!-- d -->tail words",
        "<body><p>A second body.</p></body>",
        "<html><p>A second html.</p></html>and words</html><p>A third.</p>",
        '<nav>Menu</nav><div hidden>Secret</div><p>Shown <span style="display:none">not</span> words.</p>',
        "<div class='note'><p>Note title</p><p>Note text.</p></div><dl><dt>Term</dt><dd>Meaning.</dd></dl>",
        "<main><p>A second main region.</p></main>",
    ],
)
@pytest.mark.parametrize("page_main", [False, True], ids=["body", "main"])
def test_what_follows_html_is_read_as_if_written_before_body_ends(after, page_main):
    # a browser's parser puts it at the end of the body: the same blocks as the page that writes it there
    body = (
        "<main><h1>Memo</h1><p>Kept words of the memo, long enough to be its content.</p></main>"
        if page_main
        else "<p>One.</p>"
    )
    inside = parse(f"<html><head>{FIELDS}</head><body>{body}{after}</body></html>")
    for closing in ("</body></html>", "</body>", "</html>"):
        written_after = parse(f"<html><head>{FIELDS}</head><body>{body}{closing}{after}")
        assert (written_after.text, outline(written_after)) == (inside.text, outline(inside)), closing


def test_a_page_with_no_body_before_html_ends_keeps_what_follows():
    doc = parse(f"<html><head>{FIELDS}</head></html>Words after the page.")
    assert doc.text == "Words after the page."


def test_a_passage_after_html_is_found_by_search(tmp_path, store_args):
    corpus = corpus_with(
        tmp_path,
        "memo.html",
        f'<html><head>{FIELDS}<meta name="access" content="public"></head><body><p>Opening.</p></body></html>'
        "<p>The crownjewel passage.</p>",
    )
    done = ingest_cli("run", corpus, "--quiet", *store_args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert search_hits(store_args, "crownjewel", "public") == {"memo"}


def test_a_field_meta_after_html_is_still_refused():
    with pytest.raises(UnreadableFile, match="access: <meta name='access' content='staff'> comes after </html>"):
        parse(f'<html><head>{FIELDS}</head><body><p>x</p></body></html><p>y</p><meta name="access" content="staff">')


# --- 2. a <meta> naming a field by another attribute than name ----------------------------------------------

NAMED_OTHERWISE = [
    ("property", "access", "access"),
    ("itemprop", "access", "access"),
    ("http-equiv", "access", "access"),
    ("property", "Access", "access"),
    ("property", "ACCESS ", "access"),
    ("itemprop", "acc\u200bess", "access"),
    ("property", "acess", "access"),
    ("itemprop", "effective-to", "effective_to"),
    ("property", "effective_from", "effective_from"),
    ("property", "doc_id", "doc_id"),
    ("itemprop", "version", "version"),
    ("property", "title", "title"),
    ("http-equiv", "Status", "status"),
    ("property", "superseded-by", "superseded_by"),
    ("itemprop", "headline access", "access"),
]


@pytest.mark.parametrize(("attribute", "value", "field"), NAMED_OTHERWISE)
def test_a_meta_naming_a_field_by_another_attribute_rejects_the_page(attribute, value, field):
    page = f'<html><head>{FIELDS}<meta {attribute}="{value}" content="staff"></head><body><p>x</p></body></html>'
    for read in (parse, lambda source: read_metadata(source.encode("utf-8"), "page.html")):
        with pytest.raises(UnreadableFile) as raised:
            read(page)
        message = str(raised.value)
        assert message.startswith(f"{field}: <meta {attribute}={value!r} content='staff'>"), message
        assert f"write <meta name={field!r}" in message, message


def test_a_meta_naming_a_field_by_property_after_html_rejects_the_page():
    with pytest.raises(UnreadableFile, match="access: <meta property='access' content='staff'>"):
        parse(f'<html><head>{FIELDS}</head><body><p>x</p></body></html><meta property="access" content="staff">')


def test_the_property_problem_names_the_file_attribute_and_value(tmp_path, store_args):
    page = (
        f'<html><head>{FIELDS}<meta property="access" content="staff"></head>'
        "<body><p>The crownjewel memo.</p></body></html>"
    )
    corpus = corpus_with(tmp_path, "memo.html", page)
    assert validate_problems(corpus) == (
        1,
        [
            "documents/memo.html: unreadable file: access: <meta property='access' content='staff'> gives no "
            "field (only <meta name> does): write <meta name='access' content='staff'> (nothing was guessed)"
        ],
    )
    refused_on_run(corpus, store_args, "memo.html", "<meta property='access' content='staff'> gives no field")


def test_other_properties_and_http_equivs_are_fine():
    page = (
        f'<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">{FIELDS}'
        '<meta http-equiv="X-UA-Compatible" content="IE=edge"><meta http-equiv="refresh" content="30">'
        '<meta property="og:title" content="Memo"><meta property="og:type" content="article">'
        '<meta property="article:published_time" content="2024-01-01"><meta property="article:tag" content="x">'
        '<meta property="description" content="A memo."><meta itemprop="name" content="Memo">'
        '<meta itemprop="datePublished" content="2024-01-01"><meta property="twitter:title" content="Memo">'
        '<meta name="access" content="staff" property="og:description"></head><body><p>x</p></body></html>'
    )
    expected = {"doc_id": "memo", "version": "1", "title": "Memo", "access": "staff"}
    assert parse(page).metadata == expected
    assert read_metadata(page.encode("utf-8"), "page.html") == expected


# --- 3. a charset label decodes as browsers decode it ---------------------------------------------------------

QUOTED = b"<p>\x93Quoted\x94 \x80 5 \x85</p>"  # windows-1252: “Quoted” € 5 …


@pytest.mark.parametrize(
    "declaration",
    [
        b'<meta charset="iso-8859-1">',
        b'<meta charset="latin1">',
        b"<meta charset=ascii>",
        b'<meta charset="US-ASCII">',
        b'<meta charset="windows-1252">',
        b'<meta charset="x-cp1252">',  # a WHATWG label Python does not know (was read as UTF-8)
        b'<meta charset="x-user-defined">',  # a <meta> naming it means windows-1252 (HTML's prescan)
        b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">',
        b'<meta http-equiv="content-type" content="text/html;charset=latin1">',
        b'<?xml version="1.0" encoding="iso-8859-1"?>',
    ],
)
def test_latin1_and_ascii_labels_decode_as_windows_1252(declaration):
    doc = parse(declaration + b"<html><head><title>T</title></head><body>" + QUOTED + b"</body></html>")
    assert doc.text == "\u201cQuoted\u201d \u20ac 5 \u2026"


@pytest.mark.parametrize(
    ("label", "data", "text"),
    [
        ("iso-8859-9", b"\x80 \x8a \xfe", "\u20ac \u0160 \u015f"),  # windows-1254
        ("x-cp1250", b"\x8a\xe1", "\u0160\u00e1"),  # windows-1250 (Python does not know the label)
        ("tis-620", b"\x85 \xa1", "\u2026 \u0e01"),  # windows-874
        ("unicode-1-1-utf-8", "caf\u00e9".encode(), "caf\u00e9"),
        ("iso88592", b"\xa9", "\u0160"),  # iso-8859-2
    ],
)
def test_every_whatwg_label_decodes_by_the_browsers_encoding(label, data, text):
    doc = parse(f'<html><head><meta charset="{label}"></head><body><p>'.encode() + data + b"</p></body></html>")
    assert doc.text == text


def test_bytes_the_browsers_encoding_cannot_read_are_refused_naming_the_label():
    with pytest.raises(UnreadableFile) as raised:
        parse(b'<html><head><meta charset="latin1"></head><body><p>a\x81b</p></body></html>')
    assert str(raised.value).startswith(
        "not windows-1252 text (its declared charset 'latin1', which browsers read as windows-1252): "
    ), raised.value


@pytest.mark.parametrize(
    ("bom", "codec"),
    [(codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")],
)
def test_a_byte_order_mark_decodes_as_browsers_decode_it(bom, codec):
    page = '<html><head><meta charset="iso-8859-1"></head><body><p>\u201cQuoted\u201d caf\u00e9</p></body></html>'
    assert parse(bom + page.encode(codec)).text == "\u201cQuoted\u201d caf\u00e9"


@pytest.mark.parametrize("codec", ["utf-32-le", "utf-32-be"])
def test_a_utf32_byte_order_mark_is_refused_as_browsers_do_not_read_it(codec):
    page = "<html><body><p>caf\u00e9</p></body></html>"
    with pytest.raises(UnreadableFile):
        parse(("\ufeff" + page).encode(codec))


@pytest.mark.parametrize("label", ["iso-2022-cn", "iso-2022-cn-ext", "replacement", "hz-gb-2312", "csiso2022kr"])
def test_every_replacement_label_is_refused_also_one_python_does_not_know(label):
    # a browser shows such a page as one U+FFFD: never read as UTF-8 instead (iso-2022-cn was)
    with pytest.raises(UnreadableFile, match=f"declared charset {label!r} is not decoded .it is a 'replacement' label"):
        parse(f'<html><head><meta charset="{label}"></head><body><p>x</p></body></html>')
