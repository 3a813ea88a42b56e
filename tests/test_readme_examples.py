"""README's examples say what the product prints: the `ingest parse` example's character count and
block offsets, and the parser version in the `ingest stats` example."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from ingest.cli import app
from ingest.parse import PARSER_VERSION

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PDF = "corpus/documents/manuals/engine-manual-x40.pdf"
BLOCK = re.compile(r"^ +(\d+) (\w+) +(\d+-\d+) +(p[\d-]*)")


def test_the_parse_example_prints_what_ingest_parse_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    printed = CliRunner().invoke(app, ["parse", PDF, "--no-text"], catch_exceptions=False).stdout.splitlines()
    example = README.split(f"$ ingest parse {PDF} --no-text\n", 1)[1].split("```", 1)[0].splitlines()
    assert example[0] == printed[0]
    actual = {m.group(1): m.groups() for m in map(BLOCK.match, printed) if m}
    shown = [m.groups() for m in map(BLOCK.match, example) if m]
    assert shown and all(actual[block[0]] == block for block in shown)


def test_the_stats_example_names_the_parser_version():
    assert re.findall(r"with chunker structure size 200, parser v(\w+)", README) == [PARSER_VERSION]
