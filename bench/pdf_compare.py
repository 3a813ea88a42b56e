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

import argparse
import pickle
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
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


def run_side(code: Path, paths: list[Path], out: Path) -> dict[str, Any]:
    listing = out.with_suffix(".list")
    listing.write_text("\n".join(map(str, paths)))
    subprocess.run(
        [sys.executable, __file__, "--dump", str(out), "--code", str(code), "--list", str(listing)],
        check=True,
        cwd=ROOT,
    )
    loaded: dict[str, Any] = pickle.loads(out.read_bytes())
    return loaded


def differences(old: Any, new: Any) -> list[tuple[str, str]]:
    """(kind, description) of every way one file's two results differ."""
    if old[0] != new[0] or (old[0] == "refused" and old[1] != new[1]):
        return [("outcome", f"{old[:2]!r} -> {new[:2]!r}"[:300])]
    if old[0] == "refused":
        return []
    _, old_text, old_starts, old_blocks, old_meta = old
    _, new_text, new_starts, new_blocks, new_meta = new
    found: list[tuple[str, str]] = []
    if old_text != new_text:
        at = next((i for i, (a, b) in enumerate(zip(old_text, new_text, strict=False)) if a != b), None)
        at = min(len(old_text), len(new_text)) if at is None else at
        found.append(("text", f"at {at}: {old_text[at - 40 : at + 60]!r} -> {new_text[at - 40 : at + 60]!r}"))
    if old_starts != new_starts or [b[5] for b in old_blocks] != [b[5] for b in new_blocks]:
        found.append(("pages", f"page_starts {old_starts[:8]}... -> {new_starts[:8]}..."))
    if [b[1:3] for b in old_blocks] != [b[1:3] for b in new_blocks]:
        found.append(("offsets", f"{len(old_blocks)} blocks -> {len(new_blocks)}"))
    structure = [(b[0], b[3], b[4], b[6]) for b in old_blocks], [(b[0], b[3], b[4], b[6]) for b in new_blocks]
    if structure[0] != structure[1]:
        first = next((i for i, (a, b) in enumerate(zip(*structure, strict=False)) if a != b), min(map(len, structure)))
        old_one = structure[0][first] if first < len(structure[0]) else None
        new_one = structure[1][first] if first < len(structure[1]) else None
        found.append(("blocks", f"{len(old_blocks)} -> {len(new_blocks)} blocks; #{first}: {old_one!r} -> {new_one!r}"))
    if old_meta != new_meta:
        found.append(("metadata", f"{old_meta!r} -> {new_meta!r}"[:300]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--ref", default=None, help="git revision of the old code (default: merge base with main)")
    parser.add_argument("--every", type=int, default=1, help="every N-th PDF (sorted by path)")
    parser.add_argument("--show", type=int, default=3, help="differences printed per kind")
    parser.add_argument("--dump", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--code", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--list", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        dump(args.code, [Path(line) for line in args.list.read_text().splitlines() if line], args.dump)
        return
    folders = args.folders or DEFAULT_FOLDERS
    paths = sorted(p for folder in folders for p in folder.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
    paths = paths[:: args.every]
    ref = (
        args.ref
        or subprocess.run(
            ["git", "merge-base", "HEAD", "main"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    with tempfile.TemporaryDirectory(prefix="pdf-compare-") as tmp:
        old_code = Path(tmp) / "old"
        old_code.mkdir()
        archive = subprocess.run(["git", "archive", ref, "ingest"], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old_code)], input=archive, check=True)
        old = run_side(old_code, paths, Path(tmp) / "old.pickle")
        new = run_side(ROOT, paths, Path(tmp) / "new.pickle")
    kinds: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    differing = 0
    for path in paths:
        found = differences(old[str(path)], new[str(path)])
        differing += bool(found)
        for kind, description in found:
            kinds[kind] += 1
            if shown[kind] < args.show:
                shown[kind] += 1
                print(f"{kind}: {path}: {description}")
    parsed = sum(old[str(path)][0] == "parsed" for path in paths)
    print(f"old code {ref[:12]}, {len(paths)} PDFs ({parsed} parsed by the old code): {differing} differ")
    for kind in ("outcome", "text", "pages", "offsets", "blocks", "metadata"):
        print(f"  {kind}: {kinds[kind]} files")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
