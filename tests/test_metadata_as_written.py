"""Metadata read as the person wrote it, never one reading picked silently (outside pass, session 7):
- inventory.yaml keys naming one file once stripped or read as a path ("a.txt" and "a.txt\u00a0") let the
  later entry win (public);
- `effective-to:` (a `-` for `_`) or a near-spelling (`efective_to`) was ignored: no end date, searchable today;
- front matter after a blank line, an indented or `----` fence, or TOML `+++` was indexed as body text
  under the inventory's access;
- YAML merge keys (`<<`) resolved two access values to one;
- `doc_id: 0012` became 10, `1:30` 90 and `title: 1.10` 1.1 (YAML 1.1 numbers);
- tags held control characters."""

from __future__ import annotations

import json
import subprocess

import pytest

from ingest.metadata import read_inventory
from ingest.settings import Settings, SettingsError, settings_from_dict
from tests.corpus_builder import write_doc
from tests.helpers import ingest_cli, search_hits

ingest, hits = ingest_cli, search_hits


def problems_of(done: subprocess.CompletedProcess[str]) -> dict[str, list[str]]:
    return {item["source"]: item["problems"] for item in json.loads(done.stdout)["problems"]}


# ------------------------------------------------------------------------------- inventory keys


@pytest.mark.parametrize("other", ["board-memo.txt\u00a0", "board-memo.txt\t", "board-memo.txt ", "./board-memo.txt"])
def test_two_inventory_keys_naming_one_file_stop_the_run(tmp_path, store_args, other):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    (corpus / "documents" / "board-memo.txt").write_text("Board memo: the okapi merger closes in March.\n")
    (corpus / "inventory.yaml").write_text(
        "board-memo.txt: {doc_id: board-memo, version: '1', title: Board memo, access: staff}\n"
        + json.dumps(other)
        + ": {doc_id: board-memo, version: '1', title: Board memo, access: public}\n",
        encoding="utf-8",
    )

    done = ingest("run", corpus, *store_args)

    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        f"inventory.yaml: board-memo.txt: given 2 times, as 'board-memo.txt' and {other!r} "
        "(read as paths, these keys name one file: nothing was picked)"
    ) in done.stderr

    (corpus / "inventory.yaml").write_text(
        "board-memo.txt: {doc_id: board-memo, version: '1', title: Board memo, access: staff}\n", encoding="utf-8"
    )
    assert ingest("run", corpus, "--quiet", *store_args).returncode == 0
    assert hits(store_args, "okapi", "public") == set()
    assert hits(store_args, "okapi", "staff") == {"board-memo"}


@pytest.mark.parametrize(
    "first, second",
    [("sub/a.md", "sub\\a.md"), ("sub/a.md", "sub//a.md"), ("caf\u00e9.md", "cafe\u0301.md"), ("a.md", " a.md")],
)
def test_inventory_keys_read_as_one_path_are_both_reported(first, second):
    text = (
        f"{json.dumps(first)}: {{access: staff}}\n{json.dumps(second)}: {{access: public}}\nb.md: {{access: staff}}\n"
    )
    entries, problems = read_inventory(text)
    assert entries == {"b.md": {"access": "staff"}}
    assert len(problems) == 1 and "given 2 times" in problems[0]
    assert repr(first) in problems[0] and repr(second) in problems[0]


def test_inventory_keys_differing_in_case_are_two_files():
    # the lookup is exact and Linux names are case-sensitive: A.md and a.md can both exist
    entries, problems = read_inventory("A.md: {access: staff}\na.md: {access: public}\n")
    assert problems == [] and set(entries) == {"A.md", "a.md"}


# ------------------------------------------------------------------------------- field names


def test_a_dash_for_an_underscore_is_the_same_field(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    write_doc(corpus, "old.md", "old-doc", salt="crownjewel", **{"effective-to": "2020-01-01"})
    (corpus / "documents" / "old.html").write_text(
        '<html><head><title>Old page</title><meta name="doc_id" content="old-page"><meta name="version" content="1">'
        '<meta name="access" content="public"><meta name="Effective-To" content="2020-01-01"></head>'
        "<body><main><p>The crownjewel page.</p></main></body></html>",
        encoding="utf-8",
    )

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 0, done.stdout + done.stderr
    assert hits(store_args, "crownjewel", "public") == set()  # ended in 2020
    done = ingest("search", "crownjewel", "--as-of", "2019-06-01", "--json", *store_args)
    assert {hit["doc_id"] for hit in json.loads(done.stdout)["hits"]} == {"old-doc", "old-page"}


@pytest.mark.parametrize(
    "fields, problem",
    [
        (
            {"effective_to": "2020-01-01", "Effective-To": "2030-01-01"},
            "effective_to: given 2 times: 'effective_to' is 2020-01-01 and 'Effective-To' is 2030-01-01",
        ),
        (
            {"efective_to": "2020-01-01"},
            "efective_to: unknown field, a near-spelling of 'effective_to', given '2020-01-01' (write 'effective_to'; "
            "nothing was guessed)",
        ),
        (
            {"effective to": "2020-01-01"},
            "effective to: unknown field, a near-spelling of 'effective_to', given '2020-01-01' (write 'effective_to'; "
            "nothing was guessed)",
        ),
        (
            {"superseeded_by": "x@1"},
            "superseeded_by: unknown field, a near-spelling of 'superseded_by', given 'x@1' (write 'superseded_by'; "
            "nothing was guessed)",
        ),
    ],
)
def test_two_spellings_or_a_near_spelling_reject_the_document(tmp_path, store_args, fields, problem):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    write_doc(corpus, "old.md", "old-doc", salt="crownjewel", **fields)

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    assert problems_of(done) == {"documents/old.md": [f"documents/old.md: {problem}"]}
    assert hits(store_args, "crownjewel", "public") == set()
    assert hits(store_args, "zebracorn", "public") == {"pub-doc"}


def test_a_near_spelling_in_the_inventory_rejects_the_document(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    (corpus / "documents" / "memo.txt").write_text("The crownjewel memo.\n", encoding="utf-8")
    (corpus / "inventory.yaml").write_text(
        "memo.txt: {doc_id: memo, version: '1', title: Memo, access: public, efective_to: 2020-01-01}\n"
    )

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    assert problems_of(done)["documents/memo.txt"] == [
        "documents/memo.txt: inventory.yaml: efective_to: unknown field, a near-spelling of 'effective_to', "
        "given '2020-01-01' (write 'effective_to'; nothing was guessed)"
    ]
    assert hits(store_args, "crownjewel", "public") == set()


def test_ordinary_unknown_fields_pass():
    from ingest.metadata import resolve_metadata

    fields = {"doc_id": "a", "version": "1", "title": "A", "access": "public", "author": "X", "date": "2020", "tag": 1}
    meta, problems, _ = resolve_metadata("a.md", fields, None, Settings())
    assert problems == [
        "a.md: tag: unknown field, a near-spelling of 'tags', given '1' (write 'tags'; nothing was guessed)"
    ]
    del fields["tag"]
    assert resolve_metadata("a.md", fields, None, Settings())[1] == []


def test_ingest_toml_names_read_like_document_fields():
    settings = settings_from_dict({"metadata": {"patterns": {"Effective-To": "2020-.*"}, "required": ["Owner-Team"]}})
    assert settings.patterns == {"effective_to": "2020-.*"} and "owner_team" in settings.required
    with pytest.raises(SettingsError, match="names one field twice"):
        settings_from_dict({"metadata": {"patterns": {"effective-to": "a", "effective_to": "b"}}})
    with pytest.raises(SettingsError, match="acess: unknown field, a near-spelling of 'access'"):
        settings_from_dict({"metadata": {"patterns": {"acess": "public"}}})


def test_a_pattern_named_with_a_dash_checks_the_field(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    write_doc(corpus, "late.md", "late-doc", salt="crownjewel", effective_to="2031-01-01")
    (corpus / "ingest.toml").write_text('[metadata.patterns]\nEffective-To = "2030-.*"\n', encoding="utf-8")

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    assert problems_of(done) == {
        "documents/late.md": ["documents/late.md: effective_to: '2031-01-01' does not match the pattern '2030-.*'"]
    }
    assert hits(store_args, "crownjewel", "public") == set()


# ------------------------------------------------------------------------------- front matter placement

FRONT = "doc_id: secret-doc\nversion: '1'\ntitle: Secret\naccess: staff\n"


@pytest.mark.parametrize("suffix", [".md", ".txt"])
@pytest.mark.parametrize(
    "head, problem",
    [
        (f"\n---\n{FRONT}---\n", "front matter must start on the first line with a --- line (a blank or comment line comes before it)"),
        (f" ---\n{FRONT}---\n", "front matter must start on the first line with a --- line (' ---' is indented or has invisible characters before it)"),
        (f"----\n{FRONT}----\n", "front matter must start on the first line with a --- line (it opens with '----', not '---')"),
        ("+++\ndoc_id = 'secret-doc'\naccess = 'staff'\n+++\n", "TOML front matter (+++) is not supported: write YAML between --- lines on line 1"),
    ],
)  # fmt: skip
def test_front_matter_not_on_line_one_is_refused(tmp_path, store_args, suffix, head, problem):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    name = f"minutes{suffix}"
    (corpus / "documents" / name).write_text(head + "\n# Board minutes\n\nThe crownjewel price is confidential.\n")
    (corpus / "inventory.yaml").write_text(
        f"{name}: {{doc_id: minutes, version: '1', title: Minutes, access: public}}\n"
    )

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    assert problems_of(done) == {f"documents/{name}": [f"documents/{name}: unreadable file: {problem}"]}
    assert hits(store_args, "crownjewel", "public") == set()
    assert hits(store_args, "zebracorn", "public") == {"pub-doc"}


@pytest.mark.parametrize("suffix", [".md", ".txt"])
def test_thematic_breaks_are_not_front_matter(tmp_path, store_args, suffix):
    corpus = tmp_path / "corpus"
    docs = corpus / "documents"
    docs.mkdir(parents=True)
    (docs / f"a{suffix}").write_text("\n---\n\nA crownjewel story begins.\n\n---\n\nNote: the end.\n")
    (docs / f"b{suffix}").write_text("----\n\nTitle: not front matter\n\nA crownjewel tale.\n")
    (corpus / "inventory.yaml").write_text(
        f"a{suffix}: {{doc_id: a, version: '1', title: A, access: public}}\n"
        f"b{suffix}: {{doc_id: b, version: '1', title: B, access: public}}\n"
    )

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 0, done.stdout + done.stderr
    assert hits(store_args, "crownjewel", "public") == {"a", "b"}


# ------------------------------------------------------------------------------- YAML readings


@pytest.mark.parametrize(
    "yaml_fields",
    [
        "<<: {access: staff}\n<<: {access: public}\n",
        "<<: [{access: staff}, {access: public}]\n",
        "base: &b {access: staff}\n<<: *b\naccess: public\n",
    ],
)
def test_merge_keys_are_refused_in_front_matter(tmp_path, store_args, yaml_fields):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    (corpus / "documents" / "m.md").write_text(
        f"---\ndoc_id: m\nversion: '1'\ntitle: M\n{yaml_fields}---\n\nThe crownjewel.\n"
    )

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    [problem] = problems_of(done)["documents/m.md"]
    assert problem.startswith(
        "documents/m.md: unreadable file: front matter is not valid YAML: merge keys (<<) are not supported"
    )
    assert hits(store_args, "crownjewel", "public") == set()


def test_merge_keys_are_refused_in_the_inventory():
    entries, problems = read_inventory("a.md:\n  <<: [{access: staff}, {access: public}]\n")
    assert entries == {}
    assert problems == [
        "inventory.yaml: not valid YAML: merge keys (<<) are not supported: write each field out (line 2, column 3)"
    ]


def test_string_fields_keep_the_text_as_written(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    docs = corpus / "documents"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text(
        "---\ndoc_id: 0012\nversion: '1'\ntitle: 1.10\naccess: public\ntags: [007, 1:30]\n---\n\nokapi.\n"
    )
    (docs / "b.md").write_text("---\ndoc_id: 1:30\nversion: '1'\ntitle: B\naccess: public\n---\n\nokapi.\n")
    (docs / "c.txt").write_text("okapi.\n")
    (corpus / "inventory.yaml").write_text(
        "c.txt: {doc_id: 2025-01-01, version: 1.10, title: 2025-01-01, access: public}\n"
    )

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr  # "1:30" is not a slug: reported as written
    assert problems_of(done) == {
        "documents/b.md": ["documents/b.md: doc_id: not a slug: '1:30' (must match [a-z0-9][a-z0-9._-]*)"]
    }
    done = ingest("search", "okapi", "--json", *store_args)
    found = {(h["doc_id"], h["version"], h["title"]) for h in json.loads(done.stdout)["hits"]}
    assert found == {("0012", "1", "1.10"), ("2025-01-01", "1.10", "2025-01-01")}
    chunks = ingest("chunks", "0012", "--json", *store_args)
    assert chunks.returncode == 0, chunks.stdout + chunks.stderr
    assert json.loads(chunks.stdout)["chunks"][0]["tags"] == ["007", "1:30"]


@pytest.mark.parametrize("tag", ["a\nb", "nul\x00", "esc\x1b[31m", "bidi\u202eexe"])
def test_control_characters_in_tags_are_refused(tmp_path, store_args, tag):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    write_doc(corpus, "t.md", "t-doc", salt="crownjewel", tags=json.dumps(["ok", tag]))
    # HTML: a NUL makes a binary file and other C0 controls are dropped as the page is decoded
    in_html = tag in ("a\nb", "bidi\u202eexe")
    html = corpus / "documents" / ("t.html" if in_html else "t.html.off")
    html.write_text(
        '<html><head><title>T</title><meta name="doc_id" content="t-page"><meta name="version" content="1">'
        f'<meta name="access" content="public"><meta name="tags" content="ok, {tag}"></head>'
        "<body><main><p>The crownjewel page.</p></main></body></html>",
        encoding="utf-8",
    )

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    found = problems_of(done)
    assert set(found) == {"documents/t.md", "documents/t.html"} if in_html else {"documents/t.md"}
    for source, problems in found.items():
        assert problems == [f"{source}: tags: contains control or bidi-override characters: {tag!r}"]
    assert hits(store_args, "crownjewel", "public") == set()


def test_a_pdf_key_with_a_dash_is_the_field_and_checked_against_pdfium():
    import pypdfium2 as pdfium

    from ingest.metadata import resolve_metadata
    from ingest.model import UnreadableFile
    from ingest.parse import parse_bytes
    from ingest.parse.pdf_info_check import check_against_pdfium
    from tests.test_pdf_info_ambiguous import info, object_stream_pdf, two_info_pdf

    data = object_stream_pdf(info(b"/access (public) /effective-to (2020-01-01)"), compress=False)
    meta, problems, _ = resolve_metadata("x.pdf", parse_bytes(data, "x.pdf").metadata, None, Settings())
    assert problems == [] and meta is not None and str(meta.effective_to) == "2020-01-01"

    both = info(b"/access (public) /effective-to (2020-01-01)")
    document = pdfium.PdfDocument(two_info_pdf(both, both).replace(b"/Info 7 0 R", b"/Info 5 0 R"))
    try:
        base = [("/access", "public"), ("/doc_id", "merger"), ("/version", "1"), ("/Title", "Merger")]
        check_against_pdfium([*base, ("/effective-to", "2020-01-01")], document)  # the two readers agree
        with pytest.raises(UnreadableFile, match="effective-to: not given as pypdf reads the file, '2020-01-01'"):
            check_against_pdfium(base, document)  # pdfium sees an end date pypdf's entries do not give
    finally:
        document.close()
