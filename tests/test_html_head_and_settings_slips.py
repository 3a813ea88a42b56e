"""Lower findings of the outside pass (session 7): two HTML <title> elements (the first used silently); a
declared charset that cannot read the bytes (utf-7: text indexed with U+FFFD, no problem); a 240-character
access label blamed on the index prefix; a duplicated doc_id@version message that read "version: 'a'
version '1' is also …"."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ingest.settings import SettingsError, settings_from_dict
from tests.corpus_builder import write_doc


def ingest(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ingest.cli", *map(str, args)], capture_output=True, text=True)


def page(head: str, charset: str = "") -> bytes:
    meta = f'<meta charset="{charset}">' if charset else ""
    return (
        f'<html><head>{meta}{head}<meta name="doc_id" content="page"><meta name="version" content="1">'
        '<meta name="access" content="public"></head><body><main><p>The crownjewel page.</p>'
        "<svg><title>icon</title></svg></main></body></html>"
    ).encode()


@pytest.mark.parametrize(
    "data, problem",
    [
        (page("<title>Public notes</title><title>Board minutes</title>"),
         "title: given 2 times: ['Public notes', 'Board minutes']"),
        (page("<title>Notes</title>", charset="shift_jis") + b"\xff\xfe caf\xe9",
         "unreadable file: not shift_jis text (its declared charset): "),
    ],
)  # fmt: skip
def test_an_ambiguous_html_head_rejects_the_page(tmp_path, store_args, data, problem):
    corpus = tmp_path / "corpus"
    write_doc(corpus, "pub.md", "pub-doc", salt="zebracorn")
    (corpus / "documents" / "page.html").write_bytes(data)

    done = ingest("run", corpus, "--json", *store_args)

    assert done.returncode == 1, done.stdout + done.stderr
    [found] = json.loads(done.stdout)["problems"]
    assert found["source"] == "documents/page.html"
    assert found["problems"][0].startswith(f"documents/page.html: {problem}"), found
    search = ingest("search", "crownjewel", "--json", *store_args)
    assert json.loads(search.stdout)["hits"] == []


def test_one_title_and_svg_titles_are_fine(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    (corpus / "documents").mkdir(parents=True)
    (corpus / "documents" / "page.html").write_bytes(page("<title>Notes</title>"))
    assert ingest("run", corpus, "--quiet", *store_args).returncode == 0
    search = ingest("search", "crownjewel", "--json", *store_args)
    assert [hit["title"] for hit in json.loads(search.stdout)["hits"]] == ["Notes"]


def test_a_label_too_long_is_blamed_on_the_label():
    with pytest.raises(SettingsError, match=r"access.labels: 'x+'… is 240 characters long; a label has at most 100"):
        settings_from_dict({"access": {"labels": ["public", "x" * 240]}})
