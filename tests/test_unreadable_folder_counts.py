"""An unreadable sub-folder of documents/ is one rejected input everywhere a run reports it: the plain
summary, --json and --junit count it alike, the run exits 1, the versions stored from it are kept, an
inventory entry for a file in it is not called "names no file", and verify says it did not check them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import CONNECTION_ENV
from tests.test_hostile_files import _unprivileged

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = "documents/support"


@pytest.fixture
def corpus(tmp_path):
    target = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus", target)
    yield target
    (target / SUPPORT).chmod(0o755)


def cli(prefix: list[str], *args: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "ingest.cli", *map(str, args)],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )  # fmt: skip


def test_an_unreadable_sub_folder_counts_as_rejected_in_every_report(corpus, store_args, tmp_path):
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be taken away from root")
    first = cli(prefix, "run", corpus, *store_args, "--json")
    assert first.returncode == 0, first.stderr
    stored = json.loads(first.stdout)["chunks"]["total"]
    (corpus / SUPPORT).chmod(0o000)

    plain = cli(prefix, "run", corpus, *store_args, "--junit", tmp_path / "run.xml")
    assert plain.returncode == 1, (plain.stdout, plain.stderr)
    assert "✗ rejected documents/support" in plain.stdout
    assert "1 rejected, 0 removed" in plain.stdout
    assert "names no file" not in plain.stdout  # the inventory's support/ entries are in the unreadable folder
    suite = ET.parse(tmp_path / "run.xml").getroot()
    assert suite.get("failures") == "1"

    done = cli(prefix, "run", corpus, *store_args, "--json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["documents"]["rejected"] == 1 and data["documents"]["removed"] == 0, data["documents"]
    assert [p["source"] for p in data["problems"]] == [SUPPORT]
    assert data["chunks"]["total"] == stored  # what was stored from it is kept

    validated = json.loads(cli(prefix, "validate", corpus, "--json").stdout)
    assert validated["rejected"] == 1

    checked = cli(prefix, "verify", corpus, *store_args)
    assert "unreadable folders: 1  documents/support" in checked.stdout, checked.stdout
    assert "rejected documents in the folder" not in checked.stdout
    assert json.loads(cli(prefix, "verify", corpus, *store_args, "--json").stdout)["unreadable_folders"] == [SUPPORT]


@pytest.mark.parametrize("mode", ["incremental", "--full"])
def test_an_inventory_entry_narrowing_a_file_in_an_unreadable_folder_withdraws_its_version(
    corpus, store_args, tmp_path, mode
):
    """The folder cannot be read, but inventory.yaml now gives support/faq.md access staff: its public
    version must not stay readable (as for an unreadable file); the folder's other versions are kept."""
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be taken away from root")
    assert cli(prefix, "run", corpus, *store_args).returncode == 0
    inventory = corpus / "inventory.yaml"
    inventory.write_text(inventory.read_text().replace("support/faq.md:\n  access: public", "support/faq.md:\n  access: staff"))
    (corpus / SUPPORT).chmod(0o000)
    args = ("--full",) if mode == "--full" else ()
    done = cli(prefix, "run", corpus, *store_args, *args, "--json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    removed = {item["document"]: item["reason"] for item in data["plan"] if item["action"] == "removed"}
    assert list(removed) == ["support-faq@7"], data["plan"]
    assert "access 'public' → 'staff'" in removed["support-faq@7"]
    public = cli(prefix, "search", "frequently asked questions owners", "--role", "public", "--top", "50", *store_args, "--json")
    assert "support-faq" not in {h["doc_id"] for h in json.loads(public.stdout)["hits"]}
    kept = cli(prefix, "search", "winter lay up outboard", "--role", "public", *store_args, "--json")
    assert "winter-layup-checklist" in {h["doc_id"] for h in json.loads(kept.stdout)["hits"]}


def test_seen_and_the_junit_cases_count_the_unreadable_folder_like_rejected(corpus, store_args, tmp_path):
    """seen = indexed + unchanged + rejected, and one JUnit case per seen input: the folder is one input
    (outside pass: `seen` left it out while `rejected` counted it, and --junit added a `kept` case per
    stored version in it)."""
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be taken away from root")
    assert cli(prefix, "run", corpus, *store_args, "--quiet").returncode == 0
    (corpus / SUPPORT).chmod(0o000)

    done = cli(prefix, "run", corpus, *store_args, "--json", "--junit", tmp_path / "run.xml")

    assert done.returncode == 1, done.stderr
    counts = json.loads(done.stdout)["documents"]
    assert counts["rejected"] == 1 and counts["indexed"] == 0
    assert counts["seen"] == counts["unchanged"] + counts["rejected"], counts
    suite = ET.parse(tmp_path / "run.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == (str(counts["seen"]), "1")
    assert {case.get("classname") for case in suite.iter("testcase")} == {"ingest.run.unchanged", "ingest.run.rejected"}

    plain = cli(prefix, "run", corpus, *store_args)
    assert f"documents: {counts['seen']} seen, 0 indexed, {counts['unchanged']} unchanged, 1 rejected" in plain.stdout
    validated = cli(prefix, "validate", corpus, "--json")
    data = json.loads(validated.stdout)
    assert data["documents"] == data["valid"] + data["rejected"] == counts["seen"]
    assert ", 1 unreadable folder)" in cli(prefix, "validate", corpus).stdout
