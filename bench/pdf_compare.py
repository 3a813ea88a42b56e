"""The PDF parser's output, old code against new: every difference in text, blocks, pages and offsets.

Run by hand (not by the tests) after a change to the PDF parser:

    .venv/bin/python bench/pdf_compare.py                       # against the merge base with main
    .venv/bin/python bench/pdf_compare.py --ref c38b474 --every 8
    .venv/bin/python bench/pdf_compare.py --ref main /some/folder/of/pdfs

The old code is ``ingest/`` at ``--ref`` (by default where this branch left main), taken out
with ``git archive`` into a temporary folder; the new code is this worktree's ``ingest/``. Each
parses every PDF (by default: /work/realcorpus/texlive-pdf, tests/fixtures and corpus/) in its
own process, and the two results are compared file by file:

- outcome: parsed on one side, refused (``UnreadableFile``, with its reason) on the other, or
  refused for different reasons;
- text: the document text;
- pages: ``page_starts`` and each block's pages;
- offsets: each block's start and end;
- blocks: the number of blocks, and each block's kind, level, heading path and text;
- metadata: the document information fields.

Exit status 1 when any file differs; ``--show N`` prints the first N differences of each kind.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

from _compare import ROOT, arguments, compare, dumped, text_and_block_differences

DEFAULT_FOLDERS = [Path("/work/realcorpus/texlive-pdf/documents"), ROOT / "tests" / "fixtures", ROOT / "corpus"]


def dump(code: Path, paths: list[Path], out: Path) -> None:
    """Parse ``paths`` with the ``ingest`` package found in ``code``; pickle the results."""
    sys.path.insert(0, str(code))
    from ingest.model import UnreadableFile
    from ingest.parse import parse_bytes

    results: dict[str, Any] = {}
    for path in paths:
        try:
            doc = parse_bytes(path.read_bytes(), path.name)
        except UnreadableFile as exc:
            results[str(path)] = ("refused", str(exc))
            continue
        blocks = [
            (b.kind, b.start, b.end, b.level, b.heading_path, b.pages, doc.text[b.start : b.end]) for b in doc.blocks
        ]
        results[str(path)] = ("parsed", doc.text, doc.page_starts, blocks, dict(doc.metadata))
    out.write_bytes(pickle.dumps(results))


def differences(old: Any, new: Any) -> list[tuple[str, str]]:
    """(kind, description) of every way one file's two results differ."""
    if old[0] != new[0] or (old[0] == "refused" and old[1] != new[1]):
        return [("outcome", f"{old[:2]!r} -> {new[:2]!r}"[:300])]
    if old[0] == "refused":
        return []
    _, old_text, old_starts, old_blocks, old_meta = old
    _, new_text, new_starts, new_blocks, new_meta = new
    found = text_and_block_differences(old_text, new_text, old_starts, new_starts, old_blocks, new_blocks)
    if old_meta != new_meta:
        found.append(("metadata", f"{old_meta!r} -> {new_meta!r}"[:300]))
    return found


def main() -> None:
    args = arguments(__doc__.split("\n")[0], "PDF")
    if dumped(args, dump):
        return
    folders = args.folders or DEFAULT_FOLDERS
    paths = sorted(p for folder in folders for p in folder.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
    paths = paths[:: args.every]
    result = compare(__file__, args, paths, differences)
    parsed = sum(result.old[str(path)][0] == "parsed" for path in paths)
    print(f"old code {result.ref[:12]}, {len(paths)} PDFs ({parsed} parsed by the old code): {result.differing} differ")
    for kind in ("outcome", "text", "pages", "offsets", "blocks", "metadata"):
        print(f"  {kind}: {result.kinds[kind]} files")
    sys.exit(1 if result.differing else 0)


if __name__ == "__main__":
    main()
