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
    page = '<p>Waterproof?</p><div aria-hidden="true">Yes.</div><p>Rating <span aria-hidden="true">IP68</span></p>'
    text = _text(page)
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
        '<div id="respond" class="comment-respond"><h3>Leave a Reply</h3>'
        '<form class="comment-form"><p>Email *</p></form></div>'
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


# ---------------------------------------------------------------------------- pass 12: what pass 11 still lost

ASP_NET_PAGE = (
    b"<html><head><title>Leave</title></head><body>"
    b'<form id="aspnetForm" method="post" action="./leave.aspx">'
    b'<input type="hidden" name="__VIEWSTATE" value="dDw">'
    b'<div class="masthead"><label for="q">Search</label><input type="text" name="q" id="q">'
    b'<input type="submit" value="Go"></div>'
    b"<main><h1>Leave policy</h1><p>Employees file leave requests two weeks ahead of the first day.</p>"
    b"<p>Requests for more than ten days need the approval of the department head and of HR.</p></main>"
    b"</form></body></html>"
)


def test_a_page_wrapped_in_one_form_with_a_search_box_keeps_its_text() -> None:
    # ASP.NET Web Forms wrap the whole page in one <form>; its site search box made it "a search form"
    doc = parse_bytes(ASP_NET_PAGE, "leave.html")
    assert "Employees file leave requests two weeks ahead of the first day." in doc.text
    assert "approval of the department head" in doc.text


def test_a_form_with_a_search_box_and_other_fields_keeps_its_text() -> None:
    text = _text(
        '<form action="/apply"><label>Find a colleague</label><input type="search" name="q">'
        "<p>Fill in your name and the dates; your manager approves within two days.</p>"
        '<label>Your name</label><input name="name"><label>From</label><input type="date" name="from"></form>'
    )
    assert "your manager approves within two days." in text
    assert "Your name" in text


def test_a_search_box_named_by_its_placeholder_or_label_is_dropped() -> None:
    text = _text(
        "<p>Body text.</p>"
        '<form action="/find"><input name="term" placeholder="Search the handbook"><label>Look up</label></form>'
        '<form action="/lookup"><input name="t" aria-label="Site search"><span>Quick find</span></form>'
    )
    assert "Look up" not in text and "Quick find" not in text
    assert "Body text." in text


def test_form_controls_keep_the_words_around_them_apart() -> None:
    text = _text(
        "<div>Leave type<select><option>Annual</option><option>Sick</option></select>Start date"
        "<input type='date'>End date<button>Pick</button>Notes<textarea>Write here</textarea>Done</div>"
        "<div>Before<form>Label <input name='x'></form>after</div>"
    )
    assert "Leave type Start date End date Notes Write here Done" in text, text
    assert "Annual" not in text and "Pick" not in text  # the choices and commands of a control
    assert "Before" in text.split() and "after" in text.split()


def test_a_closed_dialog_with_an_attribute_and_a_hidden_until_found_panel() -> None:
    text = _text(
        '<dialog id="terms" class="policy"><p>Dialog words.</p></dialog>'
        '<div hidden="until-found"><p>Collapsed answer text.</p></div>'
        "<div hidden><p>Gone words.</p></div>"
    )
    assert "Dialog words" not in text and "Gone words" not in text
    assert "Collapsed answer text." in text  # found by the browser's find-in-page: the page's text


def test_wordpress_comment_form_by_its_id() -> None:
    text = _text(
        "<p>Body text.</p>"
        '<div id="respond"><h3 id="reply-title">Leave a Reply</h3><p>Your email address will not be published.</p>'
        '<form id="commentform" action="/wp-comments-post.php"><p><label>Comment</label><textarea></textarea></p>'
        "</form></div>"
    )
    assert "Leave a Reply" not in text and "email address" not in text and "Comment" not in text
    assert "Body text." in text


def test_mathml_keeps_one_copy_the_tex_source() -> None:
    text = _text(
        '<p>Area <span class="katex"><span class="katex-mathml"><math><semantics><mrow><mi>π</mi>'
        "<msup><mi>r</mi><mn>2</mn></msup></mrow>"
        '<annotation encoding="application/x-tex">\\pi r^2</annotation></semantics></math></span>'
        '<span class="katex-html" aria-hidden="true"><span class="base">π r 2 drawn glyphs</span></span></span>'
        " of a circle.</p>"
    )
    assert "Area \\pi r^2 of a circle." in text, text


def test_mathml_without_a_text_annotation_keeps_its_presentation() -> None:
    text = _text(
        "<p>Sum <math><semantics><mrow><mi>x</mi><mo>+</mo><mi>y</mi></mrow>"
        "<annotation-xml encoding='MathML-Content'><apply><plus/><ci>a</ci><ci>b</ci></apply></annotation-xml>"
        "</semantics></math> here.</p>"
    )
    assert "Sum x+y here." in text, text


def test_a_drawn_copy_beside_an_accessible_copy_is_dropped() -> None:
    # MathJax 2 (a drawing in a <nobr> beside its MathML), MathJax 3 (<mjx-math> beside <mjx-assistive-mml>),
    # and a visual copy beside the words given to screen readers
    text = _text(
        '<p>Sum <span class="MathJax"><nobr aria-hidden="true"><span class="math"><span>x</span> <span>+</span> '
        '<span>y</span> drawn</span></nobr><span class="MJX_Assistive_MathML"><math><mi>x</mi><mo>+</mo><mi>y</mi>'
        "</math></span></span> done.</p>"
        '<p>Product <mjx-container jax="CHTML"><mjx-math aria-hidden="true"><mjx-mi>a b</mjx-mi></mjx-math>'
        "<mjx-assistive-mml><math><mi>a</mi><mi>b</mi></math></mjx-assistive-mml></mjx-container> done.</p>"
        '<p>Rated <span aria-hidden="true">four out of five</span><span class="sr-only">4 of 5 stars</span>.</p>'
    )
    assert "Sum x+y done." in text, text
    assert "Product ab done." in text, text
    assert "Rated 4 of 5 stars." in text, text


def test_aria_hidden_blocks_beside_screen_reader_text_are_kept() -> None:
    # an accordion: the collapsed panel (a block) is text a sighted reader opens, whatever is beside it
    text = _text(
        '<div><span class="sr-only">Section collapsed:</span>'
        '<div aria-hidden="true"><p>Unused days carry over until March.</p></div></div>'
    )
    assert "Unused days carry over until March." in text
