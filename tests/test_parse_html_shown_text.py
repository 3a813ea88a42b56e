"""Text a browser shows on the page is in the parsed text (attacker pass 10, finding 02): a table's
``<caption>`` was dropped (never indexed, the run silent), and so were the text labels of an inline SVG
drawing. Form controls (``<button>``, ``<select>``/``<option>``) stay dropped: their labels are commands
and choices of the page's interface, not passages.
"""

from __future__ import annotations

import pytest

from ingest.model import ParsedDocument
from ingest.parse import parse_bytes
from tests.helpers import search_hits
from tests.test_metadata_read_holes import corpus_with, ingest_cli

FIELDS = '<title>Prices</title><meta name="doc_id" content="prices"><meta name="version" content="1">'


def parse(body: str) -> ParsedDocument:
    return parse_bytes(f"<html><head>{FIELDS}</head><body>{body}</body></html>".encode(), "page.html")


def outline(doc: ParsedDocument) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(block.kind, doc.text[block.start : block.end], block.heading_path) for block in doc.blocks]


PRICES = (
    "<h1>Price list</h1><p>Our prices are below.</p>"
    "<table><caption>Prices valid only until 31 March 2025</caption>"
    "<tr><th>Item</th><th>Price</th></tr><tr><td>Widget</td><td>12.50</td></tr></table>"
    "<p>After the table.</p>"
)


def test_a_table_caption_is_the_first_line_of_its_table_under_the_heading():
    assert outline(parse(PRICES)) == [
        ("heading", "Price list", ("Price list",)),
        ("paragraph", "Our prices are below.", ("Price list",)),
        ("table", "Prices valid only until 31 March 2025\nItem | Price\nWidget | 12.50", ("Price list",)),
        ("paragraph", "After the table.", ("Price list",)),
    ]


CAPTIONED = "<table><caption>Captionword</caption><tr><td>cell</td></tr></table>"
KEPT = {
    "caption": CAPTIONED,
    "caption of a table in a list item": f"<ul><li>item{CAPTIONED}</li></ul>",
    "caption of a table in a note": f'<div class="note">{CAPTIONED}</div>',
    "caption of a table in a definition": f"<dl><dt>term</dt><dd>{CAPTIONED}</dd></dl>",
    "caption of a nested table": f"<table><tr><td>{CAPTIONED}</td></tr></table>",
    "caption after the rows": "<table><tr><td>cell</td></tr><caption>Captionword</caption></table>",
    "figcaption": '<figure><img src="a.png"><figcaption>Captionword</figcaption></figure>',
    "summary and details": "<details><summary>Captionword</summary><p>Detailword</p></details>",
    "legend": "<fieldset><legend>Captionword</legend><label>Detailword</label></fieldset>",
    "label": '<label for="x">Captionword</label>',
    "nested table cells": "<table><tr><td><table><tr><th>Captionword</th><td>Detailword</td></tr></table></td></tr>"
    "</table>",
    "dt and dd": "<dl><dt>Captionword</dt><dd>Detailword</dd></dl>",
    "blockquote": "<blockquote>Captionword</blockquote>",
    "pre": "<pre>Captionword</pre>",
    "svg text": '<svg viewBox="0 0 9 9"><title>tip</title><text x="1">Captionword</text></svg>',
    "svg tspan": "<svg><text><tspan>Captionword</tspan> <tspan>Detailword</tspan></text></svg>",
}


@pytest.mark.parametrize("body", KEPT.values(), ids=KEPT.keys())
def test_text_a_browser_shows_is_kept_as_a_word_of_its_own(body):
    words = parse(f"<p>Before.</p>{body}<p>After.</p>").text.split()
    assert "Captionword" in words
    assert "Detailword" in words or "Detailword" not in body
    assert words[0] == "Before." and words[-1] == "After."  # in document order


DROPPED = {
    "button": "<button>Copy</button>",
    "option": "<select><option>English</option></select>",
    "hidden caption": "<table><caption hidden>Copy</caption><tr><td>cell</td></tr></table>",
    "svg title and style": "<svg><title>Copy</title><style>English{}</style><desc>Copy</desc></svg>",
    "hidden svg": '<svg aria-hidden="true"><text>Copy</text></svg>',
    "hidden table row": '<table><tr><td>cell</td></tr><tr style="display:none"><td>Copy</td></tr></table>',
    "hidden row group": "<table><tbody hidden><tr><td>Copy</td></tr></tbody><tr><td>cell</td></tr></table>",
    "hidden table cell": "<table><tr><td>cell</td><td hidden>Copy</td></tr></table>",
}


@pytest.mark.parametrize("body", DROPPED.values(), ids=DROPPED.keys())
def test_controls_and_text_not_shown_stay_dropped(body):
    text = parse(f"<p>Before.</p>{body}<p>After.</p>").text
    assert "Copy" not in text and "English" not in text


def test_a_table_caption_is_found_by_search_on_sqlite(tmp_path):
    corpus = corpus_with(tmp_path, "prices.html", f"<html><head>{FIELDS}</head><body>{PRICES}</body></html>")
    store_args = ["--store", f"sqlite:///{tmp_path / 'index.sqlite'}"]
    done = ingest_cli("run", corpus, "--quiet", *store_args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert search_hits(store_args, "March 2025", "public") == {"prices"}
