"""Text a reader sees is kept: inside a <form> (a policy page wrapped in one, a fieldset's explanations)
and under aria-hidden (collapsed panels and tabs); a site's search box, a comment form, a closed dialog, a
modal and icons are not the page's text."""

from __future__ import annotations

from ingest.parse import parse_bytes


def _text(body: str) -> str:
    page = f"<html><head><title>T</title></head><body><main><h1>Leave</h1>{body}</main></body></html>"
    return parse_bytes(page.encode(), "page.html").text


def test_text_inside_a_form_is_kept() -> None:
    text = _text(
        '<form action="/apply"><fieldset><legend>Before you apply</legend>'
        "<p>Requests need two weeks notice.</p></fieldset><label>Your name</label><input name='n'></form>"
    )
    assert "Before you apply" in text
    assert "Requests need two weeks notice." in text
    assert "Your name" in text


def test_a_page_wrapped_in_a_form_is_not_empty() -> None:
    page = b"<html><head><title>P</title></head><body><form><h1>Policy</h1><p>Employees file leave early.</p></form>"
    assert "Employees file leave early." in parse_bytes(page, "p.html").text


def test_a_page_wrapped_in_one_form_with_the_site_search_is_kept() -> None:
    # ASP.NET WebForms and SharePoint wrap the whole page, its search box included, in one <form>
    page = (
        b"<html><head><title>P</title></head><body><form id='aspnetForm'><input name='q' type='search'>"
        b"<main><h1>Travel policy</h1><p>Economy class on flights under six hours.</p></main></form></body></html>"
    )
    assert "Economy class on flights under six hours." in parse_bytes(page, "p.html").text


def test_a_form_with_a_lookup_box_keeps_its_explanations() -> None:
    text = _text(
        '<form><fieldset><legend>Claim</legend><p>Claims need the receipt and the serial number.</p>'
        '<input type="search" name="model"></fieldset></form>'
    )
    assert "Claims need the receipt and the serial number." in text


def test_a_one_word_answer_under_aria_hidden_is_text() -> None:
    text = _text('<p>Waterproof?</p><div aria-hidden="true">Yes.</div><p>Rating <span aria-hidden="true">IP68</span></p>')
    assert "Yes." in text
    assert "IP68" in text


def test_text_under_aria_hidden_is_kept_but_icons_are_not() -> None:
    text = _text(
        '<div class="panel" aria-hidden="true"><p>Carry-over days expire in March.</p></div>'
        '<p>Open <i class="material-icons" aria-hidden="true">open_in_new</i> the form.</p>'
    )
    assert "Carry-over days expire in March." in text
    assert "open_in_new" not in text
    assert "Open the form." in text


def test_site_chrome_forms_and_closed_dialogs_are_dropped() -> None:
    text = _text(
        "<p>Body text.</p>"
        '<form action="/find"><input type="search" name="term"><p>Search the site</p></form>'
        '<form action="/find"><input name="q"><p>Find pages</p></form>'
        "<search><p>landmark words</p></search>"
        '<div id="respond" class="comment-respond"><h3>Leave a Reply</h3><form class="comment-form"><p>Email *</p></form></div>'
        "<dialog><p>Cookie banner text.</p></dialog><dialog open><p>Open dialog text.</p></dialog>"
        '<div class="modal fade" aria-hidden="true"><p>Sign in to continue now.</p></div>'
        '<datalist id="x"><option value="Alpha option"></option></datalist>'
    )
    for chrome in ("Search the site", "Find pages", "landmark", "Leave a Reply", "Email", "Cookie", "Sign in", "Alpha"):
        assert chrome not in text, chrome
    assert "Body text." in text
    assert "Open dialog text." in text


def test_katex_keeps_one_copy_of_a_formula() -> None:
    text = _text(
        '<p>Area <span class="katex"><span class="katex-mathml"><math><semantics><mrow><mi>r</mi></mrow>'
        '<annotation encoding="application/x-tex">\\pi r^2</annotation></semantics></math></span>'
        '<span class="katex-html" aria-hidden="true"><span class="base">π r 2 drawn glyphs</span></span></span>.</p>'
    )
    assert "drawn glyphs" not in text
