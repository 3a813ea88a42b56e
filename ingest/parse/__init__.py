"""One parser per format, all returning :class:`ingest.model.ParsedDocument`.

``parse_bytes(data, name)`` picks the parser from the file name's suffix. Every
parser is a pure function of the bytes: the same bytes always give the same text.
A file that cannot be read raises :class:`ingest.model.UnreadableFile` with a
reason, never any other exception.
"""

from __future__ import annotations

from pathlib import Path

from ingest.model import ParsedDocument, UnreadableFile

PARSER_VERSION = "2"  # bump when a parser's output changes: stored documents are then re-chunked

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
    return SUFFIXES.get(Path(name).suffix.lower())


def parse_bytes(data: bytes, name: str | Path) -> ParsedDocument:
    fmt = format_of(name)
    if fmt is None:
        raise UnreadableFile(f"unsupported file type {Path(name).suffix!r}")
    if not data:
        raise UnreadableFile("empty file")
    if len(data) > MAX_BYTES:
        raise UnreadableFile(f"file too large ({len(data)} bytes; limit {MAX_BYTES})")
    if fmt == "markdown":
        from ingest.parse.markdown import parse_markdown as parser
    elif fmt == "html":
        from ingest.parse.html import parse_html as parser
    elif fmt == "text":
        from ingest.parse.text import parse_text as parser
    else:
        from ingest.parse.pdf import parse_pdf as parser
    try:
        return parser(data)
    except RecursionError:
        # Deeply nested markup (100,000 <div>s, endless > quotes) exhausts the parser's stack.
        raise UnreadableFile("nested too deeply to parse") from None


def read_metadata(data: bytes, name: str | Path) -> dict:
    """The raw metadata fields of a file without parsing its body: the same fields
    ``parse_bytes(data, name).metadata`` gives, for files a sync already holds unchanged."""
    fmt = format_of(name)
    if fmt == "markdown":
        from ingest.parse.markdown import read_markdown_metadata as reader
    elif fmt == "html":
        from ingest.parse.html import read_html_metadata as reader
    elif fmt == "text":
        from ingest.parse.text import read_text_metadata as reader
    elif fmt == "pdf":
        from ingest.parse.pdf import read_pdf_metadata as reader
    else:
        raise UnreadableFile(f"unsupported file type {Path(name).suffix!r}")
    return reader(data)


def parse_file(path: str | Path) -> ParsedDocument:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(f"cannot read file: {exc.strerror or exc}") from None
    return parse_bytes(data, path)
