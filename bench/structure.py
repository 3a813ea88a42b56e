"""Structure found on real documents: headings, sections and furniture, not retrieval.

Run by hand (not by the tests), on folders of documents nobody here wrote:

    .venv/bin/python bench/structure.py --pdf /work/realcorpus/texlive-pdf/documents
    .venv/bin/python bench/structure.py --html /work/realcorpus/postgres-html/documents --limit 100
    .venv/bin/python bench/structure.py --pdf /work/realcorpus/texlive-pdf/documents --speed

PDFs (the document's own outline, its bookmarks, is the reference):
- bookmarks found: share of outline entries that are heading blocks (text compared on
  letters and digits only, a leading section number optional on either side);
- sentence-like headings: share of heading blocks that read like a sentence or paragraph;
- U+FFFD: replacement characters in the parsed text;
- heading-only chunks: chunks whose every block is a heading;
- crossing chunks: chunks that run over the start of another bookmarked section (a block
  after the chunk's first one, not a heading, whose first line is a bookmark's title on
  that bookmark's page: the heading was missed, so the chunk runs on into the next section);
- under "Contents": chunks filed under a table of contents heading.
HTML:
- navigation-only chunks (Prev / Up / Next / Home bars), admonition headings
  ("Note", "Tip", "Warning" …) and headings that keep a "¶" permalink mark.

The library's own parse and chunk functions are used, with the default chunk settings.
``--speed`` instead compares the CPU time of ``parse_bytes`` on each PDF with pdfium merely
extracting its pages' text (process CPU time, so other load on the machine matters less).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest.chunk import chunk_document, content_blocks  # noqa: E402
from ingest.model import DocumentMeta, ParsedDocument, SourceDocument, UnreadableFile  # noqa: E402
from ingest.parse import parse_bytes  # noqa: E402
from ingest.settings import ChunkSettings  # noqa: E402

_NON_ALNUM = re.compile(r"[\W_]+")
_LEADING_NUMBER = re.compile(r"^(?:(?:\d+|[A-Z]|[IVXLC]+)(?:\.\d+)*\.?|chapter \d+:?|appendix [A-Z]:?)\s+", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;,]$")
_NAVIGATION_WORD = {"prev", "previous", "next", "up", "home", "top", "contents", "index", "search"}
_ADMONITIONS = {"note", "notes", "tip", "tips", "warning", "caution", "important", "danger", "attention",
                "hint", "error", "see also", "seealso"}
_CONTENTS = {"contents", "table of contents"}


def normalised(text: str) -> str:
    """Letters and digits only, case-folded: how bookmark and heading texts are compared."""
    return _NON_ALNUM.sub("", text).casefold()


def variants(text: str) -> set[str]:
    """The text compared with and without a leading section number."""
    text = " ".join(text.split())
    found = {normalised(text), normalised(_LEADING_NUMBER.sub("", text, count=1))}
    return {value for value in found if value}


def sentence_like(text: str) -> bool:
    """A heading that reads like running text: long, or several words ending like a sentence."""
    words = text.split()
    return len(words) > 15 or (len(words) >= 5 and bool(_SENTENCE_END.search(text.strip())))


@dataclass(frozen=True)
class Bookmark:
    title: str
    level: int
    page: int  # 1-based destination page; 0 when unknown


def bookmarks(data: bytes) -> list[Bookmark]:
    """The PDF's outline, flattened: title, depth (1 = top) and destination page."""
    from pypdf import PdfReader

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            reader = PdfReader(__import__("io").BytesIO(data), strict=False)
            outline = reader.outline
        except Exception:
            return []
        found: list[Bookmark] = []

        def walk(items: list, depth: int) -> None:
            for item in items:
                if isinstance(item, list):
                    walk(item, depth + 1)
                    continue
                try:
                    page = reader.get_destination_page_number(item) + 1
                except Exception:
                    page = 0
                title = " ".join(str(getattr(item, "title", "") or "").split())
                if title:
                    found.append(Bookmark(title, depth, page))

        walk(outline, 1)
        return found


def chunks_of(parsed: ParsedDocument, name: str):
    meta = DocumentMeta(doc_id="bench", version="1", title=name, access="public")
    doc = SourceDocument(source=name, sha256="0" * 64, parsed=parsed, meta=meta, format=parsed.format)
    return chunk_document(doc, ChunkSettings())


@dataclass
class PdfFigures:
    files: int = 0
    unreadable: int = 0
    with_bookmarks: int = 0
    bookmark_entries: int = 0
    bookmarks_found: int = 0
    heading_blocks: int = 0
    sentence_headings: int = 0
    replacement_chars: int = 0
    chunks: int = 0
    heading_only_chunks: int = 0
    crossing_chunks: int = 0
    contents_chunks: int = 0
    seconds: float = 0.0
    worst: list = field(default_factory=list)

    def report(self) -> dict:
        share = lambda a, b: round(a / b, 3) if b else None  # noqa: E731
        return {
            "files": self.files,
            "unreadable": self.unreadable,
            "files_with_bookmarks": self.with_bookmarks,
            "bookmark_entries": self.bookmark_entries,
            "bookmarks_found_as_headings": share(self.bookmarks_found, self.bookmark_entries),
            "heading_blocks": self.heading_blocks,
            "sentence_like_headings": share(self.sentence_headings, self.heading_blocks),
            "replacement_chars": self.replacement_chars,
            "chunks": self.chunks,
            "heading_only_chunks": share(self.heading_only_chunks, self.chunks),
            "chunks_crossing_a_bookmark": share(self.crossing_chunks, self.chunks),
            "chunks_under_contents": share(self.contents_chunks, self.chunks),
            "parse_seconds": round(self.seconds, 1),
            "lowest_bookmark_share": self.worst,
        }


def measure_pdf(path: Path, figures: PdfFigures, bookmarked_only: bool) -> None:
    data = path.read_bytes()
    marks = bookmarks(data)
    if bookmarked_only and not marks:
        return
    figures.files += 1
    started = time.perf_counter()
    try:
        parsed = parse_bytes(data, path.name)
    except UnreadableFile:
        figures.unreadable += 1
        return
    figures.seconds += time.perf_counter() - started
    text = parsed.text
    figures.replacement_chars += text.count("\ufffd")
    blocks = content_blocks(parsed)
    headings = [b for b in blocks if b.kind == "heading"]
    figures.heading_blocks += len(headings)
    figures.sentence_headings += sum(sentence_like(text[b.start : b.end]) for b in headings)
    heading_texts: set[str] = set()
    for block in headings:
        heading_texts |= variants(text[block.start : block.end])
    if marks:
        figures.with_bookmarks += 1
        found = sum(bool(variants(mark.title) & heading_texts) for mark in marks)
        figures.bookmark_entries += len(marks)
        figures.bookmarks_found += found
        figures.worst.append((round(found / len(marks), 2), path.name))
        figures.worst = sorted(figures.worst)[:8]
    # where each bookmark's text opens a block on its destination page
    opens: set[int] = set()
    by_page: dict[int, list[set[str]]] = {}
    for mark in marks:
        by_page.setdefault(mark.page, []).append({v for v in variants(mark.title) if len(v) >= 4})
    for block in blocks:
        if not block.pages or block.kind == "heading":
            continue
        first_line = text[block.start : block.end].split("\n", 1)[0].replace(" | ", " ")
        if any(variants(first_line) & titles for titles in by_page.get(block.pages[0], ())):
            opens.add(block.start)
    chunks = chunks_of(parsed, path.name)
    figures.chunks += len(chunks)
    block_starts = sorted(opens)
    for chunk in chunks:
        inside = [b for b in blocks if b.start < chunk.end and b.end > chunk.start]
        if inside and all(b.kind == "heading" for b in inside):
            figures.heading_only_chunks += 1
        if any(chunk.start < start < chunk.end for start in block_starts):
            figures.crossing_chunks += 1
        if chunk.section.strip().casefold() in _CONTENTS:
            figures.contents_chunks += 1


@dataclass
class HtmlFigures:
    files: int = 0
    unreadable: int = 0
    chunks: int = 0
    navigation_chunks: int = 0
    heading_blocks: int = 0
    admonition_headings: int = 0
    pilcrow_headings: int = 0
    seconds: float = 0.0

    def report(self) -> dict:
        return {
            "files": self.files,
            "unreadable": self.unreadable,
            "chunks": self.chunks,
            "navigation_only_chunks": self.navigation_chunks,
            "heading_blocks": self.heading_blocks,
            "admonition_headings": self.admonition_headings,
            "pilcrow_headings": self.pilcrow_headings,
            "parse_seconds": round(self.seconds, 1),
        }


def navigation_only(text: str) -> bool:
    """A chunk that is a Prev / Up / Next bar: mostly navigation words, little else."""
    words = re.findall(r"\w+", text.casefold())
    if not words:
        return False
    navigation = sum(word in _NAVIGATION_WORD for word in words)
    return navigation >= 2 and navigation * 2 >= len(words) - navigation or (
        len(words) <= 30 and re.match(r"^\s*(prev|previous)\b.*\bnext\b", text, re.I | re.S) is not None
    )


def measure_html(path: Path, figures: HtmlFigures) -> None:
    figures.files += 1
    started = time.perf_counter()
    try:
        parsed = parse_bytes(path.read_bytes(), path.name)
    except UnreadableFile:
        figures.unreadable += 1
        return
    figures.seconds += time.perf_counter() - started
    for block in parsed.blocks:
        if block.kind != "heading":
            continue
        heading = parsed.text[block.start : block.end]
        figures.heading_blocks += 1
        figures.admonition_headings += heading.strip().rstrip(":").casefold() in _ADMONITIONS
        figures.pilcrow_headings += "¶" in heading
    chunks = chunks_of(parsed, path.name)
    figures.chunks += len(chunks)
    figures.navigation_chunks += sum(navigation_only(chunk.text) for chunk in chunks)


def parse_speed(paths: list[Path]) -> dict:
    """CPU seconds of ``parse_bytes`` against pdfium merely extracting each page's text
    (open, text page, whole text), the ceiling for any PDF parser built on pdfium."""
    import pypdfium2 as pdfium

    raw_seconds = parse_seconds = 0.0
    pages = 0
    for path in paths:
        data = path.read_bytes()
        started = time.process_time()
        try:
            document = pdfium.PdfDocument(data)
        except Exception:
            continue
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            textpage.get_text_range()
            textpage.close()
            page.close()
        pages += len(document)
        document.close()
        raw_seconds += time.process_time() - started
        started = time.process_time()
        try:
            parse_bytes(data, path.name)
        except UnreadableFile:
            pass
        parse_seconds += time.process_time() - started
    return {
        "files": len(paths),
        "pages": pages,
        "raw_pdfium_text_cpu_seconds": round(raw_seconds, 2),
        "parse_cpu_seconds": round(parse_seconds, 2),
        "parse_speed_vs_raw": round(raw_seconds / parse_seconds, 2) if parse_seconds else None,
    }


def files(folder: Path, suffixes: tuple[str, ...], limit: int | None) -> list[Path]:
    found = sorted(p for p in folder.rglob("*") if p.suffix.lower() in suffixes and p.is_file())
    return found[:limit] if limit else found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pdf", type=Path, help="folder of PDFs (searched recursively)")
    parser.add_argument("--html", type=Path, help="folder of HTML pages (searched recursively)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many files per folder")
    parser.add_argument("--bookmarked-only", action="store_true", help="only PDFs that have an outline")
    parser.add_argument("--speed", action="store_true", help="PDF parse CPU time against raw pdfium page text")
    args = parser.parse_args()
    result: dict = {}
    if args.pdf and args.speed:
        result["pdf_speed"] = parse_speed(files(args.pdf, (".pdf",), args.limit))
    elif args.pdf:
        with_outline, without_outline = PdfFigures(), PdfFigures()
        for path in files(args.pdf, (".pdf",), args.limit):
            has_outline = bool(bookmarks(path.read_bytes()))
            if has_outline or not args.bookmarked_only:
                measure_pdf(path, with_outline if has_outline else without_outline, args.bookmarked_only)
        result["pdf_with_bookmarks"] = with_outline.report()
        if without_outline.files:
            result["pdf_without_bookmarks"] = without_outline.report()
    if args.html:
        html = HtmlFigures()
        for path in files(args.html, (".html", ".htm"), args.limit):
            measure_html(path, html)
        result["html"] = html.report()
    if not result:
        parser.error("give --pdf and/or --html")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
