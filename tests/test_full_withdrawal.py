"""`run --full` withdraws what an incremental run withdraws, and says so the same way: a stored version
whose file is now rejected and narrows its access is reported "withdrawn", with the reason on the file's
problem record, and remembered, so that its text edited without a version bump is refused afterwards."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.helpers import cli_json as cli

FILE = "documents/policies/warranty-policy-v4.md"


def edit(path: Path, *pairs: tuple[str, str]) -> None:
    text = path.read_text()
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new)
    path.write_text(text)


@pytest.mark.parametrize("full", [False, True], ids=["incremental", "--full"])
def test_a_withdrawn_version_is_reported_and_remembered_by_a_full_run_too(full, store_args, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus", corpus)
    assert cli("run", corpus, *store_args)[0] == 0
    path = corpus / FILE
    # rejected (a bad date) and narrowed to staff: the public version must go, and say why
    edit(path, ("access: public", "access: staff"), ("effective_from: 2024-01-01", "effective_from: 2024-13-01"))
    code, data = cli("run", corpus, *store_args, *(["--full"] if full else []))
    assert code == 1
    removed = [i for i in data["plan"] if i["document"] == "warranty-policy@4"]
    assert [(i["action"], i["reason"].split(":")[0]) for i in removed] == [("removed", "withdrawn")], removed
    assert data["documents"]["removed"] == 1 and data["documents"]["rejected"] == 1
    problems = {p["source"]: " ".join(p["problems"]) for p in data["problems"]}
    assert "the stored version warranty-policy@4 is withdrawn" in problems[FILE]

    # its date fixed but its text edited without a version bump: refused, not taken as new
    edit(path, ("effective_from: 2024-13-01", "effective_from: 2024-01-01"), ("limited warranty", "lifetime warranty"))
    code, again = cli("run", corpus, *store_args)
    assert code == 1
    assert [i["action"] for i in again["plan"] if i["document"] == "warranty-policy@4"] == ["rejected"]
