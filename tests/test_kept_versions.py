"""Which stored versions a run keeps when a file is rejected (outside attacker pass, findings 1 and 5):
a rejected file keeps a stored version of its doc_id only while it declares exactly the stored
access, dates and status — wherever the file now lives, whatever version it now names — and a
stored version whose file is gone and that no rejected file claims is removed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.corpus_builder import body, write_doc


def ingest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ingest.cli", *args], capture_output=True, text=True)


def run(corpus: Path, store_args: list[str]) -> tuple[int, dict[str, Any]]:
    done = ingest("run", str(corpus), "--json", *store_args)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode, json.loads(done.stdout)


def planned(data: dict[str, Any], key: str) -> dict[str, Any]:
    (item,) = [item for item in data["plan"] if item["document"] == key]
    return item


def hits(store_args: list[str], query: str, role: str = "public") -> set[str]:
    done = ingest("search", query, "--role", role, "--json", *store_args)
    assert done.returncode == 0, done.stdout + done.stderr
    return {f"{hit['doc_id']}@{hit['version']}" for hit in json.loads(done.stdout)["hits"]}


def memo(corpus: Path, rel: str, version: str = "1", front: str = "access: public\n") -> Path:
    """The memo of the attacker's report; ``front``: the rest of its front matter, typos included."""
    path = corpus / "documents" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f'---\ndoc_id: memo\nversion: "{version}"\ntitle: Memo\n{front}---\n' + body("memo", salt="pangolin")
    path.write_text(text, encoding="utf-8")
    return path


def indexed_memo(tmp_path: Path, store_args: list[str]) -> Path:
    corpus = tmp_path / "corpus"
    memo(corpus, "memo.md")
    assert run(corpus, store_args)[0] == 0
    assert hits(store_args, "pangolin") == {"memo@1"}
    return corpus


NARROWED_WITH_TYPO = "access: staff\neffective_to: 2026-02-30\n"  # a narrower label, and a date that does not exist


@pytest.mark.parametrize("version", ["1", "2"])
def test_a_renamed_file_that_narrows_access_with_a_typo_withdraws_the_stored_version(tmp_path, store_args, version):
    corpus = indexed_memo(tmp_path, store_args)
    (corpus / "documents" / "memo.md").unlink()
    memo(corpus, "memo-restricted.md", version=version, front=NARROWED_WITH_TYPO)

    code, data = run(corpus, store_args)

    assert code == 1
    item = planned(data, "memo@1")
    assert item["action"] == "removed" and item["reason"].startswith("withdrawn: ")
    assert "memo-restricted.md" in item["reason"] and "staff" in item["reason"]
    if version == "2":
        assert "declares access 'staff'" in item["reason"] and "the stored version 1 has access 'public'" in item["reason"]
    # the withdrawal is told on the rejected file's own record: no phantom record for the old path
    assert [p["source"] for p in data["problems"]] == ["documents/memo-restricted.md"]
    assert data["documents"]["rejected"] == 1
    assert hits(store_args, "pangolin") == set()
    assert hits(store_args, "pangolin", role="staff") == set()


@pytest.mark.parametrize("version", ["1", "2"])
def test_a_renamed_file_with_a_typo_that_keeps_the_stored_access_keeps_the_stored_version(
    tmp_path, store_args, version
):
    corpus = indexed_memo(tmp_path, store_args)
    (corpus / "documents" / "memo.md").unlink()
    # current with superseded_by: a typo that changes nothing about who may read it, or when
    memo(corpus, "renamed/memo.md", version=version, front="access: public\nsuperseded_by: memo@9\n")

    code, data = run(corpus, store_args)

    assert code == 1
    item = planned(data, "memo@1")
    assert item["action"] == "kept"
    assert "renamed/memo.md" in item["reason"]
    assert ("moved from documents/memo.md" in item["reason"]) == (version == "1")
    assert hits(store_args, "pangolin") == {"memo@1"}


def test_a_deleted_version_is_removed_when_an_older_version_of_its_doc_id_is_rejected(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    old = {"status": "superseded", "superseded_by": "pol@2", "effective_to": "2026-01-31"}
    write_doc(corpus, "pol1.md", "pol", version="1", salt="okapi", **old)
    pol2 = write_doc(corpus, "pol2.md", "pol", version="2", salt="okapi", effective_from="2026-02-01")
    code, data = run(corpus, store_args)
    assert code == 0, data["problems"]
    assert hits(store_args, "okapi") == {"pol@2"}

    pol2.unlink()  # pol1.md's superseded_by now names no document: pol1.md is rejected
    code, data = run(corpus, store_args)

    assert code == 1
    assert planned(data, "pol@2")["action"] == "removed"
    assert planned(data, "pol@2")["reason"] == "version 2 no longer in the folder"
    assert planned(data, "pol@1")["action"] == "kept"  # its own file, rejected, declares what is stored
    assert hits(store_args, "okapi") == set()  # pol@1 ended in January; pol@2 is gone
    # verify agrees with the run: the kept version is its rejected file's, reported as rejected, not stale
    checked = ingest("verify", str(corpus), "--json", *store_args)
    assert checked.returncode == 0, checked.stdout
    report = json.loads(checked.stdout)
    assert report["stale_in_store"] == [] and report["untraceable"] == []
    assert [p["source"] for p in report["rejected"]] == ["documents/pol1.md"]


@pytest.mark.parametrize(("front", "kept"), [(NARROWED_WITH_TYPO, False), ("access: public\nsuperseded_by: x@1\n", True)])
def test_the_same_path_rule_still_holds(tmp_path, store_args, front, kept):
    corpus = indexed_memo(tmp_path, store_args)
    memo(corpus, "memo.md", front=front)

    code, data = run(corpus, store_args)

    assert code == 1
    assert planned(data, "memo@1")["action"] == ("kept" if kept else "removed")
    assert hits(store_args, "pangolin") == ({"memo@1"} if kept else set())


@pytest.mark.parametrize(("access", "kept"), [("public", True), ("staff", False)])
def test_a_new_version_refused_by_the_chunker_keeps_the_old_one_only_as_visible_as_it_declares(
    tmp_path, store_args, access, kept
):
    corpus = indexed_memo(tmp_path, store_args)
    (corpus / "documents" / "memo.md").unlink()
    too_long = "\n\n" + "x" * 40_000 + "\n"  # one token over the store's term limit: the chunker refuses it
    memo(corpus, "memo-v2.md", version="2", front=f"access: {access}\n").write_text(
        (corpus / "documents" / "memo-v2.md").read_text(encoding="utf-8") + too_long, encoding="utf-8"
    )

    code, data = run(corpus, store_args)

    assert code == 1
    assert [p["source"] for p in data["problems"]] == ["documents/memo-v2.md"]
    item = planned(data, "memo@1")
    assert item["action"] == ("kept" if kept else "removed")
    if not kept:
        assert item["reason"].startswith("withdrawn: ") and "declares access 'staff'" in item["reason"]
    assert hits(store_args, "pangolin") == ({"memo@1"} if kept else set())


@pytest.mark.elasticsearch
@pytest.mark.parametrize(("access", "kept"), [("public", True), ("staff", False)])
def test_a_new_version_refused_by_elasticsearch_keeps_the_old_one_only_as_visible_as_it_declares(
    tmp_path, es_url, es_prefix, access, kept
):
    from ingest import pipeline
    from ingest.settings import load_settings
    from ingest.store.elasticsearch import ElasticsearchStore

    class RefusesVersion2(ElasticsearchStore):
        def chunk_source(self, chunk):
            source = super().chunk_source(chunk)
            if chunk.doc_id == "memo" and chunk.version == "2" and chunk.position == 1:
                source["injected"] = "not in the mapping"  # the strict mapping refuses this chunk
            return source

    corpus = tmp_path / "corpus"
    memo(corpus, "memo.md")
    settings = load_settings(corpus)
    store = RefusesVersion2(es_url, prefix=es_prefix, settings=settings)
    try:
        assert pipeline.run(corpus, store, settings, settings.chunking).ok
        memo(corpus, "memo.md", version="2", front=f"access: {access}\n")
        result = pipeline.run(corpus, store, settings, settings.chunking)
        actions = {item.key: (item.action, item.reason) for item in result.plan.items}
        assert actions["memo@2"][0] == "rejected"
        assert actions["memo@1"][0] == ("kept" if kept else "removed")
        assert {r.key for r in store.documents()} == ({"memo@1"} if kept else set())
        if not kept:
            assert actions["memo@1"][1].startswith("withdrawn: ") and "declares access 'staff'" in actions["memo@1"][1]
            [problem] = result.to_json()["problems"]
            assert "refused by the store" in problem["problems"][0] and "withdrawn" in problem["problems"][-1]
    finally:
        store.close()
    assert hits(["--store", es_url, "--index-prefix", es_prefix], "pangolin") == ({"memo@1"} if kept else set())


def test_a_new_version_with_an_unknown_label_withdraws_the_old_one(tmp_path, store_args):
    """A label the folder does not know may be a typo of a narrower one ("staf"): fail closed."""
    corpus = indexed_memo(tmp_path, store_args)
    (corpus / "documents" / "memo.md").unlink()
    memo(corpus, "v2/memo.md", version="2", front="access: staf\n")

    code, data = run(corpus, store_args)

    assert code == 1
    assert planned(data, "memo@1")["reason"].startswith("withdrawn: documents/v2/memo.md (memo@2, rejected) declares access 'staf'")
    assert hits(store_args, "pangolin") == set()


def test_a_second_file_declaring_a_stored_version_under_a_narrower_label_withdraws_it(tmp_path, store_args):
    # Both files are rejected as duplicates; the folder now also says the version may be staff-only, so the
    # stored public copy must not stay readable as public — even while another version of the doc_id is valid.
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pol1.md", "pol", version="1", salt="okapi", effective_to="2026-01-31")
    write_doc(corpus, "pol2.md", "pol", version="2", salt="quagga", effective_from="2026-02-01")
    assert run(corpus, store_args)[0] == 0
    assert hits(store_args, "okapi", role="public") == set()  # out of date today; as of January it is found
    write_doc(corpus, "zcopy.md", "pol", version="1", access="staff", salt="okapi", effective_to="2026-01-31")

    code, data = run(corpus, store_args)

    assert code == 1
    assert planned(data, "pol@1")["action"] == "removed"
    assert hits(store_args, "quagga") == {"pol@2"}  # the valid version stays
    done = ingest("search", "okapi", "--role", "public", "--as-of", "2026-01-15", "--json", *store_args)
    assert json.loads(done.stdout)["hits"] == []
