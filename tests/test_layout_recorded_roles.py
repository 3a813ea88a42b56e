"""A role narrowed in [roles], then `ingest layout`, as a user does it, on both stores: the role's
searches stop reading the label, `stats` shows the narrowed roles, and `layout --check` and `verify`
report the same thing before (a difference) and after (none)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ingest.cli import app
from tests.corpus_builder import write_doc

runner = CliRunner()
NARROWED = '[roles]\npublic = ["public"]\npartner = ["public"]\nstaff = ["public", "partner", "staff"]\n'


def ingest(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def found_by(role, store_args):
    ran = ingest("search", "dealer", "--role", role, "--as-of", "any", *store_args, "--json")
    assert ran.exit_code == 0, ran.output
    return {hit["doc_id"] for hit in json.loads(ran.stdout)["hits"]}


def differences(corpus, store_args):
    """(layout --check's exit code and count, verify's exit code and access_layout count)."""
    checked = ingest("layout", corpus, "--check", *store_args, "--json")
    verified = ingest("verify", corpus, *store_args, "--json")
    return (checked.exit_code, len(json.loads(checked.stdout)["changes"])), (
        verified.exit_code,
        len(json.loads(verified.stdout)["access_layout"]),
    )


def test_layout_narrows_the_role_and_the_roles_stats_shows(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "prt.md", "dealer", access="partner")
    write_doc(corpus, "pub.md", "handbook", extra="\nThe dealer desk opens at nine.\n")
    assert ingest("run", corpus, *store_args, "-q").exit_code == 0
    assert found_by("partner", store_args) == {"dealer", "handbook"}
    (corpus / "ingest.toml").write_text(NARROWED, encoding="utf-8")
    (check_code, check_count), (verify_code, verify_count) = differences(corpus, store_args)
    assert check_code == verify_code == 1 and check_count == verify_count > 0
    assert ingest("layout", corpus, *store_args).exit_code == 0
    assert found_by("partner", store_args) == {"handbook"}
    assert found_by("staff", store_args) == {"dealer", "handbook"}
    stats = json.loads(ingest("stats", *store_args, "--json").stdout)
    assert stats["meta"]["roles"]["partner"] == ["public"]
    assert differences(corpus, store_args) == ((0, 0), (0, 0))
