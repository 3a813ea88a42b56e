"""Effective dates are taken as written: a space, tab, newline or no-break space around the date is a
bad date naming the file, field and value, never the stripped date, from front matter, inventory.yaml,
HTML <meta> and PDF fields alike. A YAML block scalar ending the front matter keeps its line break, as
it does anywhere else, so ``access: |`` + ``staff`` is refused like ``access: "staff\\n"``."""

from __future__ import annotations

import io
import json

import pytest
from pypdf import PdfReader, PdfWriter
from reportlab.pdfgen import canvas

from tests.helpers import ingest_cli

HINT = "expected YYYY-MM-DD with no space or control character around it"
BAD_DATES = [" 2025-01-01", "2025-01-01 ", "2025-01-01\t", "2025-01-01\n", "2025-01-01\u00a0", "\u20032025-01-01"]


def validate(corpus) -> dict:
    done = ingest_cli("validate", corpus, "--json")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return json.loads(done.stdout)


def problems(corpus) -> dict[str, list[str]]:
    return {p["source"]: p["problems"] for p in validate(corpus)["problems"]}


def yaml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


@pytest.mark.parametrize("field", ["effective_from", "effective_to"])
def test_a_front_matter_date_with_space_around_it_is_refused(tmp_path, field):
    docs = tmp_path / "documents"
    docs.mkdir(parents=True)
    for number, bad in enumerate(BAD_DATES):
        (docs / f"d{number}.md").write_text(
            f'---\ndoc_id: d{number}\nversion: "1"\ntitle: T\naccess: public\n{field}: {yaml_string(bad)}\n---\nbody\n',
            encoding="utf-8",
        )
    (docs / "ok.md").write_text(
        f'---\ndoc_id: ok\nversion: "1"\ntitle: T\naccess: public\n{field}: "2025-01-01"\n---\nbody\n', encoding="utf-8"
    )
    found = problems(tmp_path)
    for number, bad in enumerate(BAD_DATES):
        source = f"documents/d{number}.md"
        assert found[source] == [f"{source}: {field}: bad date {bad!r}: {HINT}"]
    assert "documents/ok.md" not in found


def test_an_inventory_or_html_date_with_space_around_it_is_refused(tmp_path):
    docs = tmp_path / "documents"
    docs.mkdir(parents=True)
    (docs / "inv.txt").write_text("body\n", encoding="utf-8")
    (tmp_path / "inventory.yaml").write_text(
        'inv.txt: {doc_id: inv, version: "1", title: T, access: public, effective_to: "2025-01-01\\t"}\n',
        encoding="utf-8",
    )
    (docs / "page.html").write_text(
        '<html><head><title>T</title><meta name="doc_id" content="page"><meta name="version" content="1">'
        '<meta name="access" content="public"><meta name="effective_from" content=" 2025-01-01">'
        "</head><body><p>body</p></body></html>",
        encoding="utf-8",
    )
    found = problems(tmp_path)
    assert found["documents/inv.txt"] == [f"documents/inv.txt: effective_to: bad date '2025-01-01\\t': {HINT}"]
    assert found["documents/page.html"] == [f"documents/page.html: effective_from: bad date ' 2025-01-01': {HINT}"]


def test_a_pdf_date_field_with_space_around_it_is_refused(tmp_path):
    docs = tmp_path / "documents"
    docs.mkdir(parents=True)
    page = io.BytesIO()
    pdf = canvas.Canvas(page)
    pdf.drawString(72, 720, "A page of text.")
    pdf.save()
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(page.getvalue())))
    writer.add_metadata({"/Title": "T", "/doc_id": "pdf", "/version": "1", "/access": "public",
                         "/effective_to": "2025-01-01\u00a0"})  # fmt: skip
    out = io.BytesIO()
    writer.write(out)
    (docs / "a.pdf").write_bytes(out.getvalue())
    found = problems(tmp_path)
    assert f"documents/a.pdf: effective_to: bad date '2025-01-01\\xa0': {HINT}" in found["documents/a.pdf"]


@pytest.mark.parametrize(
    "access",
    ["access: |\n  staff", 'access: "staff\\n"', "access: |\n  staff\ntags: [a]", "access: >\n  staff"],
)
def test_a_block_scalar_label_is_refused_like_the_quoted_one(tmp_path, access):
    docs = tmp_path / "documents"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text(f'---\ndoc_id: a\nversion: "1"\ntitle: T\n{access}\n---\nbody\n', encoding="utf-8")
    assert problems(tmp_path) == {
        "documents/a.md": ["documents/a.md: access: contains control or bidi-override characters: 'staff\\n'"]
    }


def test_a_folded_title_is_trimmed_as_every_title_is(tmp_path):
    docs = tmp_path / "documents"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text('---\ndoc_id: a\nversion: "1"\naccess: public\ntitle: >\n  Rate card\n---\nbody\n')
    assert validate(tmp_path)["valid"] == 1
    parsed = json.loads(ingest_cli("parse", docs / "a.md", "--json").stdout)
    assert parsed["metadata"]["title"] == "Rate card\n"  # as YAML reads it; validation trims a title
