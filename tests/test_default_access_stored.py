"""`access.default` never changes the label of a document the store holds: a file given its access by the
default while a version of its doc_id is (or was, withdrawn) stored under another label is rejected, and the
stored version is withdrawn — a rename that leaves the inventory entry naming no file, an entry deleted or a
default edited in ingest.toml never lets a wider role read what was staff. Both stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import cli_json as cli

SALARIES = '---\ndoc_id: salaries\nversion: "{v}"\ntitle: Salaries\n---\n# Salaries\n\nThe CEO earns many pelicans.\n'


ROLES = ("partner", "staff")


def readers(store_args: list[str]) -> dict[str, int]:
    """Hits for 'pelicans' per role."""
    return {role: len(cli("search", "pelicans", "--role", role, *store_args)[1]["hits"]) for role in ROLES}


def corpus(tmp_path: Path, inventory: str, default: str = "partner") -> Path:
    root = tmp_path / "c"
    (root / "documents").mkdir(parents=True)
    (root / "documents" / "salaries.md").write_text(SALARIES.format(v=1))
    (root / "inventory.yaml").write_text(inventory)
    (root / "ingest.toml").write_text(f'[access]\nlabels = ["public", "partner", "staff"]\ndefault = "{default}"\n')
    return root


def problems(data: dict) -> dict[str, str]:
    return {p["source"]: " | ".join(p["problems"]) for p in data["problems"]}


def actions(data: dict, key: str) -> list[tuple[str, str]]:
    return [(i["action"], i["reason"].split(":")[0]) for i in data["plan"] if i["document"] == key]


MODES = {"incremental": [], "--full": ["--full"], "--strict": ["--strict"]}


@pytest.mark.parametrize("mode", list(MODES))
def test_a_rename_never_lets_the_default_widen_a_stored_version(mode, store_args, tmp_path):
    root = corpus(tmp_path, "salaries.md: {access: staff}\n")
    assert cli("run", root, *store_args)[0] == 0
    assert readers(store_args) == {"partner": 0, "staff": 1}

    (root / "documents" / "salaries.md").rename(root / "documents" / "salaries-2025.md")  # the same bytes
    code, data = cli("run", root, *store_args, *MODES[mode])
    assert code == 1
    said = problems(data)["documents/salaries-2025.md"]
    assert (
        "documents/salaries-2025.md: access: not given; the default 'partner' would replace 'staff' of the stored "
        "salaries@1 (set access in the file or inventory.yaml)"
    ) in said, said
    assert "the stored version salaries@1 is withdrawn" in said, said
    assert ("removed", "withdrawn") in actions(data, "salaries@1"), data["plan"]
    assert data["documents"]["rejected"] == 1 and data["documents"]["indexed"] == 0
    assert readers(store_args) == {"partner": 0, "staff": 0}

    # the next run (the store holds no version now) still refuses it: the withdrawn label is remembered
    code, again = cli("run", root, *store_args)
    assert code == 1
    said = problems(again)["documents/salaries-2025.md"]
    assert "the default 'partner' would replace 'staff' of the withdrawn salaries@1" in said, said
    assert readers(store_args) == {"partner": 0, "staff": 0}

    # an explicit label for the new path: indexed under it
    (root / "inventory.yaml").write_text("salaries-2025.md: {access: staff}\n")
    code, fixed = cli("run", root, *store_args)
    assert code == 0, fixed["problems"]
    assert readers(store_args) == {"partner": 0, "staff": 1}


@pytest.mark.parametrize("change", ["inventory entry removed", "access.default edited"])
def test_an_unchanged_file_is_never_relabelled_by_the_default(change, store_args, tmp_path):
    if change == "inventory entry removed":
        root = corpus(tmp_path, "salaries.md: {access: staff}\n")
    else:
        root = corpus(tmp_path, "{}\n", default="staff")
    assert cli("run", root, *store_args)[0] == 0
    if change == "inventory entry removed":
        (root / "inventory.yaml").write_text("{}\n")
    else:
        (root / "ingest.toml").write_text('[access]\nlabels = ["public", "partner", "staff"]\ndefault = "partner"\n')
    code, data = cli("run", root, *store_args)
    assert code == 1
    said = problems(data)["documents/salaries.md"]
    assert "the default 'partner' would replace 'staff' of the stored salaries@1" in said, said
    assert ("removed", "withdrawn") in actions(data, "salaries@1"), data["plan"]
    assert readers(store_args) == {"partner": 0, "staff": 0}
    assert cli("run", root, *store_args)[0] == 1
    assert readers(store_args) == {"partner": 0, "staff": 0}


def test_a_new_version_given_the_default_withdraws_the_older_label(store_args, tmp_path):
    root = corpus(tmp_path, "salaries.md: {access: staff}\n")
    assert cli("run", root, *store_args)[0] == 0
    (root / "documents" / "salaries.md").unlink()
    (root / "documents" / "salaries-2025.md").write_text(SALARIES.format(v=2))  # its entry still names the old path
    code, data = cli("run", root, *store_args)
    assert code == 1
    said = problems(data)["documents/salaries-2025.md"]
    assert "the default 'partner' would replace 'staff' of the stored salaries@1" in said, said
    assert actions(data, "salaries@2") == [("rejected", "access not given")], data["plan"]
    assert ("removed", "withdrawn") in actions(data, "salaries@1"), data["plan"]
    assert readers(store_args) == {"partner": 0, "staff": 0}


def test_the_default_still_fills_what_it_filled_and_an_explicit_label_still_changes(store_args, tmp_path):
    root = corpus(tmp_path, "{}\n")  # partner from the default, from the first run on
    assert cli("run", root, *store_args)[0] == 0
    (root / "documents" / "salaries.md").rename(root / "documents" / "salaries-2025.md")
    code, data = cli("run", root, *store_args)
    assert code == 0, data["problems"]
    assert actions(data, "salaries@1") == [("moved", "moved from documents/salaries.md")]
    # a label somebody wrote is no default: it may widen (partner → public readers too) or narrow
    (root / "inventory.yaml").write_text("salaries-2025.md: {access: staff}\n")
    code, data = cli("run", root, *store_args)
    assert code == 0, data["problems"]
    assert actions(data, "salaries@1") == [("changed", "metadata changed (access)")]
    assert readers(store_args) == {"partner": 0, "staff": 1}


def test_another_version_labelled_in_the_folder_keeps_its_label_and_the_default_fills_this_one(store_args, tmp_path):
    # salaries@1 staff (inventory), salaries@2 partner (the default): both in the folder, on a first run and after
    inventory = (
        "salaries.md: {access: staff, effective_to: 2020-01-01}\nsalaries-2025.md: {effective_from: 2020-01-02}\n"
    )
    root = corpus(tmp_path, inventory)
    (root / "documents" / "salaries-2025.md").write_text(SALARIES.format(v=2))
    assert cli("run", root, *store_args)[0] == 0
    code, data = cli("run", root, *store_args)  # the second run over the same folder agrees with the first
    assert code == 0, data["problems"]
    assert data["documents"]["unchanged"] == 2 and data["documents"]["rejected"] == 0, data["documents"]
    assert readers(store_args) == {"partner": 1, "staff": 1}  # salaries@2 (salaries@1 ended in 2020)


@pytest.mark.parametrize("path", ["salaries.md", "salaries-2025.md"], ids=["same-path", "new-path"])
def test_the_next_runs_still_refuse_a_new_version_the_default_would_relabel(path, store_args, tmp_path):
    """The withdrawn version's file is gone (replaced by version 2): its label is still remembered, so the
    run after the refusal (and --full) refuses version 2 again instead of indexing it as the default."""
    root = corpus(tmp_path, "salaries.md: {access: staff}\n")
    assert cli("run", root, *store_args)[0] == 0
    (root / "documents" / "salaries.md").unlink()
    (root / "inventory.yaml").write_text("")
    (root / "documents" / path).write_text(SALARIES.format(v=2))
    assert cli("run", root, *store_args)[0] == 1  # refused, salaries@1 withdrawn
    for again in ([], ["--full"], []):
        code, data = cli("run", root, *store_args, *again)
        assert code == 1, data["plan"]
        assert actions(data, "salaries@2") == [("rejected", "access not given")], data["plan"]
        assert "would replace 'staff'" in problems(data)[f"documents/{path}"]
        assert readers(store_args) == {"partner": 0, "staff": 0}
