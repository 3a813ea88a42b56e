"""The documented Python API: the README's example, run as a script against both stores, finds
exactly what `ingest search` finds; `ingest.run` and role resolution work without the CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ingest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "corpus"
CONNECTION_ENV = ("INGEST_STORE", "ELASTIC_CLOUD_ID", "ELASTICSEARCH_URL", "INGEST_INDEX_PREFIX", "ES_API_KEY",
                  "ELASTIC_API_KEY", "ES_USERNAME", "ES_PASSWORD")
QUERY, ROLE, AS_OF = "warranty period months", "partner", "2025-08-01"


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- api-example -->\s*```python\n(.*?)```", text, re.S)
    assert match, "README has no <!-- api-example --> python block"
    return match.group(1)


def env_for(store: str, prefix: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    env["INGEST_STORE"] = store
    if prefix:
        env["INGEST_INDEX_PREFIX"] = prefix
    return env


def example_vs_cli(store: str, prefix: str | None, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(readme_example(), encoding="utf-8")
    env = env_for(store, prefix)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from_api = [line.split()[0] for line in done.stdout.splitlines()]
    cli = subprocess.run([sys.executable, "-m", "ingest.cli", "search", QUERY, "--role", ROLE, "--as-of", AS_OF, "--top", "5", "--json"],
                         env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    from_cli = [h["chunk_id"] for h in json.loads(cli.stdout)["hits"]]
    assert from_api and from_api == from_cli


def test_readme_example_matches_ingest_search_on_sqlite(tmp_path):
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    result = ingest.run(SAMPLE, store)
    assert result.ok and result.to_json()["documents"]["indexed"] == 33
    example_vs_cli(store, None, tmp_path)


@pytest.mark.elasticsearch
def test_readme_example_matches_ingest_search_on_elasticsearch(es_url, es_prefix, tmp_path):
    with ingest.open_store(es_url, es_prefix) as index:
        result = ingest.run(SAMPLE, index)
        assert result.ok, result.to_json()["problems"]
        hits = index.search(QUERY, role=ROLE, as_of=AS_OF)
        assert hits and all(h.chunk.access in ("public", "partner") for h in hits)
    example_vs_cli(es_url, es_prefix, tmp_path)


def test_roles_resolve_in_the_library(tmp_path):
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    ingest.run(SAMPLE, store)
    with ingest.open_store(store, create=False) as index:
        assert ingest.labels_for_role(index.store, "public") == ("public",)
        assert set(index.labels_for("staff")) >= {"public", "partner", "staff"}
        with pytest.raises(ingest.UnknownRole, match="unknown role 'auditor'"):
            index.search("warranty", role="auditor")
        public = index.search("dealer discount", role="public", as_of=None, top=20)
        partner = index.search("dealer discount", role="partner", as_of=None, top=20)
        assert {h.chunk.access for h in public} == {"public"}
        assert "partner" in {h.chunk.access for h in partner}
        # as_of: a date before a version took effect finds the older version
        old = index.search("warranty period months", as_of="2025-01-15", top=1)
        new = index.search("warranty period months", as_of="2025-08-01", top=1)
        assert old[0].chunk.version != new[0].chunk.version
        assert isinstance(old[0], ingest.Hit) and isinstance(old[0].chunk, ingest.Chunk)


def test_a_missing_sqlite_file_is_an_error_for_a_reader(tmp_path):
    with pytest.raises(ingest.StoreError):
        with ingest.open_store(f"sqlite:///{tmp_path / 'nope.sqlite'}", create=False) as index:
            index.search("anything")


def test_a_new_empty_sqlite_store_answers_no_index_not_no_hits(tmp_path):
    """Opening a store that did not exist makes an empty file; searching it must not look like
    "no hits" to the caller (nor to a later `ingest search` in that folder)."""
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    with ingest.open_store(url) as index, pytest.raises(ingest.StoreError, match="no ingest index in .* yet"):
        index.search("warranty")
    done = subprocess.run(
        [sys.executable, "-m", "ingest", "search", "warranty", "--store", url], capture_output=True, text=True
    )
    assert done.returncode == 3 and "no index here yet" in done.stderr, done.stderr


def test_a_malformed_url_is_a_config_error():
    with pytest.raises(ingest.ConfigError, match="malformed URL"):
        ingest.open_store("http://[::1")


def test_labels_for_role_takes_what_open_store_returns(tmp_path):
    """The documented ingest.labels_for_role(store, role) is called with the Index that
    ingest.open_store returns (it raised AttributeError: 'Index' has no get_meta)."""
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    ingest.run(SAMPLE, store)
    with ingest.open_store(store, create=False) as index:
        assert ingest.labels_for_role(index, "public") == ("public",)
        assert set(ingest.labels_for_role(index, "staff")) >= {"public", "partner", "staff"}
        with pytest.raises(ingest.UnknownRole, match="unknown role 'auditor'"):
            ingest.labels_for_role(index, "auditor")


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"top": -1}, ValueError, "top must be from 1 to 1000"),  # returned every chunk
        ({"top": 0}, ValueError, "top must be from 1 to 1000"),
        ({"top": 10**9}, ValueError, "top must be from 1 to 1000"),
        ({"top": "5"}, TypeError, "top must be an integer"),
        ({"top": True}, TypeError, "top must be an integer"),
        ({"as_of": 20260101}, TypeError, "as_of must be a datetime.date, a 'YYYY-MM-DD' string"),  # was accepted
        ({"as_of": "2026-13-01"}, ValueError, "as_of '2026-13-01' is not a YYYY-MM-DD date"),
        ({"doc_id": ["warranty-policy"]}, TypeError, r"doc_id must be one doc_id string or None, not list"),
        ({"role": ["public"]}, TypeError, "role must be a string, not list"),
    ],
)
def test_search_arguments_of_the_wrong_kind_are_refused_naming_the_argument(tmp_path, arguments, error, message):
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    ingest.run(SAMPLE, store)
    with ingest.open_store(store, create=False) as index:
        with pytest.raises(error, match=message):
            index.search("warranty", **arguments)
        with pytest.raises(TypeError, match="doc_id must be a string, not list"):
            index.chunks(["warranty-policy"])  # type: ignore[arg-type]
        assert len(index.search("warranty", top=1)) == 1  # the bounds themselves are fine
        assert len(index.search("warranty", top=1000, as_of=None)) > 1


def test_cli_top_is_bounded_like_the_api(tmp_path):
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    ingest.run(SAMPLE, store)
    for command in (["search", "warranty"], ["eval", str(SAMPLE / "questions.yaml")]):
        for top in ("-1", "0", "1001"):
            done = subprocess.run([sys.executable, "-m", "ingest", *command, "--store", store, "--top", top],
                                  capture_output=True, text=True, timeout=120, cwd=tmp_path)
            assert done.returncode == 2, (command, top, done.stdout, done.stderr)


@pytest.mark.parametrize("value", ["20260101", "2026-W01-1", "2026-1-1", "2026-01-01T00:00", ""])
def test_as_of_takes_only_a_yyyy_mm_dd_date(value):
    from ingest.api import as_of_date

    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        as_of_date(value)


def test_as_of_words_and_dates():
    from datetime import date

    from ingest.api import as_of_date

    assert as_of_date("2026-01-05") == date(2026, 1, 5)
    with pytest.raises(ValueError, match="is not a YYYY-MM-DD date"):
        as_of_date(" 2026-01-05 ")  # README: no other form is guessed at
    assert as_of_date("today") == date.today() and as_of_date("any") is None and as_of_date(None) is None
    for word in ("Today", "ANY", "none", "None", "all"):  # exactly "today" and "any": str(None) is no date
        with pytest.raises(ValueError, match="is not a YYYY-MM-DD date"):
            as_of_date(word)
