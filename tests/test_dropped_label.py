"""A label dropped from `[access] labels` while documents under it are stored: `verify` names the label, how
many versions and chunks the store holds under it and which (exit 1), and the next run withdraws them,
reported on their files (now rejected: "unknown access label"), incremental, `--full` and `--strict` alike.
Nothing stays stored under a label the settings no longer know, for any role or the all-labels alias; a role
that read it reads nothing of it after the run, by search or (Elasticsearch) by ID. Both stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import cli_json as cli

PLANS = '---\ndoc_id: plans\nversion: "1"\ntitle: Plans\naccess: secret\n---\n# Plans\n\nThe merger pelicans fly.\n'
OPEN = '---\ndoc_id: open\nversion: "1"\ntitle: Open\naccess: public\n---\n# Open\n\nPublic pelicans rest.\n'
WITH_SECRET = '[access]\nlabels = ["public", "partner", "staff", "secret"]\n[roles]\npublic = ["public"]\nboard = {}\n'
# a role reads the label until it is dropped, or none ever did (only the all-labels alias on Elasticsearch)
BOARD = {"read by a role": '["public", "secret"]', "read by no role": '["public"]'}
WITHOUT = '[access]\nlabels = ["public", "partner", "staff"]\n[roles]\npublic = ["public"]\nboard = ["public"]\n'
MODES = {"incremental": [], "--full": ["--full"], "--strict": ["--strict"]}


def corpus(tmp_path: Path, board: str = BOARD["read by a role"]) -> Path:
    root = tmp_path / "c"
    (root / "documents").mkdir(parents=True)
    (root / "documents" / "plans.md").write_text(PLANS)
    (root / "documents" / "open.md").write_text(OPEN)
    (root / "ingest.toml").write_text(WITH_SECRET.format(board))
    return root


def by_access(store_args: list[str]) -> dict[str, int]:
    """Chunks in the store per access label (every label index: the all-labels alias on Elasticsearch)."""
    return cli("stats", *store_args)[1]["access"]


def board_reads(store_args: list[str]) -> set[str]:
    return {hit["doc_id"] for hit in cli("search", "pelicans", "--role", "board", *store_args)[1]["hits"]}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("reader", list(BOARD))
def test_a_dropped_label_is_reported_by_verify_and_withdrawn_by_the_next_run(reader, mode, store_args, tmp_path):
    root = corpus(tmp_path, BOARD[reader])
    assert cli("run", root, *store_args)[0] == 0
    assert board_reads(store_args) == ({"open", "plans"} if reader == "read by a role" else {"open"})
    (root / "ingest.toml").write_text(WITHOUT)

    code, checked = cli("verify", root, *store_args)
    assert code == 1, checked
    assert checked["unknown_labels"] == [
        "access label 'secret' is not one of [access] labels (public, partner, staff): the store holds 1 document "
        "version(s), 1 chunk(s) under it: plans@1; the next `ingest run` takes them out"
    ], checked

    code, data = cli("run", root, *store_args, *MODES[mode])
    assert code == 1, data
    said = " | ".join(next(p["problems"] for p in data["problems"] if p["source"] == "documents/plans.md"))
    assert "access: unknown access label 'secret' (labels: public, partner, staff)" in said, said
    assert (
        "its access label 'secret' is no longer one of [access] labels (public, partner, staff): "
        "the stored version plans@1 is withdrawn"
    ) in said, said
    assert [(i["action"], i["reason"].split(":")[0]) for i in data["plan"] if i["document"] == "plans@1"] == [
        ("removed", "withdrawn")
    ], data["plan"]
    assert data["documents"]["removed"] == 1 and data["documents"]["rejected"] == 1, data["documents"]

    assert "secret" not in by_access(store_args)
    assert board_reads(store_args) == {"open"}
    code, checked = cli("verify", root, *store_args)
    assert checked["unknown_labels"] == [] and checked["stale_in_store"] == [], checked
    assert code == 0, checked
    # the next run (fast no-op check included) keeps it out, and says why
    code, again = cli("run", root, *store_args)
    assert code == 1 and again["documents"]["rejected"] == 1, again
    assert "secret" not in by_access(store_args)


@pytest.mark.elasticsearch
def test_no_alias_of_the_prefix_reads_a_dropped_label_by_id(es_url, es_prefix, tmp_path):
    from elasticsearch import Elasticsearch

    store_args = ["--store", es_url, "--index-prefix", es_prefix]
    root = corpus(tmp_path)
    assert cli("run", root, *store_args)[0] == 0
    (chunk_id,) = [c["chunk_id"] for c in cli("chunks", "plans", *store_args)[1]["chunks"]]
    (root / "ingest.toml").write_text(WITHOUT)
    assert cli("run", root, *store_args)[0] == 1
    es = Elasticsearch(es_url, request_timeout=30)
    try:
        for alias in (f"{es_prefix}-chunks", f"{es_prefix}-chunks-board", f"{es_prefix}-chunks-public"):
            found = es.mget(index=alias, ids=[chunk_id])["docs"]
            assert not any(doc.get("found") for doc in found), (alias, found)
            hits = es.search(index=alias, query={"term": {"access": "secret"}})["hits"]["total"]["value"]
            assert hits == 0, alias
    finally:
        es.close()
