"""SQLite keeps its role map (the labels each role's searches read) in the store, as Elasticsearch
keeps role aliases: `layout` makes it follow [roles], `layout --check` and `verify` report differences."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ingest.cli import app
from tests.corpus_builder import write_doc

runner = CliRunner()
NARROWED = '[roles]\npublic = ["public"]\npartner = ["public"]\nstaff = ["public", "partner", "staff"]\n'


def ingest(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def partner_hits(store):
    data = json.loads(ingest("search", "dealer", "--role", "partner", "--store", store, "--json").stdout)
    return [hit["doc_id"] for hit in data["hits"]]


def test_a_narrowed_role_is_reported_and_repaired_on_sqlite(tmp_path):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "prt.md", "dealer", access="partner")
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    assert ingest("run", corpus, "--store", store, "-q").exit_code == 0
    assert partner_hits(store) == ["dealer"] * len(partner_hits(store)) != []
    (corpus / "ingest.toml").write_text(NARROWED, encoding="utf-8")
    checked = ingest("layout", corpus, "--check", "--store", store)
    assert checked.exit_code == 1, checked.output
    assert "role 'partner' reads 'partner' in the store" in checked.stdout
    assert "access layout: 1 difference(s)" in checked.stdout
    verified = ingest("verify", corpus, "--store", store, "--json")
    assert verified.exit_code == 1 and json.loads(verified.stdout)["access_layout"] != []
    changed = ingest("layout", corpus, "--store", store)
    assert changed.exit_code == 0 and "access layout: 1 change(s)" in changed.stdout
    assert partner_hits(store) == []
    assert ingest("layout", corpus, "--check", "--store", store).exit_code == 0
    assert ingest("verify", corpus, "--store", store, "-q").exit_code == 0


def test_a_run_follows_roles_first_on_sqlite(tmp_path):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "prt.md", "dealer", access="partner")
    store = f"sqlite:///{tmp_path / 'index.sqlite'}"
    assert ingest("run", corpus, "--store", store, "-q").exit_code == 0
    (corpus / "ingest.toml").write_text(NARROWED, encoding="utf-8")
    dry = ingest("run", corpus, "--store", store, "--dry-run", "--json")
    assert json.loads(dry.stdout)["access_repaired"] != [] and partner_hits(store) != []
    ingest("run", corpus, "--store", store, "-q")
    assert partner_hits(store) == []
