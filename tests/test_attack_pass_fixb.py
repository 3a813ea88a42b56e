"""Attacker pass (fixB): a field named with an unseen character in PDF keywords; an HTML charset label
browsers do not know; a second main region dropped. Each let a document in readable above its access,
or lost part of it, with no problem said."""

from __future__ import annotations

import pytest

from tests.test_metadata_read_holes import corpus_with, pdf_with_xmp, refused_on_run, validate_problems

# --- PDF keywords: a field's name the same way as in every other source -----------------------------------

UNSEEN_NAMES = [
    ("zero-width-space", "confidential; access\u200b=staff;", "access\\u200b=staff"),
    ("word-joiner", "access\u2060=staff;", "access\\u2060=staff"),
    ("soft-hyphen", "acc\u00adess=staff;", "acc\\xadess=staff"),
    ("space-no-sign", "x=1; access staff;", "'access staff'"),
    ("nbsp-no-sign", "manual, access\u00a0staff", "access"),
    ("spaced-name", "acc ess=staff", "'acc ess'"),
    ("near-with-invisible", "acess\u200b=staff", "'acess'"),
]


@pytest.mark.parametrize(("case", "keywords", "shown"), UNSEEN_NAMES, ids=[c[0] for c in UNSEEN_NAMES])
def test_a_keywords_item_naming_a_field_with_unseen_characters_rejects_the_pdf(tmp_path, case, keywords, shown):
    corpus = corpus_with(tmp_path, "memo.pdf", pdf_with_xmp("", keywords=f"doc_id=memo; version=1; {keywords}"))
    code, problems = validate_problems(corpus)
    assert code == 1 and len(problems) == 1, problems
    assert "/Keywords names '" in problems[0] and "in a form not read" in problems[0], problems
    assert shown in problems[0] and "write access=value;" in problems[0], problems


@pytest.mark.parametrize("item", ["effective_to 2020-01-01", "version 2", "status superseded"])
def test_a_keywords_item_giving_a_field_a_value_without_a_sign_rejects_the_pdf(tmp_path, item):
    corpus = corpus_with(tmp_path, "memo.pdf", pdf_with_xmp("", keywords=f"doc_id=memo; access=public; {item};"))
    code, problems = validate_problems(corpus)
    name = item.split()[0]
    assert code == 1 and f"/Keywords names {name!r} in a form not read" in problems[0], problems
    assert f"write {name}=value;" in problems[0], problems


def test_an_xmp_keyword_naming_a_field_with_a_zero_width_space_rejects_the_pdf(tmp_path, store_args):
    data = pdf_with_xmp("<pdf:Keywords>doc_id=memo; version=1; access\u200b=staff</pdf:Keywords>")
    corpus = corpus_with(tmp_path, "memo.pdf", data)
    refused_on_run(corpus, store_args, "memo.pdf", "the XMP pdf:Keywords names 'access' in a form not read")


@pytest.mark.parametrize(
    "keywords",
    ["TeX, LaTeX, pdfTeX, LuaTeX, XeTeX, internationalization, localization", "Texdoc, TeX Live, manual",
     "LaTeX PSNFSS PostScript fonts", "key=value parser; tag; title", "control of access, versions",
     "access control; status report; version control; title page", "access control lists, effective date"],
)  # fmt: skip
def test_ordinary_keywords_stay_keywords(tmp_path, keywords):
    data = pdf_with_xmp("", keywords=f"doc_id=memo; version=1; access=public; {keywords}")
    assert validate_problems(corpus_with(tmp_path, "memo.pdf", data)) == (0, [])


# --- HTML: a charset label browsers do not read the page by --------------------------------------------

STAFF_META = '<title>Pay</title><meta name="doc_id" content="pay"><meta name="version" content="1">' \
    '<meta name="access" content="staff">'
LABELS = [
    ("meta-charset", f'<html><head><meta charset="cp037">{STAFF_META}</head><body><p>Salary bands.</p></body></html>',
     "cp037"),
    ("xml-declaration", f'<?xml version="1.0" encoding="cp037"?><html><head>{STAFF_META}</head><body><p>x</p></body>'
     "</html>", "cp037"),
    ("http-equiv", '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ebcdic-cp-us">'
     f"{STAFF_META}</head><body><p>x</p></body></html>", "ebcdic-cp-us"),
    ("utf-7", f'<html><head><meta charset="utf-7">{STAFF_META}</head><body><p>x</p></body></html>', "utf-7"),
    ("replacement", f'<html><head><meta charset="hz-gb-2312">{STAFF_META}</head><body><p>x</p></body></html>',
     "hz-gb-2312"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "page", "label"), LABELS, ids=[c[0] for c in LABELS])
def test_a_charset_label_browsers_do_not_read_by_rejects_the_page(tmp_path, store_args, case, page, label):
    corpus = corpus_with(tmp_path, "pay.html", page.replace("Salary", "crownjewel Salary"))
    refused_on_run(corpus, store_args, "pay.html", f"unreadable file: declared charset {label!r} is not")


@pytest.mark.parametrize("label", ["windows-1252", "ISO-8859-1", "latin1", "utf-16", "x-nowhere"])
def test_a_charset_label_browsers_read_by_or_ignore_is_read(label):
    from ingest.parse import parse_bytes

    page = f'<html><head><meta charset="{label}"><title>T</title></head><body><p>Salary bands.</p></body></html>'
    assert "Salary bands." in parse_bytes(page.encode("ascii"), "page.html").text


# --- HTML: a second main region ------------------------------------------------------------------------

HEAD = '<html><head><title>T</title><meta name="doc_id" content="p"><meta name="version" content="1"></head><body>'


@pytest.mark.parametrize(
    "body",
    ["<main><h1>Overview</h1><p>Alpha words.</p></main><main><h1>Refunds</h1><p>Refunds in 14 days.</p></main>",
     '<div role="main"><p>Alpha words.</p></div><main><h1>Refunds</h1><p>Refunds in 14 days.</p></main>'],
    ids=["two-main", "role-main-and-main"],
)  # fmt: skip
def test_every_main_region_of_a_page_is_kept_in_order(body):
    from ingest.parse import parse_bytes

    text = parse_bytes(f"{HEAD}<nav><p>Menu</p></nav>{body}</body></html>".encode(), "page.html").text
    assert "Alpha words." in text and "Refunds in 14 days." in text, text
    assert text.index("Alpha words.") < text.index("Refunds in 14 days.") and "Menu" not in text, text


def test_one_main_with_a_role_main_inside_is_still_the_content():
    from ingest.parse import parse_bytes

    page = f'{HEAD}<header><p>Site name</p></header><main><div role="main"><p>Body text.</p></div></main></body>'
    assert parse_bytes(page.encode(), "page.html").text.strip() == "Body text."
