"""Each metadata rule of SPEC "Metadata", checked on resolve_metadata / cross_document_problems /
read_inventory directly, with exact problem messages."""

from __future__ import annotations

from datetime import date, datetime

import pytest
import yaml

from ingest.metadata import read_inventory, resolve_metadata
from ingest.metadata_cross import cross_document_problems
from ingest.model import DocumentMeta
from ingest.settings import Settings, SettingsError, settings_from_dict

SRC = "documents/a.md"
DEFAULTS = Settings()
GOOD = {"doc_id": "warranty-policy", "version": "5", "title": "Warranty policy", "access": "public"}


def resolve(fields, inventory=None, settings=DEFAULTS):
    return resolve_metadata(SRC, fields, inventory, settings)


def problems_of(fields, inventory=None, settings=DEFAULTS):
    meta, problems, _ = resolve(fields, inventory, settings)
    assert (meta is None) == bool(problems)
    return problems


def test_valid_minimal_document_gets_defaults():
    meta, problems, defaulted = resolve(GOOD)
    assert problems == []
    assert defaulted is False
    assert meta == DocumentMeta(
        doc_id="warranty-policy", version="5", title="Warranty policy", access="public",
        effective_from=None, effective_to=None, status="current", superseded_by=None, tags=(),
    )


def test_valid_full_document():
    fields = dict(
        GOOD,
        effective_from=date(2026, 1, 1),
        effective_to="2026-12-31",
        status="superseded",
        superseded_by="warranty-policy@6",
        tags=["returns", "legal"],
        owner="legal team",  # unknown extra fields are ignored
    )
    meta, problems, _ = resolve(fields)
    assert problems == []
    assert meta.effective_from == date(2026, 1, 1)
    assert meta.effective_to == date(2026, 12, 31)
    assert meta.status == "superseded"
    assert meta.superseded_by == "warranty-policy@6"
    assert meta.tags == ("returns", "legal")


@pytest.mark.parametrize("field", ["doc_id", "version", "title", "access"])
def test_missing_required_field(field):
    fields = {k: v for k, v in GOOD.items() if k != field}
    assert problems_of(fields) == [f"{SRC}: {field}: missing required field"]


@pytest.mark.parametrize("empty", [None, "", "   "])
def test_empty_value_counts_as_missing(empty):
    assert problems_of(dict(GOOD, title=empty)) == [f"{SRC}: title: missing required field"]


def test_every_problem_is_reported_not_just_the_first():
    assert problems_of({"access": "secret"}) == [
        f"{SRC}: doc_id: missing required field",
        f"{SRC}: version: missing required field",
        f"{SRC}: title: missing required field",
        f"{SRC}: access: unknown access label 'secret' (labels: public, partner, staff)",
    ]


def test_extra_required_field_from_settings():
    settings = settings_from_dict({"metadata": {"required": ["owner"]}})
    assert problems_of(GOOD, settings=settings) == [f"{SRC}: owner: missing required field"]
    assert problems_of(dict(GOOD, owner="legal"), settings=settings) == []


def test_unknown_access_label_lists_configured_labels():
    settings = settings_from_dict({"access": {"labels": ["open", "internal"]}})
    assert problems_of(dict(GOOD, access="public"), settings=settings) == [
        f"{SRC}: access: unknown access label 'public' (labels: open, internal)"
    ]


@pytest.mark.parametrize(
    "doc_id, shown",
    [("Warranty Policy", "'Warranty Policy'"), ("-policy", "'-policy'"), ("a/b", "'a/b'"), (["x"], "['x']")],
)
def test_doc_id_not_a_slug(doc_id, shown):
    assert problems_of(dict(GOOD, doc_id=doc_id)) == [
        f"{SRC}: doc_id: not a slug: {shown} (must match [a-z0-9][a-z0-9._-]*)"
    ]


def test_doc_id_slug_characters_accepted():
    meta, problems, _ = resolve(dict(GOOD, doc_id="0a.b_c-d"))
    assert problems == [] and meta.doc_id == "0a.b_c-d"


@pytest.mark.parametrize("raw, expected", [(5, "5"), (2026.1, "2026.1"), ("2026.1", "2026.1")])
def test_version_numbers_from_yaml_become_strings(raw, expected):
    meta, problems, _ = resolve(dict(GOOD, version=raw))
    assert problems == [] and meta.version == expected


@pytest.mark.parametrize(
    "field, raw, problem",
    [
        # Kept as given, never stripped: stripping indexed "abc" while `ingest parse` showed "abc\n".
        ("doc_id", "abc\n", "contains control or bidi-override characters: 'abc\\n'"),
        ("doc_id", " abc", "not a slug: ' abc' (must match [a-z0-9][a-z0-9._-]*)"),
        ("version", "1\t", "contains control or bidi-override characters: '1\\t'"),
        ("version", " 7 ", "contains a space or an invisible character (U+0020 SPACE): ' 7 '"),
        ("version", "1\u00a0", "contains a space or an invisible character (U+00A0 NO-BREAK SPACE): '1\\xa0'"),
        # Accepted as is before: they print like "1" but `ingest chunks --version 1` finds nothing.
        ("version", "1\u200b", "contains a space or an invisible character (U+200B ZERO WIDTH SPACE): '1\\u200b'"),
        ("version", "\ufeff1", "contains a space or an invisible character (U+FEFF ZERO WIDTH NO-BREAK SPACE): '\\ufeff1'"),
        ("version", "1\u2060", "contains a space or an invisible character (U+2060 WORD JOINER): '1\\u2060'"),
    ],
)
def test_doc_id_and_version_with_spaces_or_invisible_characters_are_refused_not_stripped(field, raw, problem):
    problems = problems_of(dict(GOOD, **{field: raw}))
    assert len(problems) == 1 and problems[0].startswith(f"{SRC}: {field}: {problem}"), problems
    # the same value from inventory.yaml is refused the same way
    fields = {k: v for k, v in GOOD.items() if k != field}
    assert problems_of(fields, {field: raw}) == problems


def test_version_not_a_string():
    assert problems_of(dict(GOOD, version=[1, 2])) == [f"{SRC}: version: given 2 times: [1, 2]"]
    assert problems_of(dict(GOOD, version=[[1], 2])) == [f"{SRC}: version: not a string: [[1], 2]"]
    assert problems_of(dict(GOOD, version=True)) == [f"{SRC}: version: not a string: True"]


def test_title_not_a_string():
    assert problems_of(dict(GOOD, title={"en": "x"})) == [f"{SRC}: title: not a string: {{'en': 'x'}}"]


@pytest.mark.parametrize(
    "raw, message",
    [
        ("2026-13-01", "bad date '2026-13-01': expected YYYY-MM-DD"),
        ("2026-02-30", "bad date '2026-02-30': expected YYYY-MM-DD"),
        ("01/02/2026", "bad date '01/02/2026': expected YYYY-MM-DD"),
        ("20260101", "bad date '20260101': expected YYYY-MM-DD"),
        (20260101, "bad date 20260101: expected YYYY-MM-DD"),
        (datetime(2026, 1, 1, 10, 30), "bad date 2026-01-01 10:30:00: a date and time, expected YYYY-MM-DD"),
    ],
)
def test_bad_date(raw, message):
    assert problems_of(dict(GOOD, effective_from=raw)) == [f"{SRC}: effective_from: {message}"]


def test_dates_from_html_and_pdf_are_strings():
    meta, problems, _ = resolve(dict(GOOD, effective_from="2026-01-01", effective_to="2026-01-01"))
    assert problems == []
    assert meta.effective_from == meta.effective_to == date(2026, 1, 1)
    _, problems, _ = resolve(dict(GOOD, effective_from=" 2026-01-01 "))  # as written: never the stripped date
    assert problems == [
        f"{SRC}: effective_from: bad date ' 2026-01-01 ': expected YYYY-MM-DD with no space or control character "
        "around it"
    ]


def test_effective_to_before_effective_from():
    assert problems_of(dict(GOOD, effective_from=date(2026, 3, 1), effective_to=date(2026, 2, 28))) == [
        f"{SRC}: effective_to: 2026-02-28 is before effective_from 2026-03-01"
    ]


def test_unknown_status():
    assert problems_of(dict(GOOD, status="draft")) == [
        f"{SRC}: status: unknown status 'draft' (statuses: current, superseded)"
    ]


def test_superseded_without_superseded_by():
    assert problems_of(dict(GOOD, status="superseded")) == [
        f"{SRC}: status: 'superseded' without superseded_by"
    ]


def test_current_with_superseded_by_explicit_or_default():
    expected = [f"{SRC}: superseded_by: 'warranty-policy@6' but status is 'current'"]
    assert problems_of(dict(GOOD, superseded_by="warranty-policy@6")) == expected
    assert problems_of(dict(GOOD, status="current", superseded_by="warranty-policy@6")) == expected


@pytest.mark.parametrize("target", ["warranty-policy", "Warranty@6", "@6", "warranty-policy@"])
def test_superseded_by_not_doc_id_at_version(target):
    assert problems_of(dict(GOOD, status="superseded", superseded_by=target)) == [
        f"{SRC}: superseded_by: not doc_id@version: {target!r}"
    ]


def test_superseded_by_itself():
    assert problems_of(dict(GOOD, status="superseded", superseded_by="warranty-policy@5")) == [
        f"{SRC}: superseded_by: 'warranty-policy@5' names this document itself"
    ]


def test_tags_comma_separated_string_is_split():
    # HTML <meta> and PDF information give text; YAML tags are a list (test_metadata_lookalike_fields)
    fields = dict(GOOD, tags=" returns, legal ,, eu")
    meta, problems, _ = resolve_metadata("documents/a.html", fields, None, DEFAULTS, text_fields=True)
    assert problems == [] and meta.tags == ("returns", "legal", "eu")


def test_tags_not_a_list_of_strings():
    assert problems_of(dict(GOOD, tags=[["a"], "b"])) == [
        f"{SRC}: tags: not a list of strings: item 1 is ['a'] (in [['a'], 'b'])"
    ]
    assert problems_of(dict(GOOD, tags={"a": 1})) == [f"{SRC}: tags: not a list of strings: {{'a': 1}}"]


def test_a_tags_problem_shows_the_offending_item_past_the_first_five():
    # the list's rendering stops after five items: the item itself is named, so the value is never cut off
    tags = ["a", "b", "c", "d", "e", "f", {"kind": "secret"}]
    assert problems_of(dict(GOOD, tags=tags)) == [
        f"{SRC}: tags: not a list of strings: item 7 is {{'kind': 'secret'}} (in ['a', 'b', 'c', 'd', 'e', ...])"
    ]


def test_inventory_fills_fields_the_file_lacks():
    meta, problems, _ = resolve({"title": "Warranty policy"}, {"doc_id": "warranty-policy", "version": 5, "access": "staff"})
    assert problems == []
    assert (meta.doc_id, meta.version, meta.access) == ("warranty-policy", "5", "staff")


def test_file_and_inventory_agree_after_normalisation():
    # YAML int vs string, date vs ISO string, list vs comma string: the same values
    file_fields = dict(GOOD, version="5", effective_from="2026-01-01", tags="a, b")
    inventory = {"version": 5, "effective_from": date(2026, 1, 1), "tags": ["a", "b"], "title": " Warranty policy "}
    meta, problems, _ = resolve_metadata("documents/a.html", file_fields, inventory, DEFAULTS, text_fields=True)
    assert problems == [] and meta is not None


def test_file_and_inventory_disagree():
    inventory = {"version": 6, "access": "staff", "effective_from": date(2026, 1, 1)}
    assert problems_of(dict(GOOD, effective_from="2026-02-01"), inventory) == [
        f"{SRC}: version: file has '5' but inventory.yaml has 6",
        f"{SRC}: access: file has 'public' but inventory.yaml has 'staff'",
        f"{SRC}: effective_from: file has '2026-02-01' but inventory.yaml has 2026-01-01",
    ]


def test_disagreement_with_an_invalid_file_value_reports_both():
    assert problems_of(dict(GOOD, access="secret"), {"access": "staff"}) == [
        f"{SRC}: access: file has 'secret' but inventory.yaml has 'staff'",
        f"{SRC}: access: unknown access label 'secret' (labels: public, partner, staff)",
    ]


def test_pattern_not_matched():
    settings = settings_from_dict({"metadata": {"patterns": {"doc_id": "[a-z]+-policy", "tags": "[a-z]+"}}})
    assert problems_of(dict(GOOD, doc_id="warranty-terms", tags=["ok", "Not-OK"]), settings=settings) == [
        f"{SRC}: doc_id: 'warranty-terms' does not match the pattern '[a-z]+-policy'",
        f"{SRC}: tags: 'Not-OK' does not match the pattern '[a-z]+'",
    ]
    assert problems_of(GOOD, settings=settings) == []


def test_pattern_is_a_full_match_and_applies_to_extra_fields():
    settings = settings_from_dict({"metadata": {"patterns": {"version": r"\d+", "owner": "[a-z]+@example.com"}}})
    assert problems_of(dict(GOOD, version="5a", owner="x@example.com.evil"), settings=settings) == [
        f"{SRC}: version: '5a' does not match the pattern '\\\\d+'",
        f"{SRC}: owner: 'x@example.com.evil' does not match the pattern '[a-z]+@example.com'",
    ]
    # an optional patterned field that is absent is fine
    assert problems_of(GOOD, settings=settings) == []


def test_access_default_fills_a_missing_label_and_says_so():
    settings = settings_from_dict({"access": {"default": "staff"}})
    fields = {k: v for k, v in GOOD.items() if k != "access"}
    meta, problems, defaulted = resolve(fields, settings=settings)
    assert problems == [] and defaulted is True and meta.access == "staff"
    meta, problems, defaulted = resolve(GOOD, settings=settings)
    assert meta.access == "public" and defaulted is False


def test_missing_access_without_default_is_a_problem():
    fields = {k: v for k, v in GOOD.items() if k != "access"}
    meta, problems, defaulted = resolve(fields)
    assert problems == [f"{SRC}: access: missing required field"] and defaulted is False


@pytest.mark.parametrize("labels", [None, ["open", "internal"]])
def test_settings_refuse_the_most_open_label_as_default(labels):
    access = {"default": "public"} if labels is None else {"labels": labels, "default": "open"}
    with pytest.raises(SettingsError, match="most open label"):
        settings_from_dict({"access": access})


BOMB_YAML = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


def test_yaml_alias_bomb_value_is_reported_without_expanding_it():
    bomb = yaml.safe_load(BOMB_YAML)["i"]  # 9**9 strings once expanded
    assert problems_of(dict(GOOD, tags=bomb, title=bomb, extra=bomb)) == [
        f"{SRC}: extra: expands to more than 10000 values (a YAML alias bomb?)",
        f"{SRC}: tags: expands to more than 10000 values (a YAML alias bomb?)",
        f"{SRC}: title: expands to more than 10000 values (a YAML alias bomb?)",
    ]


def test_nested_values_are_shown_bounded():
    nested = yaml.safe_load(BOMB_YAML)["c"]  # 9 * 9 * 9 strings: not a bomb, but long
    inner = "[" + ", ".join(["[...]"] * 5) + ", ...]"
    shown = "[" + ", ".join([inner] * 5) + ", ...]"  # 5 items a level, 2 levels deep
    assert problems_of(dict(GOOD, title=nested)) == [f"{SRC}: title: not a string: {shown}"]


def test_fields_not_a_mapping():
    assert problems_of(["doc_id"])[0] == f"{SRC}: metadata: not a mapping of fields: ['doc_id']"


# ---------------------------------------------------------------------------- cross-document


def meta(doc_id="warranty-policy", version="5", start=None, end=None, status="current", successor=None):
    return DocumentMeta(doc_id, version, "T", "public", start, end, status, successor)


def test_no_cross_problems_for_consecutive_versions():
    docs = [
        ("documents/v4.md", meta(version="4", end=date(2025, 12, 31), status="superseded", successor="warranty-policy@5")),
        ("documents/v5.md", meta(version="5", start=date(2026, 1, 1))),
        ("documents/other.md", meta(doc_id="other")),
    ]
    assert cross_document_problems(docs) == {}


def test_duplicate_doc_id_and_version_rejects_both():
    docs = [("documents/b.md", meta()), ("documents/a.md", meta())]
    assert cross_document_problems(docs) == {
        "documents/a.md": ["documents/a.md: doc_id@version: 'warranty-policy@5' is also defined by documents/b.md"],
        "documents/b.md": ["documents/b.md: doc_id@version: 'warranty-policy@5' is also defined by documents/a.md"],
    }


def test_overlapping_versions_each_name_the_other():
    docs = [
        ("documents/v4.md", meta(version="4", start=date(2025, 1, 1), end=date(2026, 3, 31))),
        ("documents/v5.md", meta(version="5", start=date(2026, 3, 1))),
    ]
    assert cross_document_problems(docs) == {
        "documents/v4.md": [
            "documents/v4.md: effective_from: 'warranty-policy' version '4' (2025-01-01 to 2026-03-31) "
            "and version '5' in documents/v5.md (from 2026-03-01) are both in force on 2026-03-01"
        ],
        "documents/v5.md": [
            "documents/v5.md: effective_from: 'warranty-policy' version '5' (from 2026-03-01) "
            "and version '4' in documents/v4.md (2025-01-01 to 2026-03-31) are both in force on 2026-03-01"
        ],
    }


def test_version_without_dates_is_in_force_every_day():
    docs = [("documents/a.md", meta(version="1")), ("documents/b.md", meta(version="2"))]
    assert cross_document_problems(docs)["documents/a.md"] == [
        "documents/a.md: effective_from: 'warranty-policy' version '1' (no dates: every day) "
        "and version '2' in documents/b.md (no dates: every day) are both in force every day"
    ]
    docs = [("documents/a.md", meta(version="1")), ("documents/b.md", meta(version="2", end=date(2020, 1, 1)))]
    assert cross_document_problems(docs)["documents/b.md"] == [
        "documents/b.md: effective_from: 'warranty-policy' version '2' (until 2020-01-01) "
        "and version '1' in documents/a.md (no dates: every day) are both in force every day"
    ]


def test_ranges_touching_on_one_day_overlap_and_adjacent_ones_do_not():
    touching = [
        ("documents/a.md", meta(version="1", end=date(2026, 1, 1))),
        ("documents/b.md", meta(version="2", start=date(2026, 1, 1))),
    ]
    assert set(cross_document_problems(touching)) == {"documents/a.md", "documents/b.md"}
    adjacent = [
        ("documents/a.md", meta(version="1", end=date(2025, 12, 31))),
        ("documents/b.md", meta(version="2", start=date(2026, 1, 1))),
    ]
    assert cross_document_problems(adjacent) == {}


def test_superseded_by_names_no_document():
    docs = [("documents/a.md", meta(status="superseded", successor="warranty-policy@9"))]
    assert cross_document_problems(docs) == {
        "documents/a.md": ["documents/a.md: superseded_by: 'warranty-policy@9' names no document in the corpus"]
    }
    assert cross_document_problems(docs, rejected_keys={"warranty-policy@9"}) == {
        "documents/a.md": ["documents/a.md: superseded_by: 'warranty-policy@9' names a document that was rejected"]
    }


def test_a_superseded_document_in_force_beside_its_replacement_is_rejected_alone():
    """Search filters by dates only: a superseded document without an end would be served every day
    next to the document of another doc_id that replaces it. Only the superseded one is refused."""
    docs = [
        ("documents/old.md", meta(doc_id="old-doc", version="1", status="superseded", successor="new-doc@2")),
        ("documents/new.md", meta(doc_id="new-doc", version="2", start=date(2025, 1, 1))),
    ]
    assert cross_document_problems(docs) == {
        "documents/old.md": [
            "documents/old.md: effective_to: none: superseded by 'new-doc@2' (from 2025-01-01) but itself in force "
            "(no dates: every day): both are in force on 2025-01-01; give it an effective_to before its "
            "replacement's effective_from (2025-01-01)"
        ]
    }
    undated = [docs[0], ("documents/new.md", meta(doc_id="new-doc", version="2"))]
    assert cross_document_problems(undated)["documents/old.md"] == [
        "documents/old.md: effective_to: none: superseded by 'new-doc@2' (no dates: every day) but itself in force "
        "(no dates: every day): both are in force every day; give its replacement an effective_from and it an "
        "effective_to before that day"
    ]


def test_a_superseded_document_ending_the_day_its_replacement_starts_is_still_in_force_beside_it():
    new = ("documents/new.md", meta(doc_id="new-doc", version="2", start=date(2025, 1, 1)))
    old = meta(doc_id="old-doc", version="1", end=date(2025, 1, 1), status="superseded", successor="new-doc@2")
    assert cross_document_problems([("documents/old.md", old), new])["documents/old.md"] == [
        "documents/old.md: effective_to: '2025-01-01': superseded by 'new-doc@2' (from 2025-01-01) but itself in "
        "force (until 2025-01-01): both are in force on 2025-01-01; give it an effective_to before its "
        "replacement's effective_from (2025-01-01)"
    ]
    ended = meta(doc_id="old-doc", version="1", end=date(2024, 12, 31), status="superseded", successor="new-doc@2")
    assert cross_document_problems([("documents/old.md", ended), new]) == {}


def test_a_same_doc_id_successor_keeps_its_one_message():
    docs = [
        ("documents/a.md", meta(version="1", status="superseded", successor="warranty-policy@2")),
        ("documents/b.md", meta(version="2")),
    ]
    assert cross_document_problems(docs)["documents/a.md"] == [
        "documents/a.md: effective_from: 'warranty-policy' version '1' (no dates: every day) "
        "and version '2' in documents/b.md (no dates: every day) are both in force every day"
    ]


# ---------------------------------------------------------------------------- inventory.yaml


def test_read_inventory():
    entries, problems = read_inventory(
        "policies/warranty.md:\n  doc_id: warranty-policy\n  version: 5\nempty.md:\n", "inventory.yaml"
    )
    assert problems == []
    assert entries == {"empty.md": {}, "policies/warranty.md": {"doc_id": "warranty-policy", "version": "5"}}


def test_read_inventory_empty_file():
    assert read_inventory("", "inventory.yaml") == ({}, [])


def test_read_inventory_malformed():
    entries, problems = read_inventory("a.md: [unclosed\n", "inventory.yaml")
    assert entries == {} and problems[0].startswith("inventory.yaml: not valid YAML: ")
    assert read_inventory("- a.md\n", "inventory.yaml") == (
        {}, ["inventory.yaml: not a mapping of file paths to fields: ['a.md']"]
    )
    entries, problems = read_inventory("a.md: just a title\nb.md:\n  title: B\n", "inventory.yaml")
    assert entries == {"b.md": {"title": "B"}}
    assert problems == ["inventory.yaml: a.md: not a mapping of fields: 'just a title'"]


def test_read_inventory_refuses_a_python_tag_and_an_alias_bomb():
    entries, problems = read_inventory("a.md: !!python/object/apply:os.system ['true']\n", "inventory.yaml")
    assert entries == {} and problems[0].startswith("inventory.yaml: not valid YAML: could not determine a constructor")
    assert read_inventory(BOMB_YAML, "inventory.yaml") == (
        {}, ["inventory.yaml: not valid YAML: aliases expand to more than 100000 nodes"]
    )


def test_read_inventory_allows_modest_anchors():
    # an alias of a whole entry is fine; merge keys (<<) are refused since session 7 (two merged
    # mappings resolved two access values to one): see tests/test_metadata_as_written.py
    text = "a.md: &staff\n  access: staff\n  title: A\nb.md: *staff\n"
    entries, problems = read_inventory(text, "inventory.yaml")
    assert problems == []
    assert entries["a.md"] == entries["b.md"] == {"access": "staff", "title": "A"}


@pytest.mark.parametrize(
    "field, value, problem",
    [
        ("title", "Line one\nline two", "title: contains control or bidi-override characters: 'Line one\\nline two'"),
        ("title", "Invoice \u202eexe.pdf", "title: contains control or bidi-override characters: 'Invoice \\u202eexe.pdf'"),
        ("doc_id", "a" * 201, "doc_id: longer than 200 characters (201)"),
        ("version", "1|2", "version: not a usable version: '1|2' (no spaces, '|' or '@'; e.g. \"5\", \"2026.1\")"),
        ("version", "5@x", "version: not a usable version: '5@x' (no spaces, '|' or '@'; e.g. \"5\", \"2026.1\")"),
        ("doc_id", ["dup-a", "dup-b"], "doc_id: given 2 times: ['dup-a', 'dup-b']"),
    ],
)
def test_values_that_would_break_ids_output_or_elasticsearch_are_refused(field, value, problem):
    assert problems_of(dict(GOOD, **{field: value})) == [f"{SRC}: {problem}"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("access", "staff\u00a0", "access: unknown access label 'staff\\xa0' (labels: public, partner, staff)"),
        ("access", "\u3000public", "access: unknown access label '\\u3000public' (labels: public, partner, staff)"),
        ("access", " public", "access: unknown access label ' public' (labels: public, partner, staff)"),
        ("status", "current\u00a0", "status: unknown status 'current\\xa0'"),
        ("superseded_by", "warranty-policy@4\u2003", "superseded_by: not doc_id@version: 'warranty-policy@4\\u2003'"),
        ("doc_id", "warranty-policy\u00a0", "doc_id: not a slug"),
        ("version", "5\u00a0", "version: contains a space or an invisible character (U+00A0 NO-BREAK SPACE)"),
    ],
)
def test_a_keyword_with_whitespace_around_it_is_a_problem_never_stripped(field, value, message):
    fields = {**GOOD, field: value}
    if field == "superseded_by":
        fields["status"] = "superseded"
    problems = problems_of(fields)
    assert any(p.startswith(f"{SRC}: {message}") for p in problems), problems
