"""The corpus scan over tests/fixtures/bad: every problem of every bad document, exactly,
and the valid documents of the same run reported valid.

The PDF fixtures are rebuilt by tests/fixtures/bad/make_pdfs.py.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from ingest.corpus import CorpusError, discover, list_documents, scan_corpus
from ingest.settings import load_settings

BAD = Path(__file__).parent / "fixtures" / "bad"

VALID = [
    "documents/valid/from-inventory.md",
    "documents/valid/handbook.html",
    "documents/valid/manual.pdf",
    "documents/valid/notes.txt",
    "documents/valid/warranty-v4.md",
    "documents/valid/warranty-v5.md",
]

# source -> (doc_id found, every problem, in order)
REJECTED = {
    # problems between documents
    "documents/cross/dangling.md": ("dangling", [
        "superseded_by: 'dangling@2' names no document in the corpus",
    ]),
    "documents/cross/duplicate-a.md": ("duplicated", [
        "doc_id@version: 'duplicated@1' is also defined by documents/cross/duplicate-b.txt",
    ]),
    "documents/cross/duplicate-b.txt": ("duplicated", [
        "doc_id@version: 'duplicated@1' is also defined by documents/cross/duplicate-a.md",
    ]),
    "documents/cross/overlap-v1.md": ("overlapping", [
        "effective_from: 'overlapping' version '1' (2025-01-01 to 2026-03-31) and version '2' in "
        "documents/cross/overlap-v2.md (from 2026-03-01) are both in force on 2026-03-01",
    ]),
    "documents/cross/overlap-v2.md": ("overlapping", [
        "effective_from: 'overlapping' version '2' (from 2026-03-01) and version '1' in "
        "documents/cross/overlap-v1.md (2025-01-01 to 2026-03-31) are both in force on 2026-03-01",
    ]),
    "documents/cross/successor-rejected.md": ("successor-rejected", [
        "superseded_by: 'unknown-access@1' names a document that was rejected",
    ]),
    # problems in a document's own fields
    "documents/fields/bad-date.md": ("bad-date", [
        "effective_from: bad date '1 March 2026': expected YYYY-MM-DD",
    ]),
    "documents/fields/bad-tags.md": ("bad-tags", [
        "tags: not a list of strings: {'kind': 'policy'}",
    ]),
    "documents/fields/current-with-successor.md": ("current-with-successor", [
        "superseded_by: 'current-with-successor@2' but status is 'current'",
    ]),
    "documents/fields/dates-reversed.html": ("dates-reversed", [
        "effective_to: 2026-05-31 is before effective_from 2026-06-01",
    ]),
    "documents/fields/datetime.md": ("datetime", [
        "effective_from: bad date 2026-01-01 09:30:00: a date and time, expected YYYY-MM-DD",
    ]),
    "documents/fields/impossible-date.html": ("impossible-date", [
        "effective_to: bad date '2026-02-30': expected YYYY-MM-DD",
    ]),
    "documents/fields/impossible-yaml-date.md": ("impossible-yaml-date", [
        "effective_from: bad date '2026-02-30': expected YYYY-MM-DD",
    ]),
    "documents/fields/inventory-disagrees.md": ("inventory-disagrees", [
        "version: file has '3' but inventory.yaml has '4'",
    ]),
    "documents/fields/missing-title.md": ("missing-title", [
        "title: missing required field",
    ]),
    "documents/fields/not-a-slug.md": ("Travel Policy", [
        "doc_id: not a slug: 'Travel Policy' (must match [a-z0-9][a-z0-9._-]*)",
    ]),
    "documents/fields/pattern.md": ("travel_policy", [
        "doc_id: 'travel_policy' does not match the pattern '[a-z0-9-]+'",
        "tags: 'Expenses' does not match the pattern '[a-z]+'",
    ]),
    "documents/fields/successor-format.md": ("successor-format", [
        "superseded_by: not doc_id@version: 'successor-format v2'",
    ]),
    "documents/fields/superseded-alone.md": ("superseded-alone", [
        "status: 'superseded' without superseded_by",
    ]),
    "documents/fields/three-problems.md": ("Three Problems", [
        "doc_id: not a slug: 'Three Problems' (must match [a-z0-9][a-z0-9._-]*)",
        "title: missing required field",
        "access: unknown access label 'secret' (labels: public, partner, staff)",
    ]),
    "documents/fields/unknown-access.md": ("unknown-access", [
        "access: unknown access label 'secret' (labels: public, partner, staff)",
    ]),
    "documents/fields/unknown-status.md": ("unknown-status", [
        "status: unknown status 'draft' (statuses: current, superseded)",
    ]),
    # unreadable files
    "documents/unreadable/binary.txt": (None, ["unreadable file: binary file"]),
    "documents/unreadable/blank.pdf": (None, ["unreadable file: PDF has no extractable text"]),
    "documents/unreadable/bomb.md": (None, [
        "unreadable file: front matter is not valid YAML: aliases expand to more than 100000 nodes",
    ]),
    "documents/unreadable/empty.md": (None, ["unreadable file: empty file"]),
    "documents/unreadable/encrypted.pdf": (None, ["unreadable file: encrypted PDF"]),
    "documents/unreadable/latin1.md": (None, ["unreadable file: not UTF-8 text"]),
    "documents/unreadable/not-a-pdf.pdf": (None, ["unreadable file: not a PDF"]),
    "documents/unreadable/not-yaml.md": (None, [
        "unreadable file: front matter is not valid YAML: did not find expected ',' or ']' "
        "(line 4, column 1)",
    ]),
}

INVENTORY_PROBLEMS = ["inventory.yaml: fields/gone.md: names no file under documents/"]


@pytest.fixture(scope="module")
def scan():
    return scan_corpus(BAD, load_settings(BAD))


def test_valid_documents_of_the_bad_corpus_are_valid(scan):
    assert [document.source for document in scan.documents] == VALID


@pytest.mark.parametrize("source", sorted(REJECTED))
def test_every_problem_of_each_bad_document(scan, source):
    rejected = {record.source: record for record in scan.rejected}
    doc_id, problems = REJECTED[source]
    assert rejected[source].doc_id == doc_id
    assert list(rejected[source].problems) == [f"{source}: {problem}" for problem in problems]


def test_no_other_document_is_rejected(scan):
    assert [record.source for record in scan.rejected] == sorted(REJECTED)


def test_validate_json_shape(scan):
    data = scan.to_json()
    json.dumps(data)  # serialisable as is
    assert data["documents"] == len(VALID) + len(REJECTED) == scan.seen
    assert data["valid"] == len(VALID)
    assert data["rejected"] == len(REJECTED)
    assert data["formats"] == {"markdown": 26, "html": 3, "text": 3, "pdf": 4}
    assert data["access"] == {"partner": 2, "public": 2, "staff": 2}
    assert data["defaulted_access"] == 0
    assert [entry["source"] for entry in data["problems"]] == sorted(REJECTED) + ["inventory.yaml"]
    assert data["problems"][-1] == {"source": "inventory.yaml", "doc_id": None, "problems": INVENTORY_PROBLEMS}
    assert scan.ok is False


def test_valid_documents_carry_source_hash_parse_and_metadata(scan):
    by_source = {document.source: document for document in scan.documents}
    v4 = by_source["documents/valid/warranty-v4.md"]
    assert v4.sha256 == hashlib.sha256((BAD / v4.source).read_bytes()).hexdigest()
    assert v4.meta.key == "warranty-policy@4"
    assert v4.meta.superseded_by == "warranty-policy@5"
    assert v4.parsed.format == "markdown"
    inventory_only = by_source["documents/valid/from-inventory.md"].meta
    assert (inventory_only.doc_id, inventory_only.version, inventory_only.access) == ("inventory-only", "1", "staff")
    handbook = by_source["documents/valid/handbook.html"].meta
    assert (handbook.title, handbook.tags) == ("Staff handbook", ("people", "onboarding"))
    manual = by_source["documents/valid/manual.pdf"].meta
    assert (manual.doc_id, manual.version, manual.title, manual.access, manual.tags) == (
        "device-manual", "2", "Device manual", "partner", ("devices", "manuals"),
    )


def test_scan_is_deterministic(scan):
    assert scan_corpus(BAD, load_settings(BAD)).to_json() == scan.to_json()


def test_on_file_sees_every_file_in_order():
    seen: list[str] = []
    scan_corpus(BAD, load_settings(BAD), on_file=seen.append)
    assert seen == sorted(VALID + list(REJECTED))


# ---------------------------------------------------------------------------- small corpora


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def front_matter(doc_id: str, access: str | None = None) -> str:
    lines = [f"doc_id: {doc_id}", "version: 1", f"title: {doc_id}"]
    if access:
        lines.append(f"access: {access}")
    return "---\n" + "\n".join(lines) + "\n---\nBody text.\n"


def test_access_default_is_applied_and_counted(tmp_path):
    write(tmp_path, "ingest.toml", '[access]\ndefault = "staff"\n')
    write(tmp_path, "documents/a.md", front_matter("a"))
    write(tmp_path, "documents/b.md", front_matter("b"))
    write(tmp_path, "documents/c.md", front_matter("c", "public"))
    scan = scan_corpus(tmp_path, load_settings(tmp_path))
    assert scan.ok and scan.defaulted_access == 2
    assert scan.access_counts() == {"public": 1, "staff": 2}
    assert scan.to_json()["defaulted_access"] == 2


def test_without_access_default_a_missing_label_is_a_problem(tmp_path):
    write(tmp_path, "documents/a.md", front_matter("a"))
    scan = scan_corpus(tmp_path, load_settings(tmp_path))
    assert [(r.source, r.doc_id, r.problems) for r in scan.rejected] == [
        ("documents/a.md", "a", ("documents/a.md: access: missing required field",))
    ]


@pytest.mark.parametrize("inventory", ["a.md: [unclosed\n", "a.md: {access: staff}\nb.md: 3\n", "- a.md\n"])
def test_an_inventory_that_cannot_be_read_whole_stops_the_scan(tmp_path, inventory):
    """Checking documents without fields the inventory gives could index a guess (e.g. a
    defaulted access label for a confidential file): a configuration error, nothing checked."""
    write(tmp_path, "inventory.yaml", inventory)
    write(tmp_path, "documents/a.md", front_matter("a", "public"))
    with pytest.raises(CorpusError, match="^inventory.yaml: "):
        scan_corpus(tmp_path, load_settings(tmp_path))


def test_missing_documents_folder_is_a_usage_error(tmp_path):
    with pytest.raises(CorpusError, match="no documents/ folder"):
        scan_corpus(tmp_path, load_settings(tmp_path))


def test_empty_corpus(tmp_path):
    (tmp_path / "documents").mkdir()
    scan = scan_corpus(tmp_path, load_settings(tmp_path))
    assert scan.to_json() == {
        "documents": 0, "valid": 0, "rejected": 0, "problems": [],
        "formats": {"markdown": 0, "html": 0, "text": 0, "pdf": 0}, "access": {}, "defaulted_access": 0,
    }


def test_discover_skips_hidden_unsupported_and_outside_symlinks(tmp_path):
    corpus = tmp_path / "corpus"
    for relative in ["documents/b.md", "documents/A.HTML", "documents/sub/c.txt", "documents/sub/d.pdf",
                     "documents/e.markdown", "documents/f.htm", "documents/.hidden.md",
                     "documents/.drafts/x.md", "documents/notes.docx", "documents/README"]:
        write(corpus, relative, "x")
    outside = write(tmp_path, "outside/secret.md", "x")
    inside = write(corpus, "shared/inside.md", "x")
    os.symlink(outside, corpus / "documents" / "leak.md")
    os.symlink(inside, corpus / "documents" / "linked.md")
    os.symlink(tmp_path / "outside", corpus / "documents" / "outside-folder")
    listing = list_documents(corpus)
    # Not followed, but never silent (a file replaced by a link out of the corpus must not look deleted).
    assert [p.source for p in listing.file_problems] == ["documents/leak.md"]
    assert [p.source for p in listing.folder_problems] == ["documents/outside-folder"]
    found = [path.relative_to(corpus).as_posix() for path in discover(corpus)]
    assert found == [
        "documents/A.HTML",
        "documents/b.md",
        "documents/e.markdown",
        "documents/f.htm",
        "documents/linked.md",
        "documents/sub/c.txt",
        "documents/sub/d.pdf",
    ]
