"""Metadata a file gives that was read otherwise, or not at all (attacker pass, session 9): each let a
document in under inventory.yaml's `access: public` while the file said more.

- HTML: a `<meta name="access">` after `</html>` (libxml2 puts it beside the page; a browser in its body);
  a `<meta>` with two `name` or two `content` attributes (lxml keeps the first, BeautifulSoup the last);
- a field given empty (`access:` in front matter, `content=""`, `/access ()`) filled by inventory.yaml
  or access.default;
- PDF: `access=staff` in the XMP packet's pdf:Keywords (only /Keywords was read); `/Subject (access:
  staff)` and a `/Keywords` item in colon form next to a read `access=` pair, dropped as words.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from pypdf import PdfWriter
from reportlab.pdfgen import canvas

from tests.helpers import ingest_cli, pdf_with_xmp_packet, search_hits, xmp_packet

FIELDS_HTML = '<title>Memo</title><meta name="doc_id" content="memo"><meta name="version" content="1">'


def html_page(head: str = "", body: str = "", after: str = "") -> str:
    return f"<html><head>{FIELDS_HTML}{head}</head><body><p>The crownjewel memo.</p>{body}</body></html>{after}"


def corpus_with(tmp_path: Path, name: str, data: str | bytes, entry: str = "{access: public}", toml: str = "") -> Path:
    """A corpus of the file ``name`` (inventory.yaml giving it ``entry``) and one ordinary public document."""
    corpus = tmp_path / "corpus"
    (corpus / "documents").mkdir(parents=True)
    path = corpus / "documents" / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    (corpus / "documents" / "ok.md").write_text(
        "---\ndoc_id: ok-doc\nversion: '1'\ntitle: Ok\naccess: public\n---\nzebracorn text\n", encoding="utf-8"
    )
    (corpus / "inventory.yaml").write_text(f"{name}: {entry}\n", encoding="utf-8")
    if toml:
        (corpus / "ingest.toml").write_text(toml, encoding="utf-8")
    return corpus


def refused_on_run(corpus: Path, store_args: list[str], name: str, problem: str) -> None:
    """The run rejects ``name`` with ``problem`` in its message; its text reaches no role, the other file is in."""
    done = ingest_cli("run", corpus, "--json", *store_args)
    assert done.returncode == 1, done.stdout + done.stderr
    [record] = json.loads(done.stdout)["problems"]
    assert record["source"] == f"documents/{name}", record
    assert any(problem in message for message in record["problems"]), record
    for role in ("public", "staff"):
        assert search_hits(store_args, "crownjewel", role) == set()
    assert search_hits(store_args, "zebracorn", "public") == {"ok-doc"}


def validate_problems(corpus: Path) -> tuple[int, list[str]]:
    done = ingest_cli("validate", corpus, "--json")
    data = json.loads(done.stdout)
    return done.returncode, [message for record in data["problems"] for message in record["problems"]]


# --- HTML: a <meta> after </html>, or with a repeated attribute -----------------------------------------

AFTER_HTML = [
    ("after-html", html_page(after='<meta name="access" content="staff">')),
    ("after-html-comment", html_page(after='<!-- x --><html><head><meta name="Access" content="staff">')),
    ("after-html-body", html_page(after='<body><p>more</p><meta name="effective-to" content="2020-01-01">')),
]


@pytest.mark.parametrize(("case", "page"), AFTER_HTML, ids=[c[0] for c in AFTER_HTML])
def test_a_field_meta_after_the_closing_html_tag_rejects_the_page(tmp_path, store_args, case, page):
    corpus = corpus_with(tmp_path, "memo.html", page)
    refused_on_run(corpus, store_args, "memo.html", "comes after </html>, where HTML readers differ")


def test_the_after_html_problem_names_the_file_field_and_value(tmp_path):
    corpus = corpus_with(tmp_path, "memo.html", AFTER_HTML[0][1])
    code, problems = validate_problems(corpus)
    assert code == 1
    assert problems == [
        "documents/memo.html: unreadable file: access: <meta name='access' content='staff'> comes after </html>, "
        "where HTML readers differ on whether it is the page's (move it into <head>; nothing was guessed)"
    ]


@pytest.mark.parametrize(
    "page",
    [
        html_page(body='<meta name="access" content="staff">'),
        html_page().replace("</body>", '</body><meta name="access" content="staff">'),
    ],
    ids=["in-body", "after-body"],
)
def test_metas_in_the_body_and_after_the_body_are_read_as_in_the_head(tmp_path, page):
    corpus = corpus_with(tmp_path, "memo.html", page)
    assert validate_problems(corpus) == (
        1,
        ["documents/memo.html: access: file has 'staff' but inventory.yaml has 'public'"],
    )


REPEATED = [
    ("two-names-two-contents", '<meta name="access" name="x" content="public" content="staff">', "name 2 times"),
    ("field-name-second", '<meta name="x" name="access" content="staff">', "name 2 times ('x' and 'access')"),
    ("content-upper-case", "<meta name=access content=public CONTENT=staff>", "content 2 times ('public' and 'staff')"),
    ("over-lines", '<meta\n name="access"\n content="public"\n content="staff"\n>', "content 2 times"),
    ("no-space-after-values", '<meta name="access"content="public"content="staff">', "content 2 times"),
    ("slashes", "<meta/name='access'/content='public'/content='staff'/>", "content 2 times"),
    ("tabs-and-form-feeds", '<meta\tname=access\x0ccontent=public\tcontent = staff>', "content 2 times"),
    ("beside-http-equiv", '<meta http-equiv="Content-Type" name="access" content="public" content="staff">', "content 2 times"),
]


@pytest.mark.parametrize(("case", "meta", "problem"), REPEATED, ids=[c[0] for c in REPEATED])
def test_a_meta_with_a_repeated_name_or_content_rejects_the_page(tmp_path, store_args, case, meta, problem):
    corpus = corpus_with(tmp_path, "memo.html", html_page(head=meta))
    refused_on_run(corpus, store_args, "memo.html", f"a <meta> gives {problem}")


def test_repeated_attributes_outside_a_field_meta_are_no_problem(tmp_path):
    page = html_page(
        head='<meta name="access" content="public"><meta name="viewport" name="x" content="a" content="b">',
        body='<!-- <meta name="access" content="public" content="staff"> -->'
        '<script>var s = "<meta name=access content=public content=staff>";</script>',
    )
    corpus = corpus_with(tmp_path, "memo.html", page)
    assert validate_problems(corpus) == (0, [])


# --- a field given empty is given: never filled -----------------------------------------------------------

FRONT = "doc_id: memo\nversion: '1'\ntitle: Memo\n"


def pdf_with_info(info: dict[str, str], title: str = "Memo") -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.setTitle(title)
    pdf.drawString(72, 720, "The crownjewel memo on the page.")
    pdf.save()
    writer = PdfWriter(clone_from=io.BytesIO(buffer.getvalue()))
    writer.add_metadata(info)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


EMPTY = [
    ("memo.md", f"---\n{FRONT}access:\n---\ncrownjewel memo\n", "access: is empty (null)"),
    ("memo.md", f"---\n{FRONT}access: ''\n---\ncrownjewel memo\n", "access: is empty ('')"),
    ("memo.txt", f"---\n{FRONT}access: ~\n---\ncrownjewel memo\n", "access: is empty (null)"),
    ("memo.html", html_page(head='<meta name="access" content="">'), "access: is empty ('')"),
    ("memo.html", html_page(head='<meta name="access" content="  ">'), "access: is empty ('  ')"),
    ("memo.html", html_page(head='<meta name="access">'), "access: is empty ('')"),
    ("memo.pdf", pdf_with_info({"/doc_id": "memo", "/version": "1", "/access": ""}), "access: is empty ('')"),
]


@pytest.mark.parametrize(("name", "data", "problem"), EMPTY, ids=[f"{e[0]}-{i}" for i, e in enumerate(EMPTY)])
def test_an_access_given_empty_is_not_filled_by_the_inventory(tmp_path, store_args, name, data, problem):
    corpus = corpus_with(tmp_path, name, data)
    refused_on_run(corpus, store_args, name, f"{problem} in the file but inventory.yaml has 'public'")


def test_an_access_given_empty_is_not_filled_by_access_default(tmp_path, store_args):
    corpus = corpus_with(
        tmp_path, "memo.md", f"---\n{FRONT}access:\n---\ncrownjewel memo\n", entry="{}",
        toml='[access]\ndefault = "partner"\n',
    )  # fmt: skip
    refused_on_run(corpus, store_args, "memo.md", "access: is empty (null): access.default fills only a file")


GIVEN_EMPTY = [  # field, its inventory value in YAML, as the problem shows it
    ("effective_to", "2020-01-01", "2020-01-01"),  # (a date, as YAML reads it)
    ("status", "superseded", "'superseded'"),
    ("tags", "[secret]", "['secret']"),
    ("doc_id", "memo", "'memo'"),
    ("title", "Memo", "'Memo'"),
]


@pytest.mark.parametrize(("field", "value", "shown"), GIVEN_EMPTY, ids=[g[0] for g in GIVEN_EMPTY])
def test_any_field_given_empty_disagrees_with_the_inventory_value(tmp_path, field, value, shown):
    front = "".join(line + "\n" for line in FRONT.splitlines() if not line.startswith(f"{field}:"))
    entry = (
        f"{{access: public, superseded_by: x@1, {field}: {value}}}"
        if field == "status"
        else f"{{access: public, {field}: {value}}}"
    )
    corpus = corpus_with(tmp_path, "memo.md", f"---\n{front}{field}:\n---\ncrownjewel memo\n", entry=entry)
    code, problems = validate_problems(corpus)
    assert code == 1
    assert (
        f"documents/memo.md: {field}: is empty (null) in the file but inventory.yaml has {shown} (nothing was filled in"
        in "\n".join(problems)
    ), problems


def test_an_empty_optional_field_with_nothing_to_fill_it_stays_unset(tmp_path):
    text = f"---\n{FRONT}access: public\nsuperseded_by:\neffective_to: ''\ntags: []\n---\ncrownjewel memo\n"
    corpus = corpus_with(tmp_path, "memo.md", text, entry="{}")
    assert validate_problems(corpus) == (0, [])


def test_an_empty_pdf_title_entry_is_no_title(tmp_path):
    # producers (hyperref) write /Title () by default: it states nothing, and the inventory's title fills it
    data = pdf_with_info({"/doc_id": "memo", "/version": "1", "/access": "public"}, title="")
    corpus = corpus_with(tmp_path, "memo.pdf", data, entry="{title: Memo}")
    assert validate_problems(corpus) == (0, [])


# --- PDF: XMP keywords read like /Keywords; /Subject naming a field ----------------------------------------


def memo_writer(title: str = "Memo", keywords: str | None = None, subject: str | None = None) -> PdfWriter:
    """A one-page crownjewel memo with these information entries, to add to and write out."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.setTitle(title)
    if keywords is not None:
        pdf.setKeywords(keywords)
    if subject is not None:
        pdf.setSubject(subject)
    pdf.drawString(72, 720, "The crownjewel memo on the page.")
    pdf.save()
    return PdfWriter(clone_from=io.BytesIO(buffer.getvalue()))


def pdf_with_xmp(description: str, keywords: str | None = None, subject: str | None = None, about: str = "") -> bytes:
    writer = memo_writer(keywords=keywords, subject=subject)
    if description:
        packet = xmp_packet(
            f'<rdf:Description rdf:about="{about}" xmlns:pdf="http://ns.adobe.com/pdf/1.3/" '
            f'xmlns:dc="http://purl.org/dc/elements/1.1/">{description}</rdf:Description>'
        )
        return pdf_with_xmp_packet(writer, packet)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


XMP_KEYWORDS = "<pdf:Keywords>doc_id=memo; version=1; access=staff</pdf:Keywords>"


@pytest.mark.parametrize("about", ["", "uuid:6a3f"])
def test_a_field_in_the_xmp_keywords_is_read_like_keywords(tmp_path, store_args, about):
    corpus = corpus_with(tmp_path, "memo.pdf", pdf_with_xmp(XMP_KEYWORDS, about=about))
    refused_on_run(corpus, store_args, "memo.pdf", "access: file has 'staff' but inventory.yaml has 'public'")


def test_a_field_only_the_xmp_keywords_give_is_indexed_under_it(tmp_path, store_args):
    corpus = corpus_with(tmp_path, "memo.pdf", pdf_with_xmp(XMP_KEYWORDS), entry="{}")
    done = ingest_cli("run", corpus, "--json", *store_args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert search_hits(store_args, "crownjewel", "public") == set()
    assert search_hits(store_args, "crownjewel", "staff") == {"memo"}


XMP_REFUSED = [
    ("disagrees", pdf_with_xmp(XMP_KEYWORDS, keywords="doc_id=memo; version=1; access=public"),
     "PDF metadata gives access twice: 'public' in /Keywords and 'staff' in the XMP pdf:Keywords"),
    ("subject-bag", pdf_with_xmp("<dc:subject><rdf:Bag><rdf:li>memo</rdf:li><rdf:li>access: staff</rdf:li>"
                                 "</rdf:Bag></dc:subject>"),
     "the XMP dc:subject names 'access' in a form not read ('access: staff')"),
    ("info-subject", pdf_with_xmp("", subject="access: staff"),
     "/Subject names 'access' in a form not read ('access: staff'): no field is read from it"),
    ("xmp-description", pdf_with_xmp('<dc:description><rdf:Alt><rdf:li xml:lang="x-default">Memo, access=staff'
                                     "</rdf:li></rdf:Alt></dc:description>"),
     "the XMP dc:description names 'access' in a form not read"),
    ("colon-item-beside-a-pair", pdf_with_xmp("", keywords="access=public; see access: staff"),
     "/Keywords names 'access' in a form not read ('see access: staff')"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "data", "problem"), XMP_REFUSED, ids=[c[0] for c in XMP_REFUSED])
def test_a_field_named_in_xmp_or_subject_otherwise_than_read_rejects_the_pdf(tmp_path, store_args, case, data, problem):
    corpus = corpus_with(tmp_path, "memo.pdf", data, entry="{doc_id: memo, version: '1', access: public}")
    refused_on_run(corpus, store_args, "memo.pdf", problem)


def bag(*items: str) -> str:
    return "<dc:subject><rdf:Bag>" + "".join(f"<rdf:li>{item}</rdf:li>" for item in items) + "</rdf:Bag></dc:subject>"


@pytest.mark.parametrize(
    ("keywords", "description"),
    [
        ("doc_id=memo; version=1; access=public",
         "<pdf:Keywords>doc_id=memo; version=1; access=public</pdf:Keywords>"
         + bag("doc_id=memo", "version=1", "access=public")),
        # Acrobat copies /Keywords into dc:subject split at commas too: a copy, not a second value of tags
        ("doc_id=memo; version=1; tags=a, b; access=public",
         bag("doc_id=memo", "version=1", "tags=a", "b", "access=public")),
    ],
    ids=["same-text", "acrobat-split"],
)  # fmt: skip
def test_xmp_keywords_agreeing_with_keywords_and_ordinary_subjects_are_fine(tmp_path, keywords, description):
    data = pdf_with_xmp(description, keywords=keywords, subject="Hyphenation patterns for LaTeX (HO)")
    corpus = corpus_with(tmp_path, "memo.pdf", data)
    assert validate_problems(corpus) == (0, [])


# --- low items: messages say what happened, `ingest parse` shows names as read ------------------------------


LATE = b"<html><head><title>T</title></head><body>" + b"<p>text</p>" * 400 + b'<meta charset="latin-1">'
NOT_UTF8 = "not UTF-8 text, and its "


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (LATE + b"<p>caf\xe9</p>",
         NOT_UTF8 + "charset declaration ('latin-1') comes too late to be read: declare it in the first 1024 bytes"),
        (b'<meta charset="x-nowhere"><p>caf\xe9</p>', NOT_UTF8 + "declared charset 'x-nowhere' is not one"),
        (b'<meta charset="utf-16"><p>caf\xe9</p>', NOT_UTF8 + "declared charset 'utf-16' is ignored without a byte"),
        (b"<p>caf\xe9</p>", "not UTF-8 text and no charset declared"),
    ],
)  # fmt: skip
def test_an_unread_charset_says_why_it_was_not_used(data, reason):
    from ingest.model import UnreadableFile
    from ingest.parse import parse_bytes

    with pytest.raises(UnreadableFile) as raised:
        parse_bytes(data, "page.html")
    assert str(raised.value).startswith(reason), raised.value


def test_parse_shows_each_field_under_its_name_as_read(tmp_path):
    path = tmp_path / "memo.pdf"
    path.write_bytes(pdf_with_xmp("", keywords="doc_id=memo; version=1; Effective-To=2020-01-01; access=staff"))
    done = ingest_cli("parse", path, "--no-text")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "  effective_to: 2020-01-01  (written 'effective-to')" in lines, done.stdout
    assert "  access: staff" in lines and not any(line.startswith("  effective-to") for line in lines)


def test_a_stored_version_is_withdrawn_when_its_file_empties_its_access(tmp_path, store_args):
    # the folder no longer says who may read it: the stored public version must not outlive that
    corpus = corpus_with(tmp_path, "memo.md", f"---\n{FRONT}access: public\n---\ncrownjewel memo\n")
    first = ingest_cli("run", corpus, "--json", *store_args)
    assert first.returncode == 0, first.stdout + first.stderr
    assert search_hits(store_args, "crownjewel", "public") == {"memo"}
    (corpus / "documents" / "memo.md").write_text(f"---\n{FRONT}access:\n---\ncrownjewel memo, edited\n")
    refused_on_run(corpus, store_args, "memo.md", "access: is empty (null) in the file but inventory.yaml has")
