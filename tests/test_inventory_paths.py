"""An inventory.yaml key names the file whose path reads the same, as its duplicate-key check reads keys:
a name typed in NFC ("café.md") names the file stored in NFD (as macOS and some archivers write it), and
"./a.md" names a.md — the entry's access is never dropped while the file goes in under another label."""

from __future__ import annotations

import json
import unicodedata

from tests.helpers import ingest_cli, search_hits

DOC = '---\ndoc_id: {doc_id}\nversion: "1"\ntitle: Cafe notes\n{access}---\n\nNarwhal espresso margins {doc_id}.\n'


def test_an_inventory_key_in_nfc_gives_its_access_to_the_file_named_in_nfd(tmp_path, store_args):
    documents = tmp_path / "corpus" / "documents"
    documents.mkdir(parents=True)
    nfd = unicodedata.normalize("NFD", "café.md")
    (documents / nfd).write_text(DOC.format(doc_id="cafe", access=""), encoding="utf-8")
    (documents / "plain.md").write_text(DOC.format(doc_id="plain", access=""), encoding="utf-8")
    (documents / "open.md").write_text(DOC.format(doc_id="open", access="access: public\n"), encoding="utf-8")
    inventory = {unicodedata.normalize("NFC", "café.md"): {"access": "staff"}, "./plain.md": {"access": "staff"}}
    (tmp_path / "corpus" / "inventory.yaml").write_text(json.dumps(inventory, ensure_ascii=False), encoding="utf-8")

    done = ingest_cli("run", tmp_path / "corpus", *store_args, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert search_hits(store_args, "narwhal espresso margins", "public") == {"open"}
    assert search_hits(store_args, "narwhal espresso margins", "staff") == {"open", "cafe", "plain"}


def test_a_file_that_disagrees_with_the_entry_naming_it_in_another_form_is_rejected(tmp_path, store_args):
    documents = tmp_path / "corpus" / "documents"
    documents.mkdir(parents=True)
    nfd = unicodedata.normalize("NFD", "café.md")
    (documents / nfd).write_text(DOC.format(doc_id="cafe", access="access: public\n"), encoding="utf-8")
    (documents / "open.md").write_text(DOC.format(doc_id="open", access="access: public\n"), encoding="utf-8")
    inventory = {unicodedata.normalize("NFC", "café.md"): {"access": "staff"}}
    (tmp_path / "corpus" / "inventory.yaml").write_text(json.dumps(inventory, ensure_ascii=False), encoding="utf-8")

    done = ingest_cli("run", tmp_path / "corpus", *store_args, "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    problems = " ".join(p for record in json.loads(done.stdout)["problems"] for p in record["problems"])
    assert "access" in problems and "inventory.yaml" in problems and "names no file" not in problems, problems
    assert search_hits(store_args, "narwhal espresso margins", "public") == {"open"}


def test_a_key_with_dotdot_naming_another_keys_file_is_that_file_given_twice(tmp_path, store_args):
    documents = tmp_path / "corpus" / "documents"
    (documents / "sub").mkdir(parents=True)
    (documents / "a.md").write_text(DOC.format(doc_id="a", access=""), encoding="utf-8")
    (documents / "sub" / "other.md").write_text(DOC.format(doc_id="other", access="access: public\n"), encoding="utf-8")
    (tmp_path / "corpus" / "inventory.yaml").write_text(
        "a.md: {access: public}\nsub/../a.md: {access: staff}\n", encoding="utf-8"
    )

    done = ingest_cli("run", tmp_path / "corpus", *store_args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "inventory.yaml: a.md: given 2 times, as 'a.md' and 'sub/../a.md'" in done.stdout + done.stderr
    assert "names no file" not in done.stdout + done.stderr


def test_a_key_with_dotdot_names_the_file_it_resolves_to(tmp_path, store_args):
    documents = tmp_path / "corpus" / "documents"
    (documents / "sub").mkdir(parents=True)
    (documents / "a.md").write_text(DOC.format(doc_id="a", access=""), encoding="utf-8")
    (documents / "sub" / "other.md").write_text(DOC.format(doc_id="other", access="access: public\n"), encoding="utf-8")
    (tmp_path / "corpus" / "inventory.yaml").write_text(
        "sub/../a.md: {access: staff}\n../outside.md: {access: public}\n", encoding="utf-8"
    )

    done = ingest_cli("run", tmp_path / "corpus", *store_args)
    assert "inventory.yaml: ../outside.md: names no file under documents/" in done.stdout + done.stderr
    assert search_hits(store_args, "narwhal espresso margins", "public") == {"other"}
    assert search_hits(store_args, "narwhal espresso margins", "staff") == {"a", "other"}
