"""A passage out of date is never served: a document `status: superseded` whose `superseded_by` names
another doc_id, with no `effective_to`, passed validation and was served on every date next to its
replacement (search filters by dates only). It is now rejected (ingest.metadata_cross), and a run
leaves no chunk of it readable on any date: neither an edit of a stored current version into it, nor a
version an older release stored that way, whose unchanged bytes are rejected once the rules change.
Search hits carry `status` and `superseded_by`, so a reader sees which passage is out of date."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ingest.api import open_store
from tests.corpus_builder import write_doc

# A run as the release before this rule made it: the rule off, the scan memo under the old rules version.
OLD_RULES = """
import sys
from ingest import corpus, kept, metadata_cross
corpus.RULES_VERSION = "11"
metadata_cross.beside_replacement = kept.beside_replacement = lambda meta, target: None
from ingest.cli import main
sys.argv = ["ingest", *sys.argv[1:]]
main()
"""


def ingest(*args: str, old_rules: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", OLD_RULES] if old_rules else [sys.executable, "-m", "ingest.cli"]
    return subprocess.run([*command, *args], capture_output=True, text=True)


def run(corpus: Path, store_args: list[str], old_rules: bool = False) -> tuple[int, dict[str, Any]]:
    done = ingest("run", str(corpus), "--json", *store_args, old_rules=old_rules)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode, json.loads(done.stdout)


def search(store_args: list[str], *extra: str) -> list[dict[str, Any]]:
    done = ingest("search", "quokka", "--json", "--top", "20", *extra, *store_args)
    assert done.returncode == 0, done.stdout + done.stderr
    hits: list[dict[str, Any]] = json.loads(done.stdout)["hits"]
    return hits


def served(store_args: list[str], as_of: str = "any") -> set[str]:
    return {f"{hit['doc_id']}@{hit['version']}" for hit in search(store_args, "--as-of", as_of)}


def planned(data: dict[str, Any], key: str) -> dict[str, Any]:
    (item,) = [item for item in data["plan"] if item["document"] == key]
    return item


SUPERSEDED = {"status": "superseded", "superseded_by": "new-doc@1"}  # no effective_to


def old_doc(corpus: Path, version: str = "1", **fields: str) -> Path:
    return write_doc(corpus, "old.md", "old-doc", version=version, salt="quokka", **fields)


def new_doc(corpus: Path, **fields: str) -> Path:
    return write_doc(corpus, "new.md", "new-doc", salt="quokka", **fields)


def assert_old_doc_gone(store_args: list[str], data: dict[str, Any]) -> None:
    assert [p["source"] for p in data["problems"]] == ["documents/old.md"]  # the replacement stays valid
    assert "effective_to: none: superseded by 'new-doc@1'" in data["problems"][0]["problems"][0]
    for day in ("any", "today", "2000-01-01", "2999-12-31"):
        assert served(store_args, day) == {"new-doc@1"}, day
    done = ingest("chunks", "old-doc", "--json", *store_args)
    assert done.returncode == 1 and "no chunks for doc_id 'old-doc'" in done.stderr, done.stdout + done.stderr


@pytest.mark.parametrize("version", ["1", "2"])
def test_a_stored_version_edited_into_a_superseded_one_without_an_end_is_withdrawn(tmp_path, store_args, version):
    corpus = tmp_path / "corpus"
    old_doc(corpus)
    new_doc(corpus)
    assert run(corpus, store_args)[0] == 0
    assert served(store_args) == {"old-doc@1", "new-doc@1"}
    old_doc(corpus, version=version, **SUPERSEDED)  # retired by its front matter, its end date forgotten

    code, data = run(corpus, store_args)

    assert code == 1
    assert planned(data, "old-doc@1")["action"] == "removed"
    assert planned(data, "old-doc@1")["reason"].startswith("withdrawn: ")
    assert data["documents"]["unchanged"] == 1 and data["documents"]["rejected"] == 1
    assert_old_doc_gone(store_args, data)


def test_a_version_stored_superseded_without_an_end_by_an_older_release_is_withdrawn(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    old_doc(corpus, **SUPERSEDED)
    new_doc(corpus)
    assert run(corpus, store_args, old_rules=True)[0] == 0  # what the release before this rule stored
    assert served(store_args) == {"old-doc@1", "new-doc@1"}

    code, data = run(corpus, store_args)  # the same bytes, the new rules (and the fast no-op check first)

    assert code == 1
    item = planned(data, "old-doc@1")
    assert item["action"] == "removed"
    assert item["reason"] == (
        "withdrawn: the stored version 1 is superseded by 'new-doc@1' (no dates: every day) but itself in force "
        "(no dates: every day): both are in force every day"
    )
    assert any("the stored version old-doc@1 is withdrawn" in p for p in data["problems"][0]["problems"])
    assert_old_doc_gone(store_args, data)

    code, data = run(corpus, store_args)  # unchanged again: still refused, nothing comes back
    assert code == 1 and data["chunks"]["written"] == 0 and data["chunks"]["deleted"] == 0
    assert_old_doc_gone(store_args, data)

    # fixed: it ends the day before its replacement starts; both are served, each on its own days
    old_doc(corpus, effective_to="2025-12-31", **SUPERSEDED)
    new_doc(corpus, effective_from="2026-01-01")
    code, data = run(corpus, store_args)
    assert code == 0, data["problems"]
    assert served(store_args, "2025-12-31") == {"old-doc@1"}
    assert served(store_args, "2026-01-01") == {"new-doc@1"}


def test_search_hits_say_which_passage_is_superseded_and_by_what(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    old_doc(corpus, effective_to="2025-12-31", **SUPERSEDED)
    new_doc(corpus, effective_from="2026-01-01")
    assert run(corpus, store_args)[0] == 0

    def shown_as(day: str) -> set[tuple[str, str, str | None]]:
        return {(hit["doc_id"], hit["status"], hit["superseded_by"]) for hit in search(store_args, "--as-of", day)}

    assert shown_as("2025-06-01") == {("old-doc", "superseded", "new-doc@1")}
    assert shown_as("2026-06-01") == {("new-doc", "current", None)}
    shown = ingest("search", "quokka", "--as-of", "any", "--top", "20", "--quiet", *store_args)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert all("v1  (superseded by new-doc@1)  §" in line for line in lines if "Old-Doc" in line)
    assert not any("superseded" in line for line in lines if "New-Doc" in line)
    assert sum("Old-Doc" in line for line in lines) == len(search(store_args, "--as-of", "2025-06-01")) > 0

    url = store_args[store_args.index("--store") + 1]
    prefix = store_args[store_args.index("--index-prefix") + 1] if "--index-prefix" in store_args else None
    with open_store(url, prefix) as index:
        hits = index.search("quokka", as_of=None)
    by_doc = {hit.chunk.doc_id: hit for hit in hits}
    assert (by_doc["old-doc"].chunk.status, by_doc["old-doc"].chunk.superseded_by) == ("superseded", "new-doc@1")
    assert by_doc["old-doc"].to_json()["superseded_by"] == "new-doc@1"
    assert by_doc["new-doc"].to_json()["status"] == "current"
