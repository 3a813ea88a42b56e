"""What bench/pdf_compare.py and bench/parse_compare.py share: the code of a git revision beside the
working tree, each run in its own process over the same files (``--dump``), and the differences
counted and shown by kind."""

from __future__ import annotations

import argparse
import pickle
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

Differences = Callable[[Any, Any], list[tuple[str, str]]]


def arguments(description: str, unit: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--ref", default=None, help="git revision of the old code (default: merge base with main)")
    parser.add_argument("--every", type=int, default=1, help=f"every N-th {unit} (sorted by path)")
    parser.add_argument("--show", type=int, default=3, help="differences printed per kind")
    parser.add_argument("--dump", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--code", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--list", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args()


def dumped(args: argparse.Namespace, dump: Callable[[Path, list[Path], Path], None]) -> bool:
    """In the process of one side (``--dump``): run ``dump`` over the listed files; True when it did."""
    if not args.dump:
        return False
    dump(args.code, [Path(line) for line in args.list.read_text().splitlines() if line], args.dump)
    return True


@dataclass(frozen=True)
class Comparison:
    ref: str
    old: dict[str, Any]
    new: dict[str, Any]
    differing: int
    kinds: Counter[str]


def compare(script: str, args: argparse.Namespace, paths: list[Path], differences: Differences) -> Comparison:
    """Both sides over ``paths`` (in parallel), then every file's differences, the first ``args.show``
    of each kind printed."""
    ref = args.ref or _git("merge-base", "HEAD", "main").decode().strip()
    with tempfile.TemporaryDirectory(prefix="compare-") as tmp:
        old_code = Path(tmp) / "old"
        old_code.mkdir()
        subprocess.run(["tar", "-x", "-C", str(old_code)], input=_git("archive", ref, "ingest"), check=True)
        sides = [_side(script, code, paths, Path(tmp) / name) for code, name in ((old_code, "old"), (ROOT, "new"))]
        if any(side.wait() != 0 for side in sides):
            sys.exit("a side failed")
        old, new = (pickle.loads((Path(tmp) / f"{name}.pickle").read_bytes()) for name in ("old", "new"))
    kinds: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    differing = 0
    for path in paths:
        found = differences(old[str(path)], new[str(path)])
        differing += bool(found)
        kinds.update({kind for kind, _ in found})
        for kind, description in found:
            if shown[kind] < args.show:
                shown[kind] += 1
                print(f"{kind}: {path}: {description}")
    return Comparison(ref, old, new, differing, kinds)


def text_and_block_differences(
    old_text: str, new_text: str, old_starts: Any, new_starts: Any, old_blocks: list[Any], new_blocks: list[Any]
) -> list[tuple[str, str]]:
    """Text, pages, offsets and blocks; a block is (kind, start, end, level, heading path, pages, text)."""
    found: list[tuple[str, str]] = []
    if old_text != new_text:
        at = next((i for i, (a, b) in enumerate(zip(old_text, new_text, strict=False)) if a != b), None)
        at = min(len(old_text), len(new_text)) if at is None else at
        found.append(
            ("text", f"at {at}: {old_text[max(at - 40, 0) : at + 60]!r} -> {new_text[max(at - 40, 0) : at + 60]!r}")
        )
    if old_starts != new_starts or [b[5] for b in old_blocks] != [b[5] for b in new_blocks]:
        found.append(("pages", f"page_starts {old_starts[:8]}... -> {new_starts[:8]}..."))
    if [b[1:3] for b in old_blocks] != [b[1:3] for b in new_blocks]:
        found.append(("offsets", first_difference([b[1:3] for b in old_blocks], [b[1:3] for b in new_blocks])))
    structure = [(b[0], b[3], b[4], b[6]) for b in old_blocks], [(b[0], b[3], b[4], b[6]) for b in new_blocks]
    if structure[0] != structure[1]:
        found.append(("blocks", first_difference(*structure)))
    return found


def first_difference(old: list[Any], new: list[Any]) -> str:
    first = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    old_one = old[first] if first < len(old) else None
    new_one = new[first] if first < len(new) else None
    return f"{len(old)} -> {len(new)}; #{first}: {old_one!r} -> {new_one!r}"[:600]


def _git(*args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True).stdout


def _side(script: str, code: Path, paths: list[Path], out: Path) -> subprocess.Popen[bytes]:
    listing = out.with_suffix(".list")
    listing.write_text("\n".join(map(str, paths)))
    return subprocess.Popen(
        [
            sys.executable,
            script,
            "--dump",
            str(out.with_suffix(".pickle")),
            "--code",
            str(code),
            "--list",
            str(listing),
        ],
        cwd=ROOT,
    )
