"""Shared by the competitor runners (executed by the competitor venv's interpreter, not ingest's).

Each runner indexes one corpus folder's documents/ into one Elasticsearch index, BM25 only (no
embeddings), with its framework's documented lightweight loaders and a splitter of about ingest's
chunk size (200 words ~ 1,200 characters ~ 256 tokens), and prints one JSON line of what it did.
The same files ingest reads: documents/**/*.{md,markdown,html,htm,txt,pdf}, hidden names skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html", ".txt": "text", ".pdf": "pdf"}
CHUNK_CHARS = 1200  # ~200 words, ingest's default `chunking.size`
CHUNK_WORDS = 200
CHUNK_TOKENS = 256


def corpus_files(root: Path) -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(root / "documents"):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith(".") and Path(name).suffix.lower() in SUFFIXES:
                found.append(Path(folder) / name)
    return found


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--index", required=True, help="Elasticsearch index name (lower case)")
    parser.add_argument(
        "--state", type=Path, required=True, help="folder for the tool's own state (record manager, docstore)"
    )
    return parser.parse_args()


def report(tool: str, started: float, **fields) -> None:
    fields = {"tool": tool, "seconds_in_process": round(time.perf_counter() - started, 3), **fields}
    print(json.dumps(fields), flush=True)


def failed_loads(errors: list[str]) -> dict:
    if errors:
        print(f"{len(errors)} files failed to load, e.g. {errors[:3]}", file=sys.stderr)
    return {"load_failures": len(errors)}
