"""ingest.toml as people mistype it: every mistake is a clear configuration error (exit 2)."""

from __future__ import annotations

import pytest

from ingest.settings import SettingsError, settings_from_dict


@pytest.mark.parametrize(
    "data, message",
    [
        ({"access": {"labels": "public"}}, "access.labels must be a list of non-empty strings"),
        ({"roles": {"public": "public"}}, "roles.public must be a list of non-empty strings"),
        ({"metadata": {"required": 5}}, "metadata.required must be a list of non-empty strings"),
        ({"metadata": {"required": ["doc_id", 5]}}, "metadata.required must be a list of non-empty strings"),
        ({"metadata": {"patterns": "x"}}, "metadata.patterns must be a table"),
        ({"metadata": {"patterns": {"doc_id": 5}}}, "metadata.patterns.doc_id must be a string"),
        ({"metadata": {"patterns": {"doc_id": "("}}}, "is not a valid regex"),
        ({"chunking": {"size": "big"}}, "chunking.size must be a whole number"),
        ({"chunking": {"size": 5}}, "chunk size 5 is below 10 words"),
        ({"chunking": {"chunker": "pages"}}, "unknown chunker 'pages'"),
        ({"acces": {"labels": ["x"]}}, "unknown section [acces]"),
        ({"access": {"label": ["x"]}}, "unknown key access.label"),
        ({"access": {"default": "public"}}, "most open label"),
        ({"roles": {"x": ["secret"]}}, "names unknown labels ['secret']"),
        (
            {"access": {"labels": ["public", "public", "staff"]}},
            "access.labels gives 'public' more than once: ['public', 'public', 'staff']",
        ),
        ({"roles": {"staff": ["public", "staff", "staff"]}}, "roles.staff gives 'staff' more than once"),
    ],
)
def test_mistakes_are_refused_with_the_key_and_value(data, message):
    with pytest.raises(SettingsError) as err:
        settings_from_dict(data)
    assert message in str(err.value)


def test_a_complete_file_is_read():
    settings = settings_from_dict({
        "access": {"labels": ["public", "internal", "confidential"], "default": "internal"},
        "roles": {"patron": ["public"], "librarian": ["public", "internal"]},
        "metadata": {"required": ["doc_id", "version", "title", "access", "owner"], "patterns": {"doc_id": "lib-.*"}},
        "chunking": {"chunker": "overlap", "size": 120, "overlap": 20},
    })
    assert settings.labels == ("public", "internal", "confidential")
    assert settings.roles == {"patron": ("public",), "librarian": ("public", "internal")}
    assert settings.required[-1] == "owner" and settings.access_default == "internal"
    assert settings.chunking.describe() == "overlap:120:20"


@pytest.mark.parametrize("role", ["x-chunks-public", "field.staff", "documents", "chunks", "meta", "Staff"])
def test_a_role_name_that_could_spell_another_prefixes_alias_is_refused(role):
    """The role names the alias PREFIX-chunks-ROLE: under prefix "kb", role "x-chunks-public" would be
    the public alias of prefix "kb-chunks-x" (an outside pass took it over this way)."""
    with pytest.raises(SettingsError, match="role name"):
        settings_from_dict({"roles": {role: ["public"]}})


def test_role_names_with_underscores_are_fine():
    assert settings_from_dict({"roles": {"field_staff": ["public", "staff"]}}).roles["field_staff"] == ("public", "staff")


def test_a_label_given_twice_in_ingest_toml_stops_validate_with_exit_2(tmp_path):
    import subprocess
    import sys

    (tmp_path / "documents").mkdir()
    (tmp_path / "documents" / "a.md").write_text("---\ndoc_id: a\nversion: '1'\ntitle: A\naccess: public\n---\nx\n")
    (tmp_path / "ingest.toml").write_text('[access]\nlabels = ["public", "public", "staff"]\n')
    done = subprocess.run([sys.executable, "-m", "ingest", "validate", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "access.labels gives 'public' more than once" in done.stderr
