"""What careless or hostile YAML does to metadata: nothing silent."""

from __future__ import annotations

from datetime import date

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _by_pyyaml(text: str) -> object:
    """The document as PyYAML's own constructor builds it, after the same checks."""
    loader = safe_yaml._Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        safe_yaml._check(node, safe_yaml.MAX_ALIASES, safe_yaml.MAX_NODES)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        return ("refused", type(exc).__name__, str(exc))
    finally:
        loader.dispose()


def _by_ingest(text: str) -> object:
    try:
        return safe_yaml.load(text)
    except yaml.YAMLError as exc:
        return ("refused", type(exc).__name__, str(exc))


_SCALARS = st.sampled_from(
    [
        "1",
        "007",
        "0x1f",
        "1_000",
        "-2",
        "1.5",
        "2026.10",
        ".inf",
        "-.NaN",
        "1e3",
        "true",
        "False",
        "yes",
        "null",
        "~",
        "",
        "2026-01-31",
        "2026-02-30",
        "2026-01-31 10:20:30",
        "2026-01-31T10:20:30+02:00",
        "'quoted'",
        '"dq \\u00e9"',
        "text with: colon",
        "!!str 5",
        "!!int '7'",
        "!!float 3",
        "!!binary aGk=",
        "!!bool yes",
        "!!null ''",
        "!!timestamp 2026-01-01",
        "&a anchored",
        "*a",
    ]
)
_KEYS = st.sampled_from(["doc_id", "version", "title", "access", "tags", "1", "true", "null", "<<", "=", "k", "K"])


@st.composite
def _yaml_documents(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.sampled_from(["scalar", "flow_seq", "flow_map", "block_map"] if depth < 3 else ["scalar"]))
    if kind == "scalar":
        return draw(_SCALARS)
    if kind == "flow_seq":
        return "[" + ", ".join(draw(st.lists(_yaml_documents(depth + 1), max_size=4))) + "]"
    if kind == "flow_map":
        pairs = draw(st.lists(st.tuples(_KEYS, _yaml_documents(depth + 1)), max_size=4))
        return "{" + ", ".join(f"{key}: {value}" for key, value in pairs) + "}"
    pairs = draw(st.lists(st.tuples(_KEYS, _yaml_documents(depth + 1)), min_size=1, max_size=6))
    return (
        "\n".join(f"{key}: {value}" for key, value in pairs)
        if depth == 0
        else "{" + ", ".join(f"{key}: {value}" for key, value in pairs) + "}"
    )


@settings(max_examples=500, deadline=None)
@given(_yaml_documents())
def test_small_documents_are_built_as_pyyamls_constructor_builds_them(text: str) -> None:
    """``load`` builds a small tree of plain values itself: the same values, types and key order
    as PyYAML's constructor, and the same refusals, whatever the tags, anchors, merges and dates."""
    ours, theirs = _by_ingest(text), _by_pyyaml(text)
    assert repr(ours) == repr(theirs)
    assert type(ours) is type(theirs)
