"""An unknown field whose words name an access, status, date or superseded field (``access_level:
staff``, ``effectiveDate``, ``doc_status``) is refused with the file, the name and the value: dropped
silently, the document would be indexed under the default label, in force on every day or as active."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ingest.metadata import resolve_metadata
from ingest.settings import Settings

BASE = {"doc_id": "pay", "version": "1", "title": "Pay"}


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("access_level", "access"),
        ("Access-Label", "access"),
        ("accessLevel", "access"),
        ("accesslevel", "access"),
        ("access_role", "access"),
        ("doc_status", "status"),
        ("statusCode", "status"),
        ("effective_date", "effective_from"),
        ("effectiveDate", "effective_from"),
        ("effective", "effective_from"),
        ("effective_until", "effective_to"),
        ("effective-end", "effective_to"),
        ("superseded", "superseded_by"),
        ("acc\u200bess_level", "access"),  # an invisible character inside the word
        ("doc_st\u2060atus", "status"),
        ("DC.accessRights", "access"),
        ("dcterms.accessrights", "access"),
        ("docaccess", "access"),
        ("docstatus", "status"),
        ("supersedes", "superseded_by"),
    ],
)
def test_a_field_named_like_a_guarded_one_is_refused(name: str, field: str) -> None:
    meta, problems, _ = resolve_metadata("documents/pay.md", {**BASE, "access": "staff", name: "x"}, None, Settings())
    assert meta is None
    assert any(
        p.startswith(f"documents/pay.md: {name}: unknown field, named like {field!r}, given 'x'") for p in problems
    ), problems


def test_an_inventory_entry_is_read_the_same_way() -> None:
    meta, problems, _ = resolve_metadata(
        "documents/pay.md", {**BASE, "access": "staff"}, {"access_level": "public"}, Settings()
    )
    assert meta is None
    assert any("inventory.yaml: access_level: unknown field, named like 'access'" in p for p in problems), problems


@pytest.mark.parametrize(
    "name",
    [
        "description",
        "keywords",
        "author",
        "accessibility",
        "statusbar",
        "generator",
        "robots",
        "summary",
        "apple-mobile-web-app-status-bar-style",  # iOS pages
        "citation_access_date",  # Highwire / Google Scholar
        "effectiveness",
        "cost_effectiveness",
        "effectively",
    ],
)
def test_ordinary_fields_stay_ignored(name: str) -> None:
    meta, problems, _ = resolve_metadata("documents/pay.md", {**BASE, "access": "staff", name: "x"}, None, Settings())
    assert meta is not None, problems


def test_a_custom_field_of_the_settings_is_not_a_lookalike() -> None:
    settings = Settings(required=("doc_id", "version", "title", "access", "review_status"))
    fields = {**BASE, "access": "staff", "review_status": "approved"}
    meta, problems, _ = resolve_metadata("documents/pay.md", fields, None, settings)
    assert meta is not None, problems


def _validate(corpus: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "ingest", "validate", str(corpus), "--json"], capture_output=True, text=True
    )
    assert done.returncode == 1, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_default_label_never_replaces_a_label_written_under_another_name(tmp_path: Path) -> None:
    # With access.default, an ignored `access_level: staff` made a staff document partner-readable.
    (tmp_path / "documents").mkdir()
    (tmp_path / "ingest.toml").write_text('[access]\ndefault = "partner"\n')
    (tmp_path / "documents" / "pay.md").write_text(
        "---\ndoc_id: pay\nversion: '1'\ntitle: Pay\naccess_level: staff\n---\n# Pay\nSalaries by grade.\n"
    )
    (tmp_path / "documents" / "page.html").write_text(
        '<html><head><title>Page</title><meta name="doc_id" content="page"><meta name="version" content="1">'
        '<meta name="Access-Level" content="staff"></head><body><p>Bonus plan.</p></body></html>'
    )
    (tmp_path / "documents" / "ok.md").write_text("---\ndoc_id: ok\nversion: '1'\ntitle: Ok\n---\n# Ok\nHello.\n")
    report = _validate(tmp_path)
    assert (report["documents"], report["valid"], report["rejected"]) == (3, 1, 2)
    problems = {p["source"]: " ".join(p["problems"]) for p in report["problems"]}
    assert "access_level: unknown field, named like 'access', given 'staff'" in problems["documents/pay.md"]
    assert "access-level: unknown field, named like 'access', given 'staff'" in problems["documents/page.html"]


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("replaced_by", "superseded_by"),
        ("replacedBy", "superseded_by"),
        ("status_code", "status"),
        ("valid_from", "effective_from"),
        ("validFrom", "effective_from"),
        ("validUntil", "effective_to"),
        ("valid_until", "effective_to"),
        ("validity_end", "effective_to"),
        ("valid_to", "effective_to"),
        ("Valid-To", "effective_to"),
        ("doc_valid_from", "effective_from"),
        ("replaces", "superseded_by"),
        ("docReplacedBy", "superseded_by"),
    ],
)
def test_other_words_for_a_guarded_field_are_refused(name: str, field: str) -> None:
    meta, problems, _ = resolve_metadata("documents/x.md", {**BASE, "access": "staff", name: "x"}, None, Settings())
    assert meta is None
    assert any(f"documents/x.md: {name}: unknown field, named like {field!r}, given 'x'" in p for p in problems)


def test_a_near_spelling_names_its_value_too() -> None:
    meta, problems, _ = resolve_metadata("documents/x.md", {**BASE, "acess": "staff"}, None, Settings())
    assert meta is None
    assert any("documents/x.md: acess: unknown field" in p and "given 'staff'" in p for p in problems), problems


@pytest.mark.parametrize(
    "name",
    [
        "valid",
        "validity",
        "validated",
        "validator",
        "replacement",
        "replaced",
        "is_valid",
        "viewport",
        "og:title",
        "Producer",
    ],
)
def test_words_near_valid_or_ordinary_names_stay_ignored(name: str) -> None:
    meta, problems, _ = resolve_metadata("documents/x.md", {**BASE, "access": "staff", name: "x"}, None, Settings())
    assert meta is not None, problems


@pytest.mark.parametrize(
    ("tags", "said"),
    [
        ("foo", "is one string"),
        ([1, 2], "item 1 is 1"),
        ([""], "empty tag"),
        (["a", " "], "item 2 is an empty tag"),
        ({"a": "b"}, "not a list of strings"),
        ([["a"]], "item 1 is ['a']"),
    ],
)
def test_yaml_tags_must_be_a_list_of_non_empty_strings(tags: object, said: str) -> None:
    meta, problems, _ = resolve_metadata("documents/x.md", {**BASE, "access": "staff", "tags": tags}, None, Settings())
    assert meta is None
    assert any(p.startswith("documents/x.md: tags: ") and said in p for p in problems), problems


def test_inventory_tags_are_yaml_even_for_html() -> None:
    meta, problems, _ = resolve_metadata(
        "documents/x.html", {**BASE, "access": "staff"}, {"tags": "a, b"}, Settings(), text_fields=True
    )
    assert meta is None
    assert any("tags: not a list of strings" in p for p in problems), problems


def test_html_and_pdf_tags_stay_comma_separated_text() -> None:
    fields = {**BASE, "access": "staff", "tags": "a, b,"}
    meta, problems, _ = resolve_metadata("documents/x.html", fields, None, Settings(), text_fields=True)
    assert meta is not None and meta.tags == ("a", "b"), problems


def test_a_yaml_list_of_tags_is_read() -> None:
    fields = {**BASE, "access": "staff", "tags": ["hr", "pay"]}
    meta, problems, _ = resolve_metadata("documents/x.md", fields, None, Settings())
    assert meta is not None and meta.tags == ("hr", "pay"), problems


# --- every source, and the same dates and successor in other words (attack pass, session 12) -------------


def test_a_near_spelling_message_is_exact() -> None:
    _, problems, _ = resolve_metadata(
        "documents/pay.md", {**BASE, "access": "staff", "supersededby": "a@1"}, None, Settings()
    )
    assert problems == [
        "documents/pay.md: supersededby: unknown field, a near-spelling of 'superseded_by', given 'a@1' "
        "(write 'superseded_by'; nothing was guessed)"
    ]


# (name as written, value) of the unknown fields each source is tried with
LOOKALIKES = [("access_level", "staff"), ("valid_from", "2030-01-01"), ("replaced_by", "other@2"), ("Doc-Status", "x")]


def _pdf(doc_id: str, info: dict[str, str], xmp_keywords: str | None = None) -> bytes:
    from tests.test_metadata_read_holes import pdf_with_info, pdf_with_xmp

    if xmp_keywords is None:
        return pdf_with_info({"/doc_id": doc_id, "/version": "1", **info})
    return pdf_with_xmp(f"<pdf:Keywords>doc_id={doc_id}; version=1; {xmp_keywords}</pdf:Keywords>")


def _front(doc_id: str, extra: str) -> str:
    return f"---\ndoc_id: {doc_id}\nversion: '1'\ntitle: Memo\n{extra}---\nThe memo.\n"


def _html(doc_id: str, head: str) -> str:
    return (
        f'<html><head><title>Memo</title><meta name="doc_id" content="{doc_id}"><meta name="version" content="1">'
        f"{head}</head><body><p>The memo.</p></body></html>"
    )


SOURCES: dict[str, tuple[str, object]] = {
    # source -> (file suffix, the file's bytes or text given (doc_id, name, value)); "inventory": the entry
    "front-matter": (".md", lambda d, n, v: _front(d, f"{n}: {v}\n")),
    "text-front-matter": (".txt", lambda d, n, v: _front(d, f"{n}: {v}\n")),
    "html-meta": (".html", lambda d, n, v: _html(d, f'<meta name="{n}" content="{v}">')),
    "pdf-info": (".pdf", lambda d, n, v: _pdf(d, {f"/{n}": v})),
    "pdf-keywords": (".pdf", lambda d, n, v: _pdf(d, {"/Keywords": f"memo; {n}={v};"})),
    "pdf-keywords-colon": (".pdf", lambda d, n, v: _pdf(d, {"/Keywords": f"memo; {n}: {v}"})),
    "xmp-keywords": (".pdf", lambda d, n, v: _pdf(d, {}, xmp_keywords=f"{n}={v}")),
    "inventory": (".md", lambda d, n, v: _front(d, "")),
}


def test_every_source_refuses_a_lookalike_naming_the_file_the_field_and_the_value(tmp_path: Path) -> None:
    # With access.default, each would otherwise go in as partner, in force on every day, or current.
    corpus = tmp_path / "corpus"
    (corpus / "documents").mkdir(parents=True)
    (corpus / "ingest.toml").write_text('[access]\ndefault = "partner"\n')
    inventory, expected = [], {}
    for source, (suffix, make) in SOURCES.items():
        for number, (name, value) in enumerate(LOOKALIKES):
            doc_id, path = f"{source}-{number}", f"{source}-{number}{suffix}"
            data = make(doc_id, name, value)  # type: ignore[operator]
            target = corpus / "documents" / path
            target.write_bytes(data) if isinstance(data, bytes) else target.write_text(data)
            if source == "inventory":
                inventory.append(f"{path}: {{{name}: '{value}'}}\n")
            expected[f"documents/{path}"] = (name, value)
    (corpus / "inventory.yaml").write_text("".join(inventory))
    (corpus / "documents" / "ok.md").write_text(_front("ok", "access: public\n"))

    report = _validate(corpus)

    assert (report["valid"], report["rejected"]) == (1, len(expected))
    problems = {record["source"]: record["problems"] for record in report["problems"]}
    for path, (name, value) in expected.items():
        [problem] = problems[path]
        assert problem.startswith(f"{path}: "), problem
        assert name.casefold().replace("-", "_") in problem.casefold().replace("-", "_"), problem
        assert repr(value) in problem or f"{name}: {value}" in problem, problem


def test_ordinary_fields_of_every_source_stay_ignored(tmp_path: Path) -> None:
    # What generators write (the real corpus's PDFs and pages): never a lookalike.
    from tests.test_metadata_read_holes import pdf_with_info

    corpus = tmp_path / "corpus"
    (corpus / "documents").mkdir(parents=True)
    extra = "description: A memo\nkeywords: [a, b]\nauthor: Ann\nlayout: page\naccessibility: high\n"
    (corpus / "documents" / "a.md").write_text(_front("a", f"access: public\n{extra}"))
    (corpus / "documents" / "b.html").write_text(
        _html(
            "b",
            '<meta name="access" content="public"><meta name="viewport" content="width=device-width">'
            '<meta name="robots" content="index"><meta name="generator" content="Sphinx 8">'
            '<meta name="description" content="x"><meta property="og:title" content="Memo">'
            '<meta property="article:published_time" content="2025-01-01">',
        )
    )
    info = {
        "/access": "public",
        "/Producer": "pdfTeX-1.40",
        "/Creator": "LaTeX",
        "/Author": "Ann",
        "/Trapped": "/False",
    }
    info["/Keywords"] = "TeX, fonts, access control, status report"
    (corpus / "documents" / "c.pdf").write_bytes(pdf_with_info({"/doc_id": "c", "/version": "1", **info}))
    done = subprocess.run(
        [sys.executable, "-m", "ingest", "validate", str(corpus), "--json"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["valid"] == 3
