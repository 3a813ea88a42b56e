"""Metadata field names are case-insensitive in every source, as HTML's <meta name> and PDF keys always
were (outside pass: Markdown front matter with `Access: staff` and `access: public` was indexed public).
A name given under two spellings is one field given twice: the document is rejected naming both values."""

from __future__ import annotations

import json

import pytest

from tests.corpus_builder import write_doc
from tests.helpers import ingest_cli, search_hits

ingest, hits = ingest_cli, search_hits


@pytest.mark.parametrize("name", ["secret.md", "secret.txt"])
def test_two_spellings_of_access_reject_the_document(tmp_path, store_args, name):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    write_doc(corpus, name, "secret-doc", access="public", salt="crownjewel", Access="staff")

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["documents"]["indexed"] == 1 and data["documents"]["rejected"] == 1
    assert data["problems"] == [
        {
            "source": f"documents/{name}",
            "doc_id": "secret-doc",
            "problems": [f"documents/{name}: access: given 2 times: 'access' is 'public' and 'Access' is 'staff'"],
        }
    ]
    assert hits(store_args, "crownjewel", "public") == set()
    assert hits(store_args, "crownjewel", "staff") == set()
    assert hits(store_args, "zebracorn", "public") == {"pub-doc"}


def test_a_second_spelling_added_later_withdraws_the_stored_version(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    doc = write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    write_doc(corpus, "other.md", "other-doc")
    assert ingest("run", corpus, "--quiet", *store_args).returncode == 0
    assert hits(store_args, "zebracorn", "public") == {"pub-doc"}

    doc.write_text(doc.read_text(encoding="utf-8").replace("access: public", "access: public\nACCESS: staff"))
    done = ingest("run", corpus, *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "access: given 2 times: 'access' is 'public' and 'ACCESS' is 'staff'" in done.stdout
    assert hits(store_args, "zebracorn", "public") == set()


def test_a_capitalised_name_in_the_file_is_compared_with_the_inventory(tmp_path, store_args):
    """`ACCESS: staff` in the file was ignored, and the inventory's `access: public` filled the field."""
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc")
    doc = write_doc(corpus, "secret.md", "secret-doc", salt="crownjewel")
    doc.write_text(doc.read_text(encoding="utf-8").replace("access: public", "ACCESS: staff"))
    (corpus / "inventory.yaml").write_text("secret.md: {access: public}\n", encoding="utf-8")

    done = ingest("run", corpus, *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "documents/secret.md: access: file has 'staff' but inventory.yaml has 'public'" in done.stdout
    assert hits(store_args, "crownjewel", "public") == set()

    (corpus / "inventory.yaml").unlink()
    assert ingest("run", corpus, "--quiet", *store_args).returncode == 0
    assert hits(store_args, "crownjewel", "public") == set()
    assert hits(store_args, "crownjewel", "staff") == {"secret-doc"}


def test_an_inventory_entry_with_two_spellings_stops_the_run(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "a.md", "a-doc")
    (corpus / "inventory.yaml").write_text("a.md:\n  Access: staff\n  access: public\n", encoding="utf-8")

    done = ingest("run", corpus, *store_args)

    assert done.returncode == 2, done.stdout + done.stderr
    assert "inventory.yaml: a.md: access: given 2 times: 'Access' is 'staff' and 'access' is 'public'" in (
        done.stdout + done.stderr
    )
