"""Parse speed per format, in MB/s of input on one core, against a ceiling measured in the same run.

Run by hand (not by the tests):

    .venv/bin/python bench/parse_speed.py                                 # the real corpora
    .venv/bin/python bench/parse_speed.py /work/realcorpus/postgres-html  # one folder
    .venv/bin/python bench/parse_speed.py --repeat 3 --limit 200 corpus

Every file of a folder (html, markdown, text; PDFs are skipped) is read into memory first,
then parsed with ``ingest.parse.parse_bytes``; the time is CPU time of this process
(``time.process_time``), best of ``--repeat`` passes. Ceilings: lxml building the HTML tree
(``lxml.html.document_fromstring``), markdown-it-pyrs's tree with the block rules ingest's
Markdown parser enables (inline parsing is left to the few headings), and ``str.splitlines`` of the
decoded text for plain text.

``--worker`` adds what a parser worker spends on each file besides: the SHA-256 of its bytes, the
metadata resolved with the folder's ``inventory.yaml`` and ``ingest.toml`` (when it is a corpus
folder), the term and heading checks and ``chunk_document`` with the folder's chunk settings, as
"worker CPU s" (the parse included) and chunks made.

``--imports N`` adds what a parser process pays once before its first file of each format: the CPU
time (user + system, best of N fresh interpreters) of importing what a worker imports
(``ingest.corpus``, ``ingest.chunk``) and then that format's parser, less the same interpreter
importing nothing (``python -c pass``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest.model import UnreadableFile  # noqa: E402
from ingest.parse import format_of, parse_bytes  # noqa: E402

DEFAULT_FOLDERS = [
    Path("/work/realcorpus/postgres-html"),
    Path("/work/realcorpus/python-html"),
    Path("/work/realcorpus/markdown"),
    Path("/work/realcorpus/text"),
]


def ceiling(fmt: str):
    if fmt == "html":
        import lxml.html

        return lambda data: lxml.html.document_fromstring(data)
    if fmt == "markdown":
        from ingest.parse.markdown import _rust_parser

        parser = _rust_parser()  # markdown-it-pyrs with the block rules ingest enables
        return lambda data: parser.tree(data.decode("utf-8", "replace"))
    if fmt == "text":
        return lambda data: data.decode("utf-8", "replace").splitlines()
    return None


def best_time(function, files: list[bytes], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.process_time()
        for data in files:
            with contextlib.suppress(UnreadableFile, ValueError):
                function(data)
        best = min(best, time.process_time() - began)
    return best


def worker_time(folder: Path, named: list[tuple[Path, bytes]], repeat: int) -> tuple[float, int]:
    """CPU seconds (best of ``repeat``) of parse, metadata, checks and chunking of every file; chunks made."""
    import hashlib

    from ingest.chunk import ChunkLimitExceeded, check_headings, check_terms, chunk_document
    from ingest.metadata import read_inventory, resolve_metadata
    from ingest.model import DocumentMeta, SourceDocument
    from ingest.settings import Settings, load_settings

    corpus = (folder / "inventory.yaml").exists()
    settings = load_settings(folder) if corpus else Settings()
    inventory = read_inventory((folder / "inventory.yaml").read_text(encoding="utf-8"))[0] if corpus else {}
    stand_in = DocumentMeta(doc_id="bench", version="1", title="bench", access=settings.labels[0])
    best, chunks = float("inf"), 0
    for _ in range(repeat):
        began, chunks = time.process_time(), 0
        for path, data in named:
            sha256 = hashlib.sha256(data).hexdigest()
            try:
                doc = parse_bytes(data, path.name)
            except UnreadableFile:
                continue
            source = path.relative_to(folder).as_posix()
            entry = inventory.get(path.relative_to(folder / "documents").as_posix()) if corpus else None
            meta = resolve_metadata(source, doc.metadata, entry, settings)[0] or stand_in
            document = SourceDocument(source, sha256, doc, meta, doc.format)
            with contextlib.suppress(ChunkLimitExceeded):
                check_terms(doc.text, document)
                check_headings(doc.blocks)
                chunks += len(chunk_document(document, settings.chunking, checked=True))  # as the worker
        best = min(best, time.process_time() - began)
    return best, chunks


def import_cpu(modules: str, repeat: int) -> float:
    """CPU seconds (best of ``repeat``) a fresh interpreter spends importing ``modules``, less ``pass``."""
    import resource
    import subprocess

    def best(code: str) -> float:
        spent = []
        for _ in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return min(spent)

    return best(f"import {modules}") - best("pass")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=DEFAULT_FOLDERS)
    parser.add_argument("--repeat", type=int, default=1, help="passes; the fastest counts")
    parser.add_argument("--limit", type=int, default=0, help="at most this many files per folder")
    parser.add_argument("--worker", action="store_true", help="also time parse + metadata + checks + chunking")
    parser.add_argument("--imports", type=int, default=0, metavar="N", help="also time a worker's imports (best of N)")
    args = parser.parse_args()
    if args.imports:
        base = "ingest.corpus, ingest.chunk"
        print(f"worker imports, CPU s (best of {args.imports}): {base}: {import_cpu(base, args.imports):.3f}", end="")
        for fmt in ("markdown", "text", "html", "pdf"):
            print(f"; + {fmt}: {import_cpu(f'{base}, ingest.parse.{fmt}', args.imports):.3f}", end="")
        print()
    header = (
        f"{'folder':<28} {'format':<9} {'files':>6} {'MB':>7} {'ingest MB/s':>12} {'ceiling MB/s':>13} {'ratio':>6}"
    )
    print(header + (f" {'worker CPU s':>13} {'chunks':>7}" if args.worker else ""))
    for folder in args.folders:
        by_format: dict[str, list[tuple[Path, bytes]]] = {}
        for path in sorted(folder.rglob("*")):
            fmt = format_of(path.name) if path.is_file() else None
            if fmt and fmt != "pdf":
                by_format.setdefault(fmt, []).append((path, path.read_bytes()))
        for fmt, named in sorted(by_format.items()):
            if args.limit:
                named = named[: args.limit]
            files = [data for _, data in named]
            megabytes = sum(map(len, files)) / 1e6
            ours = best_time(lambda data, name=named[0][0].name: parse_bytes(data, name), files, args.repeat)
            base = ceiling(fmt)
            theirs = best_time(base, files, args.repeat) if base else float("nan")
            line = (
                f"{folder.name:<28} {fmt:<9} {len(files):>6} {megabytes:>7.1f} {megabytes / ours:>12.1f} "
                f"{megabytes / theirs:>13.1f} {theirs / ours:>6.2f}"
            )
            if args.worker:
                spent, chunks = worker_time(folder, named, args.repeat)
                line += f" {spent:>13.2f} {chunks:>7}"
            print(line)


if __name__ == "__main__":
    main()
