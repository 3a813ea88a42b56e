"""What careless or hostile YAML does to metadata: nothing silent."""

from __future__ import annotations

from datetime import date

import pytest
import yaml

from ingest import safe_yaml
from ingest.model import UnreadableFile
from ingest.parse import parse_bytes


@pytest.mark.parametrize(
    "written, kept",
    [("2026.10", "2026.10"), ("007", "007"), ("5", "5"), ("1.0", "1.0"), ('"2026.1"', "2026.1"), ("5.1.2", "5.1.2")],
)
def test_version_is_kept_exactly_as_written(written, kept):
    assert safe_yaml.load(f"version: {written}\n") == {"version": kept}
    assert safe_yaml.load(f"a.md:\n  version: {written}\n") == {"a.md": {"version": kept}}


def test_a_key_given_twice_is_refused_with_its_line():
    with pytest.raises(yaml.YAMLError) as err:
        safe_yaml.load("doc_id: a\naccess: public\naccess: staff\n")
    assert safe_yaml.describe(err.value) == "the key 'access' is given twice (line 3, column 1)"


def test_duplicate_access_in_front_matter_rejects_the_document():
    with pytest.raises(UnreadableFile, match="the key 'access' is given twice \\(line 5, column 1\\)"):
        parse_bytes(b"---\ndoc_id: a\ntitle: t\naccess: staff\naccess: public\n---\n# A\n\ntext\n", "a.md")


def test_an_impossible_date_stays_text_and_a_real_one_is_a_date():
    assert safe_yaml.load("a: 2026-02-30\nb: 2026-02-28\n") == {"a": "2026-02-30", "b": date(2026, 2, 28)}


def test_alias_bombs_are_refused():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(6)
    )
    with pytest.raises(yaml.YAMLError, match="expand to more than"):
        safe_yaml.load(bomb)
    with pytest.raises(yaml.YAMLError, match="more than 3 aliases"):
        safe_yaml.load("a: &a 1\nb: [*a, *a, *a, *a]\n", max_aliases=3)


def test_python_tags_are_refused():
    with pytest.raises(yaml.YAMLError):
        safe_yaml.load("!!python/object/apply:os.system ['true']\n")
