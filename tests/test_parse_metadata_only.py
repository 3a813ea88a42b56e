"""The sync's fast path reads only a stored file's metadata: it must be exactly what the
full parse finds, for every file of the sample corpus and the test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.model import UnreadableFile
from ingest.parse import SUFFIXES, parse_bytes, read_metadata

ROOT = Path(__file__).resolve().parents[1]


def _readable(path: Path) -> bool:
    """Unreadable files are never stored, so never on the fast path."""
    try:
        parse_bytes(path.read_bytes(), path.name)
    except UnreadableFile:
        return False
    return True


FILES = sorted(
    p for base in (ROOT / "corpus", ROOT / "tests" / "fixtures") for p in base.rglob("*")
    if p.is_file() and p.suffix.lower() in SUFFIXES and _readable(p)
)


def test_there_are_files_of_every_format():
    assert {p.suffix.lower() for p in FILES} >= {".md", ".html", ".txt", ".pdf"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_metadata_alone_equals_the_full_parse(path):
    data = path.read_bytes()
    assert read_metadata(data, path.name) == dict(parse_bytes(data, path.name).metadata)
