"""Fields a file declares are never lost to the inventory's values (outside re-check, session 7): a field
after YAML's `...` end marker, front matter behind a first line that only looks blank (NBSP, zero-width
space, an HTML comment), a field name spelled with a ligature or sharp s (`eﬀective_to`, `acceß`), and
`access: staff` written with a colon in a PDF's /Keywords were each dropped, and the document went in
with the inventory's `access: public` or without its end date."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from reportlab.pdfgen import canvas


def ingest(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ingest.cli", *map(str, args)], capture_output=True, text=True)


def public_hits(store_args: list[str], query: str) -> set[str]:
    done = ingest("search", query, "--role", "public", "--json", *store_args)
    assert done.returncode == 0, done.stdout + done.stderr
    return {hit["doc_id"] for hit in json.loads(done.stdout)["hits"]}


def corpus_with(tmp_path: Path, name: str, text: str) -> Path:
    corpus = tmp_path / "corpus"
    (corpus / "documents").mkdir(parents=True)
    (corpus / "documents" / name).write_text(text, encoding="utf-8")
    (corpus / "documents" / "ok.md").write_text(
        "---\ndoc_id: ok-doc\nversion: '1'\ntitle: Ok\naccess: public\n---\nzebracorn text\n", encoding="utf-8"
    )
    inventory = f"{name}: {{doc_id: memo, version: '1', title: Memo, access: public}}\n"
    (corpus / "inventory.yaml").write_text(inventory, encoding="utf-8")
    return corpus


FIELDS = "doc_id: memo\nversion: '1'\ntitle: Memo\n"
HIDDEN = [
    ("after-end-marker.md", f"---\n{FIELDS}...\naccess: staff\n---\ncrownjewel text\n", "follows it"),
    ("nbsp-first.md", f"\u00a0\n---\n{FIELDS}access: staff\n---\ncrownjewel text\n", "must start on the first line"),
    ("zwsp-first.txt", f"\u200b---\n{FIELDS}access: staff\n---\ncrownjewel text\n", "must start on the first line"),
    ("comment-first.md", f"<!-- c -->\n---\n{FIELDS}access: staff\n---\ncrownjewel text\n", "must start on the first"),
    # second re-check: other ways to hide the fields from the front matter
    ("long-comment.md", f"<!--\nnote\n-->\n---\n{FIELDS}access: staff\n---\ncrownjewel\n", "must start on the first"),
    ("filler-first.md", f"\u3164\n---\n{FIELDS}access: staff\n---\ncrownjewel text\n", "must start on the first"),
    ("tag-char.txt", f"\U000e0001---\n{FIELDS}access: staff\n---\ncrownjewel text\n", "must start on the first"),
    ("link-comment.md", f"[//]: # (draft)\n---\n{FIELDS}access: staff\n---\ncrownjewel\n", "must start on the first"),
    ("entity-first.md", f"&nbsp;\n---\n{FIELDS}access: staff\n---\ncrownjewel text\n", "must start on the first"),
    ("yaml-directive.md", f"%YAML 1.2\n---\n{FIELDS}access: staff\n---\ncrownjewel\n", "YAML directives"),
    ("fence-comment.md", f"--- # meta\n{FIELDS}access: staff\n---\ncrownjewel text\n", "not a plain '---' line"),
    ("comment-after-end.md", f"---\n{FIELDS}...\n#c\naccess: staff\n---\ncrownjewel text\n", "follows it"),
    ("field-after-close.md", f"---\n{FIELDS}---\naccess: staff\n\ncrownjewel text\n", "follows the front matter"),
    ("second-block.md", f"---\n{FIELDS}---\n---\naccess: staff\n---\ncrownjewel\n", "a second front matter block"),
]


@pytest.mark.parametrize(("name", "text", "problem"), HIDDEN, ids=[h[0] for h in HIDDEN])
def test_a_field_hidden_from_the_front_matter_rejects_the_file(tmp_path, store_args, name, text, problem):
    corpus = corpus_with(tmp_path, name, text)

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert [p["source"] for p in data["problems"]] == [f"documents/{name}"]
    assert problem in data["problems"][0]["problems"][0]
    assert public_hits(store_args, "crownjewel") == set()
    assert public_hits(store_args, "zebracorn") == {"ok-doc"}


@pytest.mark.parametrize(
    "text",
    [
        "# Rules\n\ntext\n\n---\n\nNote: a plain paragraph\n",
        "<!-- toc -->\n# Title\n\ntext\n\n---\n\nNote: fine\n",
        "<!--\n  licence text\n-->\n# Title\n\nSetext\n---\n",
    ],
)
def test_ordinary_markdown_with_rules_and_comments_is_still_valid(tmp_path, text):
    corpus = corpus_with(tmp_path, "rule.md", text)
    done = ingest("validate", corpus, "--json")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("written", "value"),
    [("acceß", "staff"), ("ACCEẞ", "staff"), ("eﬀective_to", "2020-01-01")],
)
def test_a_field_name_written_with_a_ligature_or_sharp_s_is_the_field(tmp_path, store_args, written, value):
    text = f"---\n{FIELDS}{written}: {value}\n---\ncrownjewel text\n"
    corpus = corpus_with(tmp_path, "memo.md", text)

    done = ingest("run", corpus, "--json", *store_args)

    # read as the field: it disagrees with the inventory's access (a problem), or ends the memo in 2020
    data = json.loads(done.stdout)
    if "access" in written.casefold().replace("ß", "ss"):
        assert done.returncode == 1, done.stdout + done.stderr
        assert "file has 'staff' but inventory.yaml has 'public'" in json.dumps(data["problems"]), data
    else:
        assert done.returncode == 0, done.stdout + done.stderr
    assert public_hits(store_args, "crownjewel") == set()


@pytest.mark.parametrize(
    "keywords",
    [
        "doc_id=memo; version=1; access: staff;",
        "manual, effective_to=2020-01-01, access=staff",
        "foo, access: staff, bar",
        "foo\naccess: staff",
        '"access": "staff";',
        "access \uff1d staff",
    ],
)
def test_a_keywords_field_in_a_form_not_read_is_refused(tmp_path, keywords):
    corpus = tmp_path / "corpus"
    (corpus / "documents").mkdir(parents=True)
    pdf = canvas.Canvas(str(corpus / "documents" / "memo.pdf"))
    pdf.setTitle("Memo")
    pdf.setKeywords(keywords)
    pdf.drawString(72, 720, "crownjewel text on the page.")
    pdf.save()
    (corpus / "inventory.yaml").write_text("memo.pdf: {access: public}\n", encoding="utf-8")

    done = ingest("validate", corpus, "--json")

    assert done.returncode == 1, done.stdout + done.stderr
    [record] = json.loads(done.stdout)["problems"]
    assert "/Keywords names '" in record["problems"][0] and "in a form not read" in record["problems"][0], record
