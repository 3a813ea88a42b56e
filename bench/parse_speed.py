"""Parse speed per format, in MB/s of input on one core, against a ceiling measured in the same run.

Run by hand (not by the tests):

    .venv/bin/python bench/parse_speed.py                                 # the real corpora
    .venv/bin/python bench/parse_speed.py /work/realcorpus/postgres-html  # one folder
    .venv/bin/python bench/parse_speed.py --repeat 3 --limit 200 corpus

Every file of a folder (html, markdown, text; PDFs are skipped) is read into memory first,
then parsed with ``ingest.parse.parse_bytes``; the time is CPU time of this process
(``time.process_time``), best of ``--repeat`` passes. Ceilings: lxml building the HTML tree
(``lxml.html.document_fromstring``), markdown-it's block pass (the tokens ingest's Markdown
parser asks of it: inline parsing is left to the few headings), and ``str.splitlines`` of the
decoded text for plain text.
"""

from __future__ import annotations

import argparse
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
        from markdown_it import MarkdownIt

        parser = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
        return lambda data: parser.parse(data.decode("utf-8", "replace"))
    if fmt == "text":
        return lambda data: data.decode("utf-8", "replace").splitlines()
    return None


def best_time(function, files: list[bytes], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.process_time()
        for data in files:
            try:
                function(data)
            except (UnreadableFile, ValueError):
                pass
        best = min(best, time.process_time() - began)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=DEFAULT_FOLDERS)
    parser.add_argument("--repeat", type=int, default=1, help="passes; the fastest counts")
    parser.add_argument("--limit", type=int, default=0, help="at most this many files per folder")
    args = parser.parse_args()
    print(f"{'folder':<28} {'format':<9} {'files':>6} {'MB':>7} {'ingest MB/s':>12} {'ceiling MB/s':>13} {'ratio':>6}")
    for folder in args.folders:
        by_format: dict[str, list[tuple[str, bytes]]] = {}
        for path in sorted(folder.rglob("*")):
            fmt = format_of(path.name) if path.is_file() else None
            if fmt and fmt != "pdf":
                by_format.setdefault(fmt, []).append((path.name, path.read_bytes()))
        for fmt, named in sorted(by_format.items()):
            if args.limit:
                named = named[: args.limit]
            files = [data for _, data in named]
            megabytes = sum(map(len, files)) / 1e6
            ours = best_time(lambda data, name=named[0][0]: parse_bytes(data, name), files, args.repeat)
            base = ceiling(fmt)
            theirs = best_time(base, files, args.repeat) if base else float("nan")
            print(
                f"{folder.name:<28} {fmt:<9} {len(files):>6} {megabytes:>7.1f} {megabytes / ours:>12.1f} "
                f"{megabytes / theirs:>13.1f} {theirs / ours:>6.2f}"
            )


if __name__ == "__main__":
    main()
