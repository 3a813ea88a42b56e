"""PDF parse CPU time against pdfium merely extracting the page text, with the parse split by stage.

Run by hand (not by the tests):

    .venv/bin/python bench/pdf_speed.py /work/realcorpus/texlive-pdf/documents             # whole corpus
    .venv/bin/python bench/pdf_speed.py /work/realcorpus/texlive-pdf/documents --every 8   # a fixed subset
    .venv/bin/python bench/pdf_speed.py /work/realcorpus/texlive-pdf/documents --ref c38b474  # older code

The ceiling is what any parser built on pdfium pays at least: open the document and, per
page, load it, build its text page and read the whole text (``get_text_range()``). Every
file is read into memory first; the ceiling and ``parse_bytes`` then run one after the other
on each file, ``--repeat`` times, and the best pass of each counts (``time.process_time``:
CPU of this process, so other load on a shared machine matters less; compare the ratio).
The stages of the parse (document information through pypdf, pdfium's lines, page
furniture, hyphens, wrapped table rows, blocks and assembly) are timed in a separate pass,
as ``pdf.parse_pdf`` runs them. One parse runs
before the timing, so that importing the parser (pypdf, pypdfium2) is not counted.
``--ref`` measures ``ingest/`` as it was at that git revision (taken out with ``git archive``);
its ratio is comparable with another run's, its seconds less so on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if "--ref" in sys.argv:  # the older code first on the path, before anything imports ingest
    import subprocess
    import tempfile

    _old = Path(tempfile.mkdtemp(prefix="pdf-speed-"))
    _archive = subprocess.run(
        ["git", "archive", sys.argv[sys.argv.index("--ref") + 1], "ingest"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(_old)], input=_archive, check=True)
    sys.path.insert(0, str(_old))
else:
    sys.path.insert(0, str(ROOT))

import pypdfium2 as pdfium  # noqa: E402

from ingest.model import UnreadableFile  # noqa: E402
from ingest.parse import parse_bytes  # noqa: E402
from ingest.parse import pdf as pdf_parser  # noqa: E402


def raw_text(data: bytes) -> int:
    """pdfium's page text, page by page: the ceiling. Returns the page count."""
    try:
        document = pdfium.PdfDocument(data)
    except Exception:  # noqa: BLE001 - a file pdfium refuses costs the ceiling nothing more
        return 0
    pages = len(document)
    for index in range(pages):
        page = document[index]
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    document.close()
    return pages


def parse(data: bytes) -> None:
    try:
        parse_bytes(data, "file.pdf")
    except UnreadableFile:
        pass


def stages(data: bytes, seconds: dict[str, float]) -> None:
    """The parse of ``pdf.parse_pdf`` step by step, each step's CPU added to ``seconds``."""

    def timed(name: str, function, *args):  # type: ignore[no-untyped-def]
        began = time.process_time()
        try:
            return function(*args)
        finally:
            seconds[name] = seconds.get(name, 0.0) + time.process_time() - began

    try:
        document = pdf_parser.pdfium.PdfDocument(data)
    except Exception:  # noqa: BLE001 - what pdfium cannot open, the parser refuses too
        return
    try:
        metadata = timed("information (pypdf)", pdf_parser._read_information, data, document)
        pages, outline = timed("lines (pdfium)", pdf_parser._read_pages_and_outline, document, data)
    except UnreadableFile:
        return
    finally:
        document.close()
    if not any(pages):
        return
    kept = timed("running lines", pdf_parser._without_running_lines, pages)
    lines = [line for page in kept for line in page]
    if not lines:
        return
    shy = getattr(pdf_parser, "_SHY", "")  # (older code has no joined lines, nor wrapped rows)
    joins = {index: line.text.count(shy) for index, line in enumerate(lines) if shy and shy in line.text}
    lines = timed("hyphens", pdf_parser._with_hyphens_resolved, lines)
    joined = {id(lines[index]): count for index, count in joins.items()}
    if hasattr(pdf_parser, "with_wrapped_rows_joined"):
        lines = timed("wrapped table rows", pdf_parser.with_wrapped_rows_joined, lines)
    drafts = (
        (lambda: pdf_parser._drafts(lines, outline, joined)) if shy else (lambda: pdf_parser._drafts(lines, outline))
    )
    timed("blocks + assemble", lambda: pdf_parser.assemble("pdf", drafts(), metadata, page_count=len(pages)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--every", type=int, default=1, help="every N-th PDF (sorted by path): a fixed subset")
    parser.add_argument("--repeat", type=int, default=1, help="passes; the best of each side counts")
    parser.add_argument("--no-stages", action="store_true", help="skip the per-stage pass")
    parser.add_argument("--ref", help="measure ingest/ at this git revision instead of the worktree's")
    args = parser.parse_args()
    paths = sorted(p for folder in args.folders for p in folder.rglob("*") if p.suffix.lower() == ".pdf")
    paths = paths[:: args.every]
    files = [path.read_bytes() for path in paths]
    for data in files[:1]:  # imports and first-call set-up, not counted
        raw_text(data)
        parse(data)
    best_raw = best_parse = float("inf")
    pages = 0
    for _ in range(args.repeat):
        raw_seconds = parse_seconds = 0.0
        pages = 0
        for data in files:
            began = time.process_time()
            pages += raw_text(data)
            raw_seconds += time.process_time() - began
            began = time.process_time()
            parse(data)
            parse_seconds += time.process_time() - began
        best_raw, best_parse = min(best_raw, raw_seconds), min(best_parse, parse_seconds)
    result: dict[str, object] = {
        "code": args.ref or "worktree",
        "files": len(files),
        "pages": pages,
        "MB": round(sum(map(len, files)) / 1e6, 1),
        "raw_pdfium_text_cpu_seconds": round(best_raw, 2),
        "parse_cpu_seconds": round(best_parse, 2),
        "parse_speed_vs_raw": round(best_raw / best_parse, 3) if best_parse else None,
    }
    if not args.no_stages:
        seconds: dict[str, float] = {}
        for data in files:
            stages(data, seconds)
        result["stage_cpu_seconds"] = {name: round(value, 2) for name, value in seconds.items()}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
