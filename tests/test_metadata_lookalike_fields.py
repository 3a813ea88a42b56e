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
