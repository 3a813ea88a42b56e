"""Attacker passes 12 and 13 on HTML: an edit's deleted and inserted words stay apart, a rowspan cell is
read into every row it spans, an open cookie or consent notice is not the page's text (a real open dialog
is), and hidden tab panels are (a reader opens them); no control character, raw C1 or written as a
character reference, reaches the text of HTML, plain text or Markdown."""

from __future__ import annotations

import unicodedata

import pytest

from ingest.parse import parse_bytes


def _text(body: str) -> str:
    page = f"<html><head><title>T</title></head><body>{body}</body></html>"
    return parse_bytes(page.encode(), "page.html").text


def test_deleted_and_inserted_words_stay_apart() -> None:
    text = _text("<main><h1>W</h1><p>Warranty lasts <del>24</del><ins>36</ins> months.</p></main>")
    assert "2436" not in text
    assert "Warranty lasts 24 36 months." in text  # both kept (nothing lost), never one new number
    assert "was <s>$50</s> $40" not in _text("<p>was <s>$50</s>$40 now</p>")
    assert "was $50 $40 now" in _text("<p>was <s>$50</s>$40 now</p>")


def test_a_rowspan_cell_is_read_into_every_row_it_spans() -> None:
    text = _text(
        "<main><h1>Rates</h1><table><tr><th>Tier</th><th>Boat</th><th>Rate</th></tr>"
        '<tr><td rowspan="2">Gold</td><td>under 6 m</td><td>5%</td></tr><tr><td>over 6 m</td><td>7%</td></tr>'
        "<tr><td>Silver</td><td>any</td><td>3%</td></tr></table></main>"
    )
    rows = ["Tier | Boat | Rate", "Gold | under 6 m | 5%", "Gold | over 6 m | 7%", "Silver | any | 3%"]
    assert text.splitlines()[-4:] == rows


def test_a_rowspan_in_a_middle_column_and_after_a_colspan() -> None:
    text = _text(
        "<table><tr><td>a</td><td rowspan=3>B</td><td>c</td></tr><tr><td>d</td><td>e</td></tr>"
        '<tr><td>f</td><td>g</td></tr><tr><td colspan="2">h</td><td rowspan="2">I</td></tr>'
        "<tr><td>j</td><td>k</td></tr>"
        "</table>"
    )
    assert text.splitlines() == ["a | B | c", "d | B | e", "f | B | g", "h | I", "j | k | I"]


def test_a_rowspan_ends_with_its_row_group() -> None:
    text = _text(
        "<table><thead><tr><th rowspan=5>Head</th><th>x</th></tr></thead>"
        "<tbody><tr><td>1</td><td>2</td></tr></tbody></table>"
    )
    assert text.splitlines() == ["Head | x", "1 | 2"]


@pytest.mark.parametrize(
    "notice",
    [
        '<div id="cookie-notice" role="dialog" aria-modal="true" aria-label="Cookie consent"><p>We use cookies to '
        "improve your experience. Accept all cookies?</p><button>Accept</button></div>",
        '<div role="dialog" aria-modal="true"><p>This site uses cookies. Manage your preferences.</p></div>',
        '<dialog open class="consent"><p>We and our partners store data on your device.</p></dialog>',
        '<div class="cookie-banner"><p>By using this site you agree to our use of cookies.</p></div>',
        '<div id="CybotCookiebotDialog" role="region"><p>This website uses cookies.</p></div>',
    ],
)
def test_an_open_cookie_or_consent_notice_is_dropped(notice: str) -> None:
    text = _text(f"{notice}<h1>Refunds</h1><p>Refunds take thirty days.</p>")
    assert "cookie" not in text.lower() and "partners" not in text
    assert "Refunds take thirty days." in text


def test_a_real_open_dialog_and_a_page_about_cookies_are_kept() -> None:
    text = _text(
        '<div role="dialog" aria-modal="true" aria-label="Shipping"><p>Orders ship in two days.</p></div>'
        "<h1>Cookies</h1><p>We use cookies to remember your cart.</p>"
        '<section id="cookie-policy"><p>Session cookies expire when you close the browser.</p></section>'
        '<div class="recipe"><p>Bake the cookies for twelve minutes.</p></div>'
    )
    for words in ("Orders ship", "remember your cart", "Session cookies expire", "Bake the cookies"):
        assert words in text


def test_hidden_tab_panels_and_until_found_sections_are_kept() -> None:
    text = _text(
        '<main><h1>Install</h1><ul role="tablist"><li role="tab">Linux</li><li role="tab">Windows</li></ul>'
        '<div role="tabpanel"><p>Run apt install acme on Linux.</p></div>'
        '<div role="tabpanel" hidden=""><p>Run the MSI installer on Windows.</p></div>'
        '<div role="tabpanel" style="display: none"><p>Run brew on macOS.</p></div>'
        '<h2>Torque</h2><div hidden="until-found"><p>Tighten to forty newton metres.</p></div>'
        "<div hidden><p>A template never shown.</p></div></main>"
    )
    for words in ("MSI installer", "brew on macOS", "forty newton"):
        assert words in text
    assert "template" not in text


def _controls(text: str) -> set[str]:
    return {c for c in text if unicodedata.category(c) == "Cc" and c not in "\n\t" or c in "\u2028\u2029"}


FRONT = '---\ndoc_id: a\nversion: "1"\ntitle: A\naccess: public\n---\n'


@pytest.mark.parametrize(
    ("name", "page"),
    [
        ("a.txt", FRONT + "Intro.\n\nkoala\u0080one \u009b31mred\u0090end.\n"),
        ("b.md", FRONT + "# H\n\nkoala\u0085two\u009bx \u0090y.\n"),
        ("c.html", "<html><body><main><p>koala\u0080three \u009f.</p></main></body></html>"),
    ],
)
def test_no_c1_control_reaches_the_text(name: str, page: str) -> None:
    text = parse_bytes(page.encode(), name).text
    assert not _controls(text), repr(text)
    assert "koala" in text


def test_c1_controls_dropped_from_a_page_in_a_legacy_charset() -> None:
    page = b'<html><head><meta charset="iso-8859-2"></head><body><p>al\x81pha \x9bbeta</p></body></html>'
    assert parse_bytes(page, "p.html").text == "alpha beta"


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>alpha&#1;beta &#27;[31m red&#127; x&#8;y</p>", "alphabeta [31m red xy"),
        ("<pre><code>alpha&#x2028;beta&#11;zeta&#12;eta&#x0d;iota</code></pre>", "alpha beta zeta eta iota"),
        ("<p>en&#150;dash &#x96; &#129;x &#X1F;y &#x1c</p>", "en\u2013dash \u2013 x y"),
        ("<p>keep &#160;&#8217; &amp;#1; &#10;</p>", "keep \u2019 &#1;"),
    ],
)
def test_character_references_to_controls_never_reach_the_text(html: str, expected: str) -> None:
    text = _text(html)
    assert not _controls(text), repr(text)
    assert text == expected
