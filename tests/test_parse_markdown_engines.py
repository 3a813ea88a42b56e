"""Markdown blocks come from markdown-it-pyrs; markdown-it-py gives the same drafts (it parses what is
nested too deeply for the Rust parser's stack). Both are compared on every Markdown file of the repo
and on constructs where their source maps and texts could part."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ingest.parse import parse_bytes
from ingest.parse._common import clean_body, decode_utf8_text, split_front_matter
from ingest.parse.markdown import DEEP_PREFIX, markdown_drafts, python_drafts

ROOT = Path(__file__).resolve().parents[1]
MARKDOWN_FILES = sorted(p for folder in ("corpus", "tests/fixtures") for p in (ROOT / folder).rglob("*.md"))

CONSTRUCTS = {
    "heading links": "# See [the guide][g] and [Missing][m] ![pic](x.png) `code` <span id=a></span>x\n\n[G]: /guide\n",
    "setext and atx": "Title *one*\n==========\n\nSub\n---\n\n### Three ###\n",
    "quoted list and table": "> - a\n>   b\n> - é\n>\n> | x | y |\n> |---|---|\n> | 1 | 2 |\n",
    "multibyte before a list": "Ünïcødé 日本語 text\n\n- один\n- два\n\n  continued\n\ntail\n",
    "code and html": "    indented\n\n```py\nfenced\n```\n\n<div>\n<!-- hidden -->\nshown</div>\n\n<!-- only -->\n",
    "tabs and lazy lines": "-\tone\n\ttwo\nlazy\n\n1) x\n2) y\n\n> quote\nlazy line\n",
    "nested lists": "".join("  " * i + f"- level {i}\n" for i in range(40)),
    "table without body": "| a | b |\n| - | - |\n\npara\n",
    "hr and breaks": "a  \nb\\\nc\n\n***\n\n- - -\n",
}


def body_of(data: bytes) -> str:
    return clean_body(split_front_matter(decode_utf8_text(data))[1])


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_both_engines_give_the_same_blocks_of_a_construct(name):
    body = CONSTRUCTS[name]
    assert markdown_drafts(body) == python_drafts(body)
    assert markdown_drafts(body)  # something was read


def test_both_engines_give_the_same_blocks_of_every_markdown_file_in_the_repo():
    assert len(MARKDOWN_FILES) > 20
    for path in MARKDOWN_FILES:
        try:
            body = body_of(path.read_bytes())
        except Exception:  # noqa: BLE001 - files the parser refuses are compared elsewhere
            continue
        assert markdown_drafts(body) == python_drafts(body), path


def test_a_line_with_a_long_run_of_markers_is_parsed_by_markdown_it_py_with_the_same_text():
    rule = "-" * (DEEP_PREFIX + 10)
    data = f"---\ndoc_id: a\n---\n# Title\n\nbody text\n\n{rule}\n\nafter\n".encode()
    parsed = parse_bytes(data, "a.md")
    assert [parsed.text[b.start : b.end] for b in parsed.blocks] == ["Title", "body text", "after"]
    body = body_of(data)
    assert python_drafts(body) == markdown_drafts(body)  # what the Rust parser would have given


@pytest.mark.parametrize("depth", [300, 30_000])
def test_deep_nesting_is_refused_or_parsed_never_a_crash(depth):
    # markdown-it-pyrs segfaults past about 20,000 levels: such a file must not kill its parser process.
    code = (
        "import sys; from ingest.parse import parse_bytes; from ingest.model import UnreadableFile\n"
        f"data = ('---\\ndoc_id: a\\n---\\n' + '> - ' * {depth} + 'deep\\n').encode()\n"
        "try:\n    parse_bytes(data, 'a.md'); print('parsed')\n"
        "except UnreadableFile as exc:\n    print('refused', exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    assert done.stdout.startswith(("parsed", "refused nested too deeply")), done.stdout
