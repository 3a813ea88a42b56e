"""--as-of / as_of take a YYYY-MM-DD date, exactly ``today`` or exactly ``any`` and nothing else:
``none``/``None`` (what ``str(None)`` gives a service by mistake), ``Any``, ``Today`` or ``all`` never
turn the date filter off or on by a guess; a questions.yaml as_of is a YYYY-MM-DD date only."""

from __future__ import annotations

import json

import pytest

import ingest
from ingest.api import as_of_date
from ingest.evaluate import QuestionsError, load_questions
from tests.corpus_builder import write_doc
from tests.helpers import ingest_cli

SPELLINGS = ["none", "None", "NONE", "Any", "ANY", "all", "Today", "TODAY", "null", "today ", "any\n"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("asof")
    corpus = tmp / "corpus"
    write_doc(corpus, "old.md", "rate", version="1", effective_to="2020-12-31", salt="zebra")
    write_doc(corpus, "new.md", "rate", version="2", effective_from="2021-01-01", salt="zebra")
    url = f"sqlite:///{tmp / 'index.sqlite'}"
    assert ingest_cli("run", corpus, "--store", url, "-q").returncode == 0
    return url


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_undocumented_as_of_spelling_is_a_usage_error(store, spelling):
    done = ingest_cli("search", "zebra", "--store", store, "--as-of", spelling, "--json")
    assert done.returncode == 2, done.stdout
    assert f"--as-of {spelling!r} is not a YYYY-MM-DD date" in json.loads(done.stdout)["error"]


def test_today_and_any_still_work(store):
    today = json.loads(ingest_cli("search", "zebra", "--store", store, "--as-of", "today", "--json").stdout)
    every = json.loads(ingest_cli("search", "zebra", "--store", store, "--as-of", "any", "--json").stdout)
    assert {h["version"] for h in today["hits"]} == {"2"}
    assert {h["version"] for h in every["hits"]} == {"1", "2"}


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_api_refuses_the_same_spellings(store, spelling):
    with pytest.raises(ValueError, match="is not a YYYY-MM-DD date"):
        as_of_date(spelling)
    with ingest.open_store(store) as index, pytest.raises(ValueError, match="is not a YYYY-MM-DD date"):
        index.search("zebra", as_of=spelling)


@pytest.mark.parametrize("spelling", ["none", "any", "20250101", "2025-W01-1"])
def test_a_questions_as_of_is_a_plain_date(tmp_path, spelling):
    path = tmp_path / "questions.yaml"
    path.write_text(f"- id: q1\n  question: zebra\n  category: c\n  as_of: '{spelling}'\n", encoding="utf-8")
    with pytest.raises(QuestionsError, match="is not a YYYY-MM-DD date"):
        load_questions(path)
