"""One parser per format, all returning :class:`ingest.model.ParsedDocument`.

``parse_bytes(data, name)`` picks the parser from the file name's suffix. Every
parser is a pure function of the bytes: the same bytes always give the same text.
A file that cannot be read raises :class:`ingest.model.UnreadableFile` with a
reason, never any other exception. ``labels``, the corpus's access labels (from its
settings, which the caller reads), are the one value besides the bytes that a
metadata rule needs: a PDF keyword ``access internal`` names a field where
``internal`` is a label.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, cast

from ingest.collector import collector_paused
from ingest.model import ParsedDocument, UnreadableFile

PARSER_VERSION = "12"  # bump when a parser's output changes: stored documents are then re-chunked

SUFFIXES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
    ".pdf": "pdf",
}

MAX_BYTES = 50 * 1024 * 1024  # a larger file is refused rather than read into memory


def format_of(name: str | Path) -> str | None:
    if isinstance(name, str) and os.sep not in name and (os.altsep is None or os.altsep not in name):
        # a bare file name (what a worker passes): pathlib's suffix rule without making a Path
        dot = name.rfind(".")
        return SUFFIXES.get(name[dot:].lower()) if 0 < dot < len(name) - 1 else None
    return SUFFIXES.get(Path(name).suffix.lower())


# format -> (module, parser function, metadata-only reader); modules imported on first use
_PARSERS = {
    "markdown": ("ingest.parse.markdown", "parse_markdown", "read_markdown_metadata"),
    "html": ("ingest.parse.html", "parse_html", "read_html_metadata"),
    "text": ("ingest.parse.text", "parse_text", "read_text_metadata"),
    "pdf": ("ingest.parse.pdf", "parse_pdf", "read_pdf_metadata"),
}


_READS_LABELS = frozenset({"pdf"})  # the formats whose functions take the access labels

_loaded: dict[tuple[str, int], Callable[[bytes, Collection[str]], Any]] = {}  # (format, which) -> function


def _function(name: str | Path, which: int) -> Callable[[bytes, Collection[str]], Any]:
    """The parser (1) or metadata reader (2) for a file name, called with the bytes and the access
    labels; UnreadableFile for other suffixes."""
    fmt = format_of(name)
    if fmt is None:
        raise UnreadableFile(f"unsupported file type {Path(name).suffix!r}")
    return _format_function(fmt, which)


def _format_function(fmt: str, which: int) -> Callable[[bytes, Collection[str]], Any]:
    # importlib.import_module goes through the import machinery on every call, even for a module
    # already imported (2 % of a small file's parse): each function is looked up once
    found = _loaded.get((fmt, which))
    if found is None:
        entry = _PARSERS[fmt]
        function = getattr(importlib.import_module(entry[0]), entry[which])
        found = _loaded[fmt, which] = function if fmt in _READS_LABELS else _without_labels(function)
    return found


def load_parsers(formats: Collection[str]) -> None:
    """Import the parser and metadata reader of each format now (a parser process, before its memory
    cap: the cap is for a file, and an import cut short by it would fail every later file)."""
    for fmt in formats:
        for which in (1, 2):
            _format_function(fmt, which)


def _without_labels(function: Callable[[bytes], Any]) -> Callable[[bytes, Collection[str]], Any]:
    def call(data: bytes, labels: Collection[str]) -> Any:
        return function(data)

    return call


def parse_bytes(data: bytes, name: str | Path, labels: Collection[str] = ()) -> ParsedDocument:
    parser = _function(name, 1)
    if not data:
        raise UnreadableFile("empty file")
    if len(data) > MAX_BYTES:
        raise UnreadableFile(f"file too large ({len(data)} bytes; limit {MAX_BYTES})")
    try:
        with collector_paused():
            return cast(ParsedDocument, parser(data, labels))
    except RecursionError:
        # Deeply nested markup (100,000 <div>s, endless > quotes) exhausts the parser's stack.
        raise UnreadableFile("nested too deeply to parse") from None


def read_metadata(data: bytes, name: str | Path, labels: Collection[str] = ()) -> dict[str, Any]:
    """The raw metadata fields of a file without parsing its body: the same fields
    ``parse_bytes(data, name, labels).metadata`` gives, for files a sync already holds unchanged."""
    return cast(dict[str, Any], _function(name, 2)(data, labels))


def parse_file(path: str | Path) -> ParsedDocument:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(f"cannot read file: {exc.strerror or exc}") from None
    return parse_bytes(data, path)
