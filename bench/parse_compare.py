"""Parsing and chunking, old code against new: every difference in what a file becomes.

Run by hand (not by the tests) after a change to the HTML, Markdown or text parsers, the
metadata rules or the chunker:

    .venv/bin/python bench/parse_compare.py                       # against the merge base with main
    .venv/bin/python bench/parse_compare.py --ref de7163b --show 5
    .venv/bin/python bench/parse_compare.py --ref main /some/corpus

The old code is ``ingest/`` at ``--ref`` (by default where this branch left main), taken out
with ``git archive`` into a temporary folder; the new code is this worktree's ``ingest/``. Each
side, in its own process, takes every HTML, Markdown and text file (by default of every corpus
under /work/realcorpus, tests/fixtures and corpus/) through what a run's worker does with it:

- ``parse_bytes``, and ``read_metadata`` (the metadata-only read of a sync);
- ``resolve_metadata`` with the file's inventory entry and its corpus's ``ingest.toml`` (a file
  outside a corpus folder: no entry, default settings);
- the term and heading checks, then ``chunk_document`` with the corpus's chunk settings and
  with the ``fixed`` and ``overlap`` chunkers at small sizes (so that cutting is exercised), under
  the resolved metadata, or under a stand-in when the file's metadata is refused.

The two results are compared file by file and every difference is counted by kind:

- outcome: parsed on one side, refused on the other, or refused for different reasons;
- text, blocks (kind, level, heading path, text), offsets (block starts and ends), pages;
- metadata: the raw fields, the metadata-only read, the resolved metadata or its problems;
- terms: the term/heading check's verdict;
- chunks: per chunker, every field of every chunk (ID, text, offsets, heading path, sections,
  pages, word count, ...) or the refusal.

Exit status 1 when any file differs; ``--show N`` prints the first N differences of each kind.
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from _compare import ROOT, arguments, compare, dumped, text_and_block_differences

REAL = Path("/work/realcorpus")
DEFAULT_FOLDERS = [*sorted(p for p in REAL.iterdir() if p.is_dir()), ROOT / "tests" / "fixtures", ROOT / "corpus"]
KINDS = ("outcome", "text", "blocks", "offsets", "pages", "metadata", "terms", "chunks")


def corpus_root(path: Path) -> Path | None:
    """The corpus folder a file lies in (the parent of its ``documents/``), if any."""
    for parent in path.parents:
        if parent.name == "documents" and parent.parent.joinpath("inventory.yaml").exists():
            return parent.parent
    return None


def dump(code: Path, paths: list[Path], out: Path) -> None:
    """Parse and chunk ``paths`` with the ``ingest`` package found in ``code``; pickle the results."""
    sys.path.insert(0, str(code))
    import ingest

    assert Path(ingest.__file__).resolve().parent == (code / "ingest").resolve(), ingest.__file__
    from ingest.metadata import read_inventory
    from ingest.settings import Settings, load_settings

    corpora: dict[Path | None, tuple[Any, dict[str, Any]]] = {None: (Settings(), {})}
    results: dict[str, Any] = {}
    for path in paths:
        root = corpus_root(path)
        if root not in corpora:
            assert root is not None
            inventory, _ = read_inventory((root / "inventory.yaml").read_text(encoding="utf-8"))
            corpora[root] = (load_settings(root), inventory)
        settings, inventory = corpora[root]
        results[str(path)] = one_file(path, root, settings, inventory)
    out.write_bytes(pickle.dumps(results))


def _error(exc: BaseException) -> tuple[str, str]:
    return ("error", f"{type(exc).__name__}: {exc}")


def one_file(path: Path, root: Path | None, settings: Any, inventory: dict[str, Any]) -> dict[str, Any]:
    """Everything the code makes of one file, as plain values (no classes of the code's own)."""
    import dataclasses

    from ingest.chunk import ChunkLimitExceeded, check_headings, check_terms, chunk_document
    from ingest.model import DocumentMeta, SourceDocument, UnreadableFile
    from ingest.parse import parse_bytes, read_metadata
    from ingest.settings import ChunkSettings

    data = path.read_bytes()
    source = path.relative_to(root).as_posix() if root else path.name
    entry = inventory.get(path.relative_to(root / "documents").as_posix()) if root else None
    result: dict[str, Any] = {}
    try:
        result["read_metadata"] = ("ok", dict(read_metadata(data, path.name)))
    except UnreadableFile as exc:
        result["read_metadata"] = ("refused", str(exc))
    except Exception as exc:  # noqa: BLE001 - a crash is a result to compare too
        result["read_metadata"] = _error(exc)
    try:
        doc = parse_bytes(data, path.name)
    except UnreadableFile as exc:
        result["outcome"] = ("refused", str(exc))
        return result
    except Exception as exc:  # noqa: BLE001
        result["outcome"] = _error(exc)
        return result
    result["outcome"] = ("parsed", "")
    result["text"] = doc.text
    result["page_starts"] = doc.page_starts
    result["blocks"] = [
        (b.kind, b.start, b.end, b.level, b.heading_path, b.pages, doc.text[b.start : b.end]) for b in doc.blocks
    ]
    result["fields"] = dict(doc.metadata)
    from ingest.metadata import resolve_metadata

    meta, problems, defaulted = resolve_metadata(source, doc.metadata, entry, settings)
    result["meta"] = (dataclasses.asdict(meta) if meta else None, problems, defaulted)
    if meta is None:  # chunked all the same, under a stand-in
        meta = DocumentMeta(doc_id="compare", version="1", title="compare", access=settings.labels[0])
    document = SourceDocument(source, hashlib.sha256(data).hexdigest(), doc, meta, doc.format)
    try:
        check_terms(doc.text, document)
        check_headings(doc.blocks)
        result["terms"] = "ok"
    except ChunkLimitExceeded as exc:
        result["terms"] = str(exc)
    chunkings = [settings.chunking, ChunkSettings("fixed", 50), ChunkSettings("overlap", 40, 15)]
    result["chunks"] = {}
    for chunking in chunkings:
        try:
            chunks = chunk_document(document, chunking)
            rows = [tuple(_plain(value) for value in dataclasses.astuple(chunk)) for chunk in chunks]
            names = [f.name for f in dataclasses.fields(chunks[0])] if chunks else []
            result["chunks"][chunking.describe()] = ("ok", names, rows)
        except ChunkLimitExceeded as exc:
            result["chunks"][chunking.describe()] = ("refused", str(exc))
        except Exception as exc:  # noqa: BLE001
            result["chunks"][chunking.describe()] = _error(exc)
    return result


def _plain(value: Any) -> Any:
    """A chunk field as compared: texts longer than a line by their hash and their start."""
    if isinstance(value, str) and len(value) > 120:
        return f"{value[:60]!r}… sha256 {hashlib.sha256(value.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
    return value


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, description) of every way one file's two results differ."""
    found: list[tuple[str, str]] = []
    if old["read_metadata"] != new["read_metadata"]:
        found.append(("metadata", f"read_metadata {old['read_metadata']!r} -> {new['read_metadata']!r}"[:600]))
    if old["outcome"] != new["outcome"]:
        return [*found, ("outcome", f"{old['outcome']!r} -> {new['outcome']!r}"[:600])]
    if old["outcome"][0] != "parsed":
        return found
    found += text_and_block_differences(
        old["text"], new["text"], old["page_starts"], new["page_starts"], old["blocks"], new["blocks"]
    )
    if old["fields"] != new["fields"]:
        found.append(("metadata", f"fields {old['fields']!r} -> {new['fields']!r}"[:600]))
    if old["meta"] != new["meta"]:
        found.append(("metadata", f"resolved {old['meta']!r} -> {new['meta']!r}"[:600]))
    if old["terms"] != new["terms"]:
        found.append(("terms", f"{old['terms']!r} -> {new['terms']!r}"[:600]))
    for chunker in sorted(set(old["chunks"]) | set(new["chunks"])):
        old_chunks, new_chunks = old["chunks"].get(chunker), new["chunks"].get(chunker)
        if old_chunks == new_chunks:
            continue
        if old_chunks is None or new_chunks is None or old_chunks[0] != "ok" or new_chunks[0] != "ok":
            found.append(("chunks", f"{chunker}: {str(old_chunks)[:200]} -> {str(new_chunks)[:200]}"))
            continue
        names = old_chunks[1] or new_chunks[1]
        old_rows, new_rows = old_chunks[2], new_chunks[2]
        first = next((i for i, (a, b) in enumerate(zip(old_rows, new_rows, strict=False)) if a != b), None)
        if first is None:
            found.append(("chunks", f"{chunker}: {len(old_rows)} -> {len(new_rows)} chunks"))
            continue
        fields = [
            f"{n}: {a!r} -> {b!r}" for n, a, b in zip(names, old_rows[first], new_rows[first], strict=True) if a != b
        ]
        found.append(
            ("chunks", f"{chunker}: {len(old_rows)} -> {len(new_rows)} chunks; #{first}: {'; '.join(fields)}"[:600])
        )
    return found


def main() -> None:
    args = arguments(__doc__.split("\n")[0], "file")
    if dumped(args, dump):
        return
    sys.path.insert(0, str(ROOT))
    from ingest.parse import format_of

    folders = args.folders or DEFAULT_FOLDERS
    paths = sorted(
        p.resolve()
        for folder in folders
        for p in folder.rglob("*")
        if p.is_file() and format_of(p.name) in ("html", "markdown", "text")
    )
    paths = paths[:: args.every]
    result = compare(__file__, args, paths, differences)
    old = result.old
    parsed = sum(old[str(path)]["outcome"][0] == "parsed" for path in paths)
    chunks = sum(
        len(made[2]) for path in paths for made in old[str(path)].get("chunks", {}).values() if made[0] == "ok"
    )
    by_format = Counter(format_of(path.name) for path in paths)
    formats = ", ".join(f"{n} {fmt}" for fmt, n in sorted(by_format.items()))
    print(
        f"old code {result.ref[:12]}, {len(paths)} files ({formats}; {parsed} parsed by the old code, {chunks} chunks)"
    )
    print(f"{result.differing} files differ")
    for kind in KINDS:
        print(f"  {kind}: {result.kinds[kind]} files")
    sys.exit(1 if result.differing else 0)


if __name__ == "__main__":
    main()
