"""What an unchanged re-run still does after the no-op speed work (issue 11 item 4): it reconciles
access (foreign indices out of our aliases, closed and hidden ones too), reads what another run wrote
under its own lock, and the command line skips typer's pydantic coercion only where typer would
accept the value as it is (every error stays typer's, word for word)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from elasticsearch import Elasticsearch
from typer._coercion import build_runtime_param

from ingest import pipeline
from ingest.cli import app
from ingest.cli_options import _UNDECIDED, _plain_value
from ingest.journal import JOURNAL
from ingest.settings import Settings
from tests.corpus_builder import make_corpus

# --- Elasticsearch --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["closed", "hidden"])
def test_an_unchanged_run_takes_closed_and_hidden_foreign_indices_out_of_a_role_alias(
    tmp_path, es_url, es_prefix, make_es_store, kind
):
    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    assert pipeline.run(corpus, make_es_store(settings), settings, settings.chunking).ok
    foreign = f"{es_prefix}-x-{kind}"
    alias = f"{es_prefix}-chunks-public"
    client = Elasticsearch(es_url)
    try:
        client.indices.create(index=foreign, settings={"index.hidden": kind == "hidden", "number_of_replicas": 0})
        client.indices.update_aliases(actions=[{"add": {"index": foreign, "alias": alias}}])
        if kind == "closed":
            client.indices.close(index=foreign)
        result = pipeline.run(corpus, make_es_store(settings), settings, settings.chunking)
        assert result.ok and result.written == 0 and result.deleted == 0
        assert result.access_changes == [
            f"removed {foreign} from alias {alias} ({foreign} is not an index of prefix {es_prefix!r})"
        ]
        assert foreign not in client.indices.get_alias(name=alias, expand_wildcards="all")
        assert client.indices.exists(index=foreign)  # not ours: out of our alias, never deleted
        assert make_es_store(settings).reconcile_access(check=True) == []
    finally:
        client.close()


def test_run_metadata_read_before_the_lock_is_read_again_under_it(tmp_path, make_es_store):
    corpus = make_corpus(tmp_path / "corpus")
    settings = Settings()
    assert pipeline.run(corpus, make_es_store(settings), settings, settings.chunking).ok
    store, other = make_es_store(settings), make_es_store(settings)
    store.reconcile_access()  # reads the layout, and the run metadata along with it
    # Another run records its journal after that read and before this run takes the lock.
    with other.lock("another run"):
        other.set_meta({JOURNAL: json.dumps([["doc-1", "1"]])})
    with store.lock("this run"):
        assert store.get_meta()[JOURNAL] == json.dumps([["doc-1", "1"]])


# --- the command line -----------------------------------------------------------------------------

VALUES = [None, "", "x", "5", "007", "0", "-1", "1.5", "1e3", "abc", "1001", " 5", "5 ", 0, 5, 0.0, 2.5, "/", "."]


def _typer_params():
    group = typer.main.get_command(app)
    for name, command in sorted(group.commands.items()):
        for param in command.params:
            if hasattr(param, "type_descriptor") and param.type_descriptor.annotation is not bool:
                yield name, param


def _outcome(coerce):
    """The value, or the message of the refusal (a path that must not be a folder, say)."""
    try:
        return coerce()
    except typer.BadParameter as exc:
        return f"refused: {exc.format_message()}"


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_values_taken_without_typer_coercion_are_what_typer_makes_of_them(value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    decided = 0
    for name, param in _typer_params():
        plain = _outcome(lambda param=param: _plain_value(param, value))
        if plain is _UNDECIDED:
            continue
        decided += 1
        full = build_runtime_param(param.type_descriptor)
        expected = _outcome(lambda param=param, full=full: full.coerce(value, param=param, ctx=None))
        assert plain == expected and type(plain) is type(expected), (name, param.name, value)
    if value is None:
        assert decided  # every absent option is taken as it is


def test_bad_option_values_are_refused_with_typers_message(tmp_path):
    corpus = make_corpus(tmp_path / "corpus")
    cases = {
        ("search", "x", "--top", "0"): "Invalid value for '--top' / '-k': Input should be greater than or equal to 1",
        ("search", "x", "--top", "abc"): "Invalid value for '--top' / '-k': Input should be a valid integer",
        ("run", str(corpus), "--size", "12.5"): "Invalid value for '--size': Input should be a valid integer",
        ("run", str(corpus), "--wait", "soon"): "Invalid value for '--wait': Input should be a valid number",
        ("validate", str(corpus), "--junit", str(tmp_path)): f"Invalid value for '--junit': file '{tmp_path}' is a",
    }
    for args, message in cases.items():
        done = subprocess.run([sys.executable, "-m", "ingest", *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, (args, done.stderr)
        assert message in " ".join(done.stderr.split()), (args, done.stderr)


def test_an_unchanged_sqlite_run_imports_neither_pydantic_nor_the_elasticsearch_client(tmp_path):
    corpus = make_corpus(tmp_path / "corpus")
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    probe = (
        "import sys\n"
        "from ingest.cli import main\n"
        f"sys.argv = ['ingest', 'run', {str(corpus)!r}, '--store', {store!r}, '--json']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "print(code, 'pydantic' in sys.modules, 'elasticsearch' in sys.modules, file=sys.stderr)\n"
    )
    for _ in range(2):  # the first build, then the unchanged run
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
        assert done.stderr.split()[-3:] == ["0", "False", "False"], done.stderr
        assert json.loads(done.stdout)["documents"]["seen"] == 6
    assert Path(tmp_path / "index.sqlite").exists()



def test_an_unchanged_sqlite_run_does_not_load_the_chunker(tmp_path):
    """Nothing to write, nothing to chunk: the chunker's module (and its patterns) stays unloaded."""
    corpus = make_corpus(tmp_path / "corpus")
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    probe = (
        "import sys\n"
        "from ingest.__main__ import main\n"
        f"sys.argv = ['ingest', 'run', {str(corpus)!r}, '--store', {store!r}, '--json']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "print(code, 'ingest.chunk' in sys.modules, file=sys.stderr)\n"
    )
    loaded = []
    for _ in range(2):  # the first build (it chunks), then the unchanged run
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
        assert done.stderr.split()[-2] == "0", done.stderr
        loaded.append(done.stderr.split()[-1])
    assert loaded == ["True", "False"]
