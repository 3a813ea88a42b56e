"""The command line as a user runs it: output formats, JSON shapes and exit codes."""

from __future__ import annotations

import json
import re
import time

import pytest
from typer.testing import CliRunner

from ingest.cli import app
from tests.corpus_builder import make_corpus, write_doc

runner = CliRunner()


def ingest(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def built(tmp_path):
    corpus = make_corpus(tmp_path / "corpus")
    write_doc(corpus, "versions/w4.md", "warranty", version="4", effective_from="2024-01-01", effective_to="2025-06-30",
              status="superseded", superseded_by="warranty@5")
    write_doc(corpus, "versions/w5.md", "warranty", version="5", effective_from="2025-07-01", salt="longer cover")
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    result = ingest("run", corpus, "--store", store, "--json")
    assert result.exit_code == 0, result.output
    return corpus, store


def test_run_json_shape(built, tmp_path):
    corpus, store = built
    data = json.loads(ingest("run", corpus, "--store", store, "--json").stdout)
    assert set(data) >= {"store", "documents", "chunks", "problems", "elapsed_s"}
    assert set(data["documents"]) >= {"seen", "indexed", "unchanged", "rejected", "removed"}
    assert set(data["chunks"]) >= {"written", "deleted", "total"}
    assert data["documents"]["unchanged"] == 8 and data["chunks"]["written"] == 0


def test_chunks_prints_one_line_per_chunk_in_the_spec_format(built):
    _, store = built
    result = ingest("chunks", "doc-0", "--store", store)
    lines = result.stdout.strip().splitlines()
    assert len(lines) >= 2
    pattern = re.compile(r"^[0-9a-f]{12} v1 #(\d+) chars (\d+)-(\d+) pages - \| (\d+) words \| (.+)$")
    positions = [int(pattern.match(line).group(1)) for line in lines]
    assert positions == list(range(len(lines)))
    assert pattern.match(lines[0]).group(5) == "Section 1 of doc-0"  # the title opens it; its text is under Section 1


def test_show_with_context_gives_neighbours_from_the_same_version(built):
    _, store = built
    chunks = json.loads(ingest("chunks", "warranty", "--version", "5", "--store", store, "--json").stdout)["chunks"]
    middle = chunks[1]
    data = json.loads(ingest("show", middle["chunk_id"][:8], "--context", 1, "--store", store, "--json").stdout)
    assert data["chunk"] == middle
    assert [c["chunk_id"] for c in data["before"]] == [chunks[0]["chunk_id"]]
    assert [c["chunk_id"] for c in data["after"]] == [chunks[2]["chunk_id"]]
    assert {c["version"] for c in data["before"] + data["after"]} == {"5"}
    human = ingest("show", middle["chunk_id"][:12], "--context", 1, "--store", store).stdout
    assert "“Warranty: a test document”" in human and "version 5" in human and middle["chunk_id"][:12] in human
    assert chunks[0]["text"].splitlines()[0] in human


def test_search_json_and_filters(built):
    _, store = built
    data = json.loads(ingest("search", "warranty cover", "--as-of", "2025-08-01", "--store", store, "--json").stdout)
    assert set(data) >= {"query", "role", "as_of", "hits"}
    assert data["role"] == "public" and data["as_of"] == "2025-08-01"
    # Only version 5 of warranty is in force that day (with English stemming every test document's
    # "covers" also matches "cover": those are other documents, version 1).
    assert {h["version"] for h in data["hits"] if h["doc_id"] == "warranty"} == {"5"}
    for hit in data["hits"]:
        assert set(hit) >= {"chunk_id", "doc_id", "version", "title", "section", "pages", "start", "end", "access", "score", "text"}
    old = json.loads(ingest("search", "warranty", "--as-of", "2025-01-01", "--store", store, "--json").stdout)
    assert {h["version"] for h in old["hits"]} == {"4"}
    staff = json.loads(ingest("search", "doc", "--role", "public", "--top", 50, "--store", store, "--json").stdout)
    assert {h["access"] for h in staff["hits"]} == {"public"}


def test_quiet_and_verbose_set_how_much_search_stats_and_layout_print(built):
    corpus, store = built
    search = ["search", "warranty cover", "--as-of", "2025-08-01", "--store", store]
    normal, quiet, verbose = (ingest(*search, *flag) for flag in ((), ("-q",), ("--verbose",)))
    assert normal.exit_code == quiet.exit_code == verbose.exit_code == 0
    ranked = [line for line in normal.stdout.splitlines() if re.match(r"^\d+\. ", line)]
    assert ranked and quiet.stdout.splitlines() == ranked  # one line per hit, no passage
    top = json.loads(ingest(*search, "--json").stdout)["hits"][0]["text"]
    assert all(f"   {line}".rstrip() in verbose.stdout for line in top.splitlines())  # the whole passage
    assert re.search(r"^\(\d+\.\d\ds\)$", verbose.stdout, re.M)
    stats_quiet = ingest("stats", "-q", "--store", store).stdout.splitlines()
    assert len(stats_quiet) == 1 and "documents: 8" in stats_quiet[0]
    assert "roles: " in ingest("stats", "-v", "--store", store).stdout
    assert ingest("layout", corpus, "--check", "-q", "--store", store).stdout.strip() == "access layout: 0 difference(s)"


def test_stats_counts(built):
    _, store = built
    data = json.loads(ingest("stats", "--store", store, "--json").stdout)
    assert data["totals"]["documents"] == 8
    assert set(data["access"]) == {"public", "partner", "staff"}
    assert data["format"] == {"markdown": data["totals"]["chunks"]}


def test_usage_errors_exit_2(built, tmp_path):
    corpus, store = built
    assert ingest("search", "x", "--as-of", "yesterday", "--store", store).exit_code == 2
    assert ingest("search", "x", "--role", "ceo", "--store", store).exit_code == 2
    assert ingest("run", tmp_path / "nowhere", "--store", store).exit_code == 2
    assert ingest("run", corpus, "--chunker", "sentences", "--store", store).exit_code == 2
    bad = json.loads(ingest("run", corpus, "--chunker", "sentences", "--store", store, "--json").stdout)
    assert bad["exit_code"] == 2 and "unknown chunker" in bad["error"]
    # Values no other ISO form or number may stand for: refused, never guessed or crashed on (exit 4).
    for args in (
        ("search", "x", "--as-of", "20260101"),
        ("search", "x", "--as-of", "2026-W01-1"),
        ("run", corpus, "--wait", "nan"),
        ("run", corpus, "--wait", "-1"),
        ("run", corpus, "--size", "99999999999999999999"),
        ("show", "abc", "--context", "99999999999999999999"),
    ):
        result = ingest(*args, "--store", store, "--json")
        assert result.exit_code == 2, (args, result.stdout)
    assert ingest("search", "warranty", "--as-of", "today", "--store", store).exit_code == 0


def test_unknown_chunk_exits_1(built):
    _, store = built
    assert ingest("show", "0123456789abcdef", "--store", store).exit_code == 1


def test_unreachable_elasticsearch_exits_3_fast_and_writes_nothing(built):
    corpus, _ = built
    started = time.monotonic()
    result = ingest("run", corpus, "--store", "http://127.0.0.1:1", "--json")
    assert result.exit_code == 3
    assert time.monotonic() - started < 15
    data = json.loads(result.stdout)
    assert "http://127.0.0.1:1" in data["error"]


def test_validate_json_and_exit_codes(built, tmp_path):
    corpus, _ = built
    ok = ingest("validate", corpus, "--json")
    assert ok.exit_code == 0
    data = json.loads(ok.stdout)
    assert (data["documents"], data["valid"], data["rejected"], data["problems"]) == (8, 8, 0, [])
    (corpus / "documents" / "broken.md").write_text("---\ndoc_id: Not A Slug\nversion: '1'\ntitle: x\naccess: secret\n---\n# A\n\ntext\n")
    bad = ingest("validate", corpus, "--json")
    assert bad.exit_code == 1
    [problem] = json.loads(bad.stdout)["problems"]
    assert problem["source"] == "documents/broken.md" and len(problem["problems"]) == 2


def test_more_usage_errors_exit_2_and_write_nothing(built, tmp_path):
    corpus, store = built
    before = json.loads(ingest("stats", "--store", store, "--json").stdout)["totals"]
    assert ingest("run", corpus, "--chunker", "fixed", "--size", 0, "--store", store).exit_code == 2
    assert ingest("run", corpus, "--store", "foo://x").exit_code == 2
    assert ingest("show", "1234", "--store", store).exit_code == 2
    assert ingest("parse", tmp_path / "nothere.md").exit_code == 2
    (corpus / "ingest.toml").write_text('[acces]\nlabels = ["x"]\n')
    result = ingest("run", corpus, "--store", store, "--json")
    assert result.exit_code == 2 and "unknown section [acces]" in json.loads(result.stdout)["error"]
    (corpus / "ingest.toml").unlink()
    (corpus / "inventory.yaml").write_text("folder0/doc0.md: {access: staff\n")
    result = ingest("run", corpus, "--store", store, "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"].startswith("inventory.yaml: not valid YAML")
    assert json.loads(ingest("stats", "--store", store, "--json").stdout)["totals"] == before


def test_reading_a_store_that_does_not_exist_is_an_error_not_a_new_index(tmp_path):
    missing = tmp_path / "typo.sqlite"
    for args in (["search", "x"], ["stats"], ["chunks", "doc"], ["show", "0123456789ab"]):
        result = ingest(*args, "--store", f"sqlite:///{missing}", "--json")
        assert result.exit_code == 3, args
        assert "no index here yet" in json.loads(result.stdout)["error"]
    assert not missing.exists()


def test_dry_run_projects_the_totals_the_run_then_reaches(built):
    corpus, store = built
    (corpus / "documents/folder1/doc1.md").unlink()
    write_doc(corpus, "folder0/doc0.md", "doc-0", version="2", salt="a longer text " * 30)
    plan = json.loads(ingest("run", corpus, "--dry-run", "--store", store, "--json").stdout)
    done = json.loads(ingest("run", corpus, "--store", store, "--json").stdout)
    assert plan["chunks"] == done["chunks"]
    removed = {p["document"]: p["reason"] for p in done["plan"] if p["action"] == "removed"}
    assert removed["doc-0@1"] == "version 1 no longer in the folder (it has 2)"
    assert removed["doc-1@1"] == "version 1 no longer in the folder"


def test_full_rebuild_counts_what_it_replaced(built):
    corpus, store = built
    total = json.loads(ingest("stats", "--store", store, "--json").stdout)["totals"]["chunks"]
    data = json.loads(ingest("run", corpus, "--full", "--chunker", "fixed", "--size", 50, "--store", store, "--json").stdout)
    assert data["chunks"]["deleted"] == total  # every old ID differs from the fixed-window IDs
    assert data["chunks"]["total"] == data["chunks"]["written"]


def test_verify_shows_a_file_edited_without_a_version_bump(built):
    corpus, store = built
    write_doc(corpus, "folder0/doc0.md", "doc-0", salt="edited quietly")
    assert ingest("run", corpus, "--store", store).exit_code == 1
    human = ingest("verify", corpus, "--store", store).stdout
    assert "edited in the folder without a version bump: 1  doc-0@1" in human


def test_an_empty_folder_does_not_wipe_the_store_unless_asked(built):
    corpus, store = built
    for path in sorted((corpus / "documents").rglob("*.md")):
        path.unlink()
    refused = ingest("run", corpus, "--store", store, "--json")
    assert refused.exit_code == 2 and "--allow-empty" in json.loads(refused.stdout)["error"]
    assert json.loads(ingest("stats", "--store", store, "--json").stdout)["totals"]["documents"] == 8
    emptied = json.loads(ingest("run", corpus, "--allow-empty", "--store", store, "--json").stdout)
    assert emptied["documents"]["removed"] == 8 and emptied["chunks"]["total"] == 0


def test_layout_help_keeps_the_bracketed_section_name():
    """Rich markup took "[roles]" for a style tag and printed "ingest.toml  the aliases"."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    done = subprocess.run([sys.executable, "-m", "ingest", "layout", "--help"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "Make every role alias match [roles]" in done.stdout
    assert "ingest.toml [roles] the aliases must follow" in done.stdout
