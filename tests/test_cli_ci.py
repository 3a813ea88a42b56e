"""The CLI as CI and people use it: exit codes (2 for misconfiguration, 4 for a bug), JUnit
reports, eval gates, `run --strict`, quiet/verbose output, escaped paths, help and completion."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ingest.cli import app
from tests.corpus_builder import make_corpus, write_doc

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "corpus"
runner = CliRunner()
CONNECTION_ENV = ("INGEST_STORE", "ELASTIC_CLOUD_ID", "ELASTICSEARCH_URL", "ES_API_KEY", "ELASTIC_API_KEY", "ES_USERNAME", "INGEST_DEBUG")


@pytest.fixture(autouse=True)
def no_connection_env(monkeypatch):
    for name in CONNECTION_ENV:
        monkeypatch.delenv(name, raising=False)


def ingest(*args, env=None):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False, env=env)


def cli(*args, env=None, cwd=ROOT) -> subprocess.CompletedProcess:
    """The console script's own entry point (main), in a subprocess: real exit codes and streams."""
    full = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "ingest.cli", *map(str, args)], env=full, capture_output=True, text=True,
                          timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory) -> str:
    store = f"sqlite:///{tmp_path_factory.mktemp('sample') / 'index.sqlite'}"
    result = runner.invoke(app, ["run", str(SAMPLE), "--store", store, "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return store


def with_rejected(tmp_path: Path) -> Path:
    corpus = make_corpus(tmp_path / "corpus", n=3)
    write_doc(corpus, "bad.md", "bad-doc", access="nobody-knows-this-label")
    return corpus


# --- exit codes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, env, named",
    [
        (("search", "x", "--store", "http://[::1"), {}, "--store='http://[::1'"),
        (("search", "x", "--store", "http://127.0.0.1:99999"), {}, "'http://127.0.0.1:99999'"),
        (("stats", "--store", "ftp://example.org"), {}, "unknown store"),
        (("stats",), {"INGEST_STORE": "http://[::1"}, "INGEST_STORE='http://[::1'"),
        (("stats", "--store", "http://127.0.0.1:9"), {"INGEST_ES_ANALYZER": "klingon"}, "INGEST_ES_ANALYZER='klingon'"),
        (("stats", "--store", "http://127.0.0.1:9", "--timeout", "-1"), {}, "--timeout='-1.0'"),
        (("stats", "--store", "http://127.0.0.1:9"), {"INGEST_TIMEOUT": "soon"}, "INGEST_TIMEOUT='soon'"),
        (("stats", "--store", "http://127.0.0.1:9", "--ssl-assert-fingerprint", "abc"), {}, "'abc'"),
        (("stats", "--cloud-id", "not-a-cloud-id"), {}, "not an Elastic Cloud ID"),
    ],
)
def test_misconfiguration_is_exit_2_naming_key_and_value(args, env, named, tmp_path):
    done = cli(*args, env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert named in done.stderr


@pytest.mark.parametrize("variable", ["INGEST_WRITE_BATCH_CHUNKS", "INGEST_WORKERS"])
def test_a_bad_number_in_the_environment_is_exit_2_not_a_traceback(variable, tmp_path):
    corpus = make_corpus(tmp_path / "corpus", n=1)
    done = cli("run", corpus, "--store", f"sqlite:///{tmp_path / 'i.sqlite'}", env={variable: "abc"})
    assert done.returncode == 2, done.stderr
    assert f"{variable}='abc' is not a whole number" in done.stderr and "Traceback" not in done.stderr


def test_an_internal_error_is_exit_4_in_one_line_and_the_traceback_only_with_debug(tmp_path, monkeypatch):
    import ingest.corpus as corpus_module

    def broken(*args, **kwargs):
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(corpus_module, "scan_corpus", broken)
    corpus = make_corpus(tmp_path / "corpus", n=1)
    quiet = ingest("validate", corpus)
    assert quiet.exit_code == 4
    assert "internal error (a bug" in quiet.stderr and "ZeroDivisionError: simulated bug" in quiet.stderr
    assert "--debug" in quiet.stderr and "Traceback" not in quiet.stderr
    as_json = ingest("validate", corpus, "--json")
    assert json.loads(as_json.stdout)["exit_code"] == 4
    loud = ingest("--debug", "validate", corpus)
    assert loud.exit_code == 4 and "Traceback" in loud.stderr
    by_env = ingest("validate", corpus, env={"INGEST_DEBUG": "1"})
    assert by_env.exit_code == 4 and "Traceback" in by_env.stderr


def test_debug_is_accepted_after_the_command_too(tmp_path):
    corpus = make_corpus(tmp_path / "corpus", n=1)
    done = cli("validate", corpus, "--debug")
    assert done.returncode == 0, done.stderr


def test_an_empty_store_never_passes_eval(tmp_path):
    empty = tmp_path / "empty"
    (empty / "documents").mkdir(parents=True)
    store = f"sqlite:///{tmp_path / 'e.sqlite'}"
    assert ingest("run", empty, "--store", store).exit_code == 0
    done = ingest("eval", SAMPLE / "questions.yaml", "--store", store, "--json")
    assert done.exit_code == 1
    data = json.loads(done.stdout)
    assert data["gate"]["passed"] is False and "no question got any passage back" in data["gate"]["failures"][0]


# --- gates and reports ----------------------------------------------------------------------------


def test_eval_gate_fails_below_min_hit_at_k_and_passes_at_it(sample_store):
    low = ingest("eval", SAMPLE / "questions.yaml", "--store", sample_store, "--top", "1", "--min-hit-at-k", "0.99", "--json")
    data = json.loads(low.stdout)
    assert data["hit_at_k"] < 0.99 and low.exit_code == 1
    assert "below --min-hit-at-k 0.99" in data["gate"]["failures"][0]
    ok = ingest("eval", SAMPLE / "questions.yaml", "--store", sample_store, "--top", "1", "--min-hit-at-k", str(data["hit_at_k"]))
    assert ok.exit_code == 0, ok.output
    assert {"k", "questions", "hit_at_k", "mrr", "by_category", "missed", "leaks"} <= set(data)


def test_eval_junit_has_one_case_per_question_and_failures_with_reasons(sample_store, tmp_path):
    report = tmp_path / "reports" / "eval.xml"
    done = ingest("eval", SAMPLE / "questions.yaml", "--store", sample_store, "--top", "1", "--junit", report, "--json")
    data = json.loads(done.stdout)
    suite = ET.parse(report).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == data["questions"]
    failed = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert set(failed) == set(data["missed"]) and failed
    assert all("missed: no relevant passage in the top 1" in f.text for f in failed.values() if f.text.startswith("missed"))
    assert int(suite.get("failures")) == len(failed)


def test_validate_and_run_junit_have_one_case_per_document(tmp_path):
    corpus = with_rejected(tmp_path)
    for command, extra in (("validate", ()), ("run", ("--store", f"sqlite:///{tmp_path / 'i.sqlite'}"))):
        report = tmp_path / f"{command}.xml"
        done = ingest(command, corpus, *extra, "--junit", report)
        assert done.exit_code == 1
        cases = ET.parse(report).getroot().iter("testcase")
        by_name = {c.get("name"): c for c in cases}
        assert len(by_name) == 4, list(by_name)
        bad = by_name["documents/bad.md (bad-doc)"]
        assert "nobody-knows-this-label" in bad.find("failure").text
        assert sum(1 for c in by_name.values() if c.find("failure") is not None) == 1


def test_run_strict_writes_nothing_when_a_document_is_rejected(tmp_path):
    corpus = with_rejected(tmp_path)
    store = f"sqlite:///{tmp_path / 'i.sqlite'}"
    strict = ingest("run", corpus, "--store", store, "--strict", "--json")
    assert strict.exit_code == 1
    # the rejected document and the three valid ones --strict did not write (seen = 4, none indexed)
    assert json.loads(strict.stdout)["documents"]["rejected"] == 4
    assert [p["source"] for p in json.loads(strict.stdout)["problems"]] == ["documents/bad.md"]
    # Nothing written: either no index at all (exit 3, said so) or an empty one — never a chunk.
    stats = ingest("stats", "--store", store, "--json")
    if stats.exit_code == 3:
        assert "no index here yet" in json.loads(stats.stdout)["error"]
    else:
        assert stats.exit_code == 0, stats.output
        assert json.loads(stats.stdout)["totals"] == {"chunks": 0, "documents": 0}
    relaxed = ingest("run", corpus, "--store", store, "--json")
    assert relaxed.exit_code == 1 and json.loads(relaxed.stdout)["documents"]["indexed"] == 3
    # once fixed, --strict writes
    (corpus / "documents" / "bad.md").unlink()
    assert ingest("run", corpus, "--store", store, "--strict").exit_code == 0


# --- output --------------------------------------------------------------------------------------


def test_quiet_prints_counts_only_and_verbose_every_document(tmp_path):
    corpus = make_corpus(tmp_path / "corpus", n=4)
    store = f"sqlite:///{tmp_path / 'i.sqlite'}"
    quiet = ingest("run", corpus, "--store", store, "--quiet")
    assert quiet.exit_code == 0
    assert [line.split(":")[0] for line in quiet.stdout.splitlines()] == ["documents", "chunks"]
    verbose = ingest("run", corpus, "--store", store, "--verbose")
    assert verbose.stdout.count("unchanged ") == 4 and "ms per document" in verbose.stdout


def test_a_large_plan_prints_as_a_summary_unless_verbose(tmp_path):
    corpus = tmp_path / "corpus"
    for i in range(60):
        write_doc(corpus, f"d{i}.md", f"doc-{i}")
    store = f"sqlite:///{tmp_path / 'i.sqlite'}"
    done = ingest("run", corpus, "--store", store, "--dry-run")
    assert "plan: 60 new" in done.stdout and len(done.stdout.splitlines()) < 10
    full = ingest("run", corpus, "--store", store, "--dry-run", "--verbose")
    assert full.stdout.count("  new ") == 60


def test_file_names_are_escaped_for_people_and_exact_in_json(tmp_path):
    corpus = make_corpus(tmp_path / "corpus", n=1)
    name = "evil\x1b[2J\n✗ rejected forged"
    (corpus / "documents" / f"{name}.md").write_text("---\ndoc_id: evil\n---\nno version, no title\n", encoding="utf-8")
    human = ingest("validate", corpus)
    assert "\x1b" not in human.stdout
    assert "evil\\x1b[2J\\n✗ rejected forged.md" in human.stdout
    assert not any(line.startswith("✗ rejected forged") for line in human.stdout.splitlines())
    data = json.loads(ingest("validate", corpus, "--json").stdout)
    assert f"documents/{name}.md" in [p["source"] for p in data["problems"]]


def test_stderr_is_not_wrapped_when_not_a_terminal(tmp_path):
    missing = tmp_path / ("a-rather-long-folder-name-" * 4)
    done = cli("validate", missing)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and len(lines[0]) > 100


def test_help_short_option_environment_and_completion():
    top = ingest("-h")
    assert top.exit_code == 0 and "--install-completion" in top.stdout
    for command, variables in (("search", ("INGEST_STORE", "ELASTICSEARCH_URL", "ELASTIC_CLOUD_ID", "ES_CA_CERTS")),
                               ("run", ("INGEST_WRITE_BATCH_CHUNKS", "INGEST_WORKERS", "ES_API_KEY"))):
        done = ingest(command, "-h", env={"COLUMNS": "200"})
        assert done.exit_code == 0, done.output
        flat = " ".join(done.stdout.split())
        for variable in variables:
            assert variable in flat, (command, variable)


def test_the_store_in_use_is_always_said(tmp_path, sample_store):
    human = ingest("stats", "--store", sample_store)
    assert f"store: {sample_store}  [from --store]" in human.stderr
    env = {"INGEST_STORE": sample_store}
    assert f"[from INGEST_STORE]" in ingest("stats", env=env).stderr
    data = json.loads(ingest("search", "fuel", "--json", env=env).stdout)
    assert data["store"] == sample_store


def test_elasticsearch_credentials_without_an_elasticsearch_store_are_warned_about(tmp_path, sample_store):
    done = ingest("stats", "--store", sample_store, env={"ES_API_KEY": "abc"})
    assert done.exit_code == 0
    assert "ES_API_KEY set, but no Elasticsearch store is configured" in done.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_shell_completion_script_is_offered():
    done = cli("--show-completion", "bash", env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"})
    assert done.returncode == 0, done.stderr
    assert "complete" in done.stdout


def test_a_query_too_large_for_the_store_is_a_usage_error(sample_store):
    words = " ".join(f"w{i}" for i in range(5000))
    done = ingest("search", words, "--store", sample_store)
    assert done.exit_code == 2 and "5000 words" in done.stderr
    repeated = ingest("search", " ".join(["warranty"] * 3000), "--store", sample_store)
    assert repeated.exit_code == 2 and "3000 words" in repeated.stderr  # repeats count: clauses
    long_word = ingest("search", "abcdefghij" * 1000, "--store", sample_store)
    assert long_word.exit_code == 2 and "characters" in long_word.stderr


def test_a_name_that_is_not_utf8_is_escaped_for_people_and_exact_in_json(tmp_path):
    corpus = make_corpus(tmp_path / "corpus", n=1)
    raw = os.fsencode(corpus / "documents") + b"/bad\xff\x1b[31mname.md"
    with open(raw, "wb") as handle:
        handle.write(b"no front matter at all\n")
    human = cli("validate", corpus)
    assert "\x1b[31m" not in human.stdout and "bad\\xff\\x1b[31mname.md" in human.stdout, human.stdout
    assert "udcff" not in human.stdout  # one spelling of the name in the whole report
    out = cli("validate", corpus, "--json").stdout
    out.encode("utf-8")  # strict UTF-8: no lone surrogate (a strict JSON reader refuses one)
    data = json.loads(out)
    sources = [p["source"] for p in data["problems"]]
    assert "documents/bad\\xff\x1b[31mname.md" in sources  # spelled as its problem line spells it
    assert "udcff" not in out


@pytest.mark.elasticsearch
def test_layout_checks_and_repairs_role_aliases_by_hand(tmp_path, es_url, es_prefix):
    """`ingest layout --check` reports a staff index added to the public alias (exit 1) and changes
    nothing; `ingest layout` takes it out; the check is then clean (what every run does first)."""
    from elasticsearch import Elasticsearch

    corpus = make_corpus(tmp_path / "corpus")
    store = ("--store", es_url, "--index-prefix", es_prefix)
    assert cli("run", corpus, *store).returncode == 0
    client = Elasticsearch(es_url)
    try:
        staff = next(iter(client.indices.get_alias(index=f"{es_prefix}-chunks_staff_*")))
        client.indices.update_aliases(actions=[{"add": {"index": staff, "alias": f"{es_prefix}-chunks-public"}}])
        checked = cli("layout", corpus, *store, "--check", "--json")
        assert checked.returncode == 1, checked.stderr
        assert any(staff in line for line in json.loads(checked.stdout)["changes"])
        assert staff in client.indices.get_alias(name=f"{es_prefix}-chunks-public")  # --check changed nothing
        repaired = cli("layout", corpus, *store, "--json")
        assert repaired.returncode == 0 and json.loads(repaired.stdout)["changes"], repaired.stderr
        assert staff not in client.indices.get_alias(name=f"{es_prefix}-chunks-public")
        assert cli("layout", corpus, *store, "--check").returncode == 0
    finally:
        client.close()
