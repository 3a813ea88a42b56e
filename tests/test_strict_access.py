"""--strict refuses to write when any document is rejected, but never at the cost of access:
[roles] is applied, and stored versions the folder now restricts are withdrawn (outside pass:
a strict CI run kept a narrowed role reading staff chunks and kept a tightened document public)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus_builder import write_doc

ROLES_WIDE = '[roles]\npublic = ["public", "staff"]\npartner = ["public", "partner"]\nstaff = ["public", "partner", "staff"]\n'
ROLES_FIXED = '[roles]\npublic = ["public"]\npartner = ["public", "partner"]\nstaff = ["public", "partner", "staff"]\n'


def ingest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ingest.cli", *args], capture_output=True, text=True)


def public_hits(corpus: Path, store_args: list[str], query: str) -> set[str]:
    done = ingest("search", query, "--role", "public", "--json", *store_args)
    assert done.returncode == 0, done.stdout + done.stderr
    return {hit["doc_id"] for hit in json.loads(done.stdout)["hits"]}


def test_a_refused_strict_run_still_narrows_a_role(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    write_doc(corpus, "secret.md", "secret-doc", access="staff", salt="crownjewel")
    (corpus / "ingest.toml").write_text(ROLES_WIDE, encoding="utf-8")
    assert ingest("run", str(corpus), "--quiet", *store_args).returncode == 0
    assert public_hits(corpus, store_args, "crownjewel") == {"secret-doc"}  # the mistake

    (corpus / "ingest.toml").write_text(ROLES_FIXED, encoding="utf-8")
    (corpus / "documents" / "bad.md").write_text("---\ndoc_id: BAD\n---\nx\n", encoding="utf-8")
    done = ingest("run", str(corpus), "--strict", "--json", *store_args)

    assert done.returncode == 1
    assert json.loads(done.stdout)["chunks"]["written"] == 0
    assert public_hits(corpus, store_args, "crownjewel") == set()
    assert public_hits(corpus, store_args, "zebracorn") == {"pub-doc"}


@pytest.mark.parametrize("where", ["front matter", "inventory"])
def test_a_refused_strict_run_withdraws_a_tightened_document(tmp_path, store_args, where):
    corpus = tmp_path / "corpus"
    if where == "front matter":
        doc = write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    else:
        doc = corpus / "documents" / "pub.md"
        doc.parent.mkdir(parents=True)
        doc.write_text("---\ndoc_id: pub-doc\nversion: '1'\ntitle: Pub\n---\n# Pub\n\nzebracorn text.\n", encoding="utf-8")
        (corpus / "inventory.yaml").write_text("pub.md:\n  access: public\n", encoding="utf-8")
    write_doc(corpus, "other.md", "other-doc")
    assert ingest("run", str(corpus), "--quiet", *store_args).returncode == 0
    assert public_hits(corpus, store_args, "zebracorn") == {"pub-doc"}

    if where == "front matter":  # an edit without a version bump is refused, and tightens access
        edited = doc.read_text(encoding="utf-8").replace("access: public", "access: staff")
        doc.write_text(edited.replace(" covers ", " includes "), encoding="utf-8")
    else:  # valid, but not written under --strict because another document is rejected
        (corpus / "inventory.yaml").write_text("pub.md:\n  access: staff\n", encoding="utf-8")
        (corpus / "documents" / "bad.md").write_text("---\ndoc_id: BAD\n---\nx\n", encoding="utf-8")
    done = ingest("run", str(corpus), "--strict", "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["documents"]["indexed"] == 0 and data["documents"]["removed"] == 1
    assert data["chunks"]["written"] == 0 and data["chunks"]["deleted"] >= 1
    assert public_hits(corpus, store_args, "zebracorn") == set()


EDITS = {
    "staff and a bad date": ("access: public", "access: staff\neffective_from: 2026-13-01"),
    "a label in capitals": ("access: public", "access: Staff"),
    "an unknown label": ("access: public", "access: secret"),
    "a list": ("access: public", "access: [staff]"),
    "no access line": ("access: public\n", ""),
    "the key twice": ("access: public", "access: public\naccess: staff"),
    "broken YAML": ("access: public", "access: staff\n  : : bad: ["),
    "an expiry and a dangling reference": ("access: public", "access: public\neffective_to: 2020-01-01\nsuperseded_by: x@9"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_rejected_edit_that_may_narrow_visibility_withdraws_the_stored_version(tmp_path, store_args, edit):
    """A rejected file keeps its stored version only while it still declares the stored access, dates
    and status (outside pass F8: any other problem in the file kept a tightened document public)."""
    corpus = tmp_path / "corpus"
    doc = write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    write_doc(corpus, "other.md", "other-doc")
    assert ingest("run", str(corpus), "--quiet", *store_args).returncode == 0
    old, new = EDITS[edit]
    doc.write_text(doc.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")

    done = ingest("run", str(corpus), "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["documents"]["removed"] == 1
    assert "withdrawn" in " ".join(p for record in data["problems"] for p in record["problems"])
    assert public_hits(corpus, store_args, "zebracorn") == set()


def test_a_rejected_file_that_still_declares_the_stored_visibility_keeps_it(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    doc = write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    assert ingest("run", str(corpus), "--quiet", *store_args).returncode == 0
    doc.write_text(doc.read_text(encoding="utf-8").replace("title:", "tags: {a: 1}\ntitle:"), encoding="utf-8")

    done = ingest("run", str(corpus), "--json", *store_args)

    assert done.returncode == 1
    assert json.loads(done.stdout)["documents"]["removed"] == 0
    assert public_hits(corpus, store_args, "zebracorn") == {"pub-doc"}


def test_a_withdrawn_edit_stays_out_until_a_version_bump_or_accept_edits(tmp_path, store_args):
    """Withdrawing an edited version must not let its edit in as "new" on the next run (new-user pass:
    the guard against edits without a version bump was bypassed)."""
    corpus = tmp_path / "corpus"
    doc = write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    assert ingest("run", str(corpus), "--quiet", *store_args).returncode == 0
    edited = doc.read_text(encoding="utf-8").replace("zebracorn", "quagga").replace(
        "access: public", "access: public\neffective_to: 2031-01-01"
    )
    doc.write_text(edited, encoding="utf-8")

    for _ in range(2):  # the withdrawal, then a run that must not take the edit as a new document
        done = ingest("run", str(corpus), "--json", *store_args)
        assert done.returncode == 1, done.stdout + done.stderr
        assert json.loads(done.stdout)["documents"]["indexed"] == 0
        assert public_hits(corpus, store_args, "quagga") == set()

    done = ingest("run", str(corpus), "--accept-edits", "--json", *store_args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert public_hits(corpus, store_args, "quagga") == {"pub-doc"}


def test_a_refused_strict_run_removes_a_version_whose_narrowed_replacement_it_does_not_write(tmp_path, store_args):
    """v1 public stored; the folder now has v2 staff (valid) and an unrelated rejected file: --strict
    writes nothing, but v1 must not stay public (re-check pass N1)."""
    corpus = tmp_path / "corpus"
    doc = write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    assert ingest("run", str(corpus), "--quiet", *store_args).returncode == 0
    doc.write_text(
        doc.read_text(encoding="utf-8").replace("access: public", "access: staff").replace('version: "1"', 'version: "2"'),
        encoding="utf-8",
    )
    (corpus / "documents" / "bad.md").write_text("---\ndoc_id: BAD\n---\nx\n", encoding="utf-8")

    done = ingest("run", str(corpus), "--strict", "--json", *store_args)

    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["chunks"]["written"] == 0 and data["documents"]["removed"] == 1
    assert public_hits(corpus, store_args, "zebracorn") == set()


def test_full_refuses_edited_text_under_a_stored_version(tmp_path, store_args):
    """--full is no way around "content changed but version did not" (re-check pass N4)."""
    corpus = tmp_path / "corpus"
    doc = write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    assert ingest("run", str(corpus), "--quiet", *store_args).returncode == 0
    doc.write_text(doc.read_text(encoding="utf-8").replace("zebracorn", "quagga"), encoding="utf-8")

    done = ingest("run", str(corpus), "--full", "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    assert public_hits(corpus, store_args, "quagga") == set()
    assert public_hits(corpus, store_args, "zebracorn") == {"pub-doc"}  # the stored version is carried


def test_a_withdrawn_version_whose_front_matter_is_fixed_comes_back(tmp_path, store_args):
    """Withdrawn for a bad label; the label fixed (text never changed): indexed again, no
    --accept-edits needed (re-check pass N7)."""
    corpus = tmp_path / "corpus"
    doc = write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    assert ingest("run", str(corpus), "--quiet", *store_args).returncode == 0
    original = doc.read_text(encoding="utf-8")
    doc.write_text(original.replace("access: public", "access: Staff"), encoding="utf-8")
    assert ingest("run", str(corpus), "--quiet", *store_args).returncode == 1
    assert public_hits(corpus, store_args, "zebracorn") == set()
    doc.write_text(original.replace("access: public", "access: public\ntags: [fixed]"), encoding="utf-8")

    done = ingest("run", str(corpus), "--json", *store_args)

    assert done.returncode == 0, done.stdout + done.stderr
    assert public_hits(corpus, store_args, "zebracorn") == {"pub-doc"}


def test_an_inventory_narrowing_withdraws_the_version_of_a_file_that_cannot_be_read(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    doc = corpus / "documents" / "pub.md"
    doc.parent.mkdir(parents=True)
    doc.write_text("---\ndoc_id: pub-doc\nversion: '1'\ntitle: Pub\n---\n# Pub\n\nzebracorn text.\n", encoding="utf-8")
    (corpus / "inventory.yaml").write_text("pub.md:\n  access: public\n", encoding="utf-8")
    assert ingest("run", str(corpus), "--quiet", *store_args).returncode == 0
    (corpus / "inventory.yaml").write_text("pub.md:\n  access: staff\n", encoding="utf-8")
    outside = tmp_path / "outside.md"
    doc.rename(outside)
    doc.symlink_to(outside)  # a symlink out of the corpus: never followed, the path cannot be read

    done = ingest("run", str(corpus), "--json", *store_args)

    assert done.returncode == 1
    assert json.loads(done.stdout)["documents"]["removed"] == 1
    assert public_hits(corpus, store_args, "zebracorn") == set()
