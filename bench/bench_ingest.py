"""Throughput and memory of ingest's stages on the sample corpus replicated to ~N documents.

Run by hand (not by the tests):

    .venv/bin/python bench/bench_ingest.py                    # 5,000 documents, SQLite
    .venv/bin/python bench/bench_ingest.py --docs 1000 --store http://127.0.0.1:9200

Stages: scan (read + parse + validate), chunk, write (the store's own path), then the
same run again (incremental: nothing changed), each against a baseline measured in the
same run: raw inserts of the same chunk records (SQLite executemany into the same
schema, or Elasticsearch streaming_bulk of the same dicts).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest import pipeline  # noqa: E402
from ingest.chunk import chunk_document  # noqa: E402
from ingest.corpus import scan_corpus  # noqa: E402
from ingest.settings import load_settings  # noqa: E402
from ingest.store import open_store  # noqa: E402


def replicate(src: Path, dest: Path, copies: int) -> None:
    """Copies of the corpus under new doc_ids (copy N: `<doc_id>-cN`), so all stay valid."""
    from pypdf import PdfReader, PdfWriter

    scan = scan_corpus(src, load_settings(src))
    ids = sorted({d.meta.doc_id for d in scan.documents}, key=len, reverse=True)
    pattern = re.compile(r"(?<![a-z0-9._-])(" + "|".join(map(re.escape, ids)) + r")(?=[@\"'\s;,]|$)", re.M)
    (dest / "documents").mkdir(parents=True)
    for name in ("ingest.toml",):
        if (src / name).exists():
            shutil.copy(src / name, dest / name)
    inventory = {}
    if (src / "inventory.yaml").exists():
        import yaml

        inventory = yaml.safe_load((src / "inventory.yaml").read_text()) or {}
    new_inventory = {}
    for n in range(copies):
        rename = lambda m: f"{m.group(1)}-c{n}"  # noqa: E731
        for path in sorted((src / "documents").rglob("*")):
            if not path.is_file():
                continue
            rel = path.relative_to(src / "documents")
            out = dest / "documents" / f"c{n}" / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix.lower() == ".pdf":
                reader = PdfReader(path)
                writer = PdfWriter(clone_from=reader)
                info = {k: pattern.sub(rename, str(v)) for k, v in (reader.metadata or {}).items() if k in ("/Keywords", "/doc_id", "/superseded_by")}
                writer.add_metadata(info)
                with out.open("wb") as fh:
                    writer.write(fh)
            else:
                text = path.read_text(encoding="utf-8")
                head, sep, rest = text.partition("\n---\n", ) if text.startswith("---") else ("", "", text)
                if path.suffix.lower() in (".html", ".htm"):
                    text = re.sub(r'(<meta\s+name="(?:doc_id|superseded_by)"\s+content=")([^"]*)"', lambda m: m.group(1) + pattern.sub(rename, m.group(2)) + '"', text)
                elif sep:
                    text = pattern.sub(rename, head) + sep + rest
                out.write_text(text, encoding="utf-8")
        for rel, fields in inventory.items():
            fields = dict(fields or {})
            for key in ("doc_id", "superseded_by"):
                if key in fields:
                    fields[key] = pattern.sub(rename, str(fields[key]))
            new_inventory[f"c{n}/{rel}"] = fields
    if new_inventory:
        import yaml

        (dest / "inventory.yaml").write_text(yaml.safe_dump(new_inventory, sort_keys=True))


def _reset_peak_rss() -> None:
    """Linux: writing 5 to clear_refs resets VmHWM, so each stage reports its own peak."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _peak_rss_mib() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(label: str, fn, *, units: dict[str, float]):
    """Wall time and peak resident memory of one stage (no tracing: it would slow the stage)."""
    _reset_peak_rss()
    started = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - started
    rates = "  ".join(f"{v / elapsed:>9,.1f} {k}/s" for k, v in units.items() if v)
    print(f"{label:<34} {elapsed:>8.2f} s  {rates}  peak RSS {_peak_rss_mib():,.0f} MiB")
    return value, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpus")
    parser.add_argument("--docs", type=int, default=5000, help="about how many documents")
    parser.add_argument("--store", default=None, help="http://host:9200 to bench Elasticsearch (default: a temp SQLite file)")
    parser.add_argument("--keep", action="store_true", help="keep the replicated corpus")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="ingest-bench-"))
    base = scan_corpus(args.corpus, load_settings(args.corpus))
    copies = max(1, round(args.docs / max(1, base.seen)))
    corpus = work / "corpus"
    t = time.perf_counter()
    replicate(args.corpus, corpus, copies)
    print(f"replicated {base.seen} documents x {copies} in {time.perf_counter() - t:.1f}s -> {corpus}")
    settings = load_settings(corpus)
    size_mb = sum(p.stat().st_size for p in (corpus / "documents").rglob("*") if p.is_file()) / 1e6

    scan, t_scan = measure("scan (read+parse+validate)", lambda: scan_corpus(corpus, settings), units={"docs": copies * base.seen, "MB": size_mb})
    assert not scan.rejected, scan.rejected[:3]
    docs = len(scan.documents)
    chunks, t_chunk = measure("chunk", lambda: [c for d in scan.documents for c in chunk_document(d, settings.chunking)], units={"docs": docs})
    n_chunks = len(chunks)
    text_mb = sum(len(c.text.encode()) for c in chunks) / 1e6
    print(f"{'':<34} {n_chunks:,} chunks ({n_chunks / t_chunk:,.0f} chunks/s), {text_mb:.1f} MB of chunk text")

    url = args.store or f"sqlite:///{work / 'bench.sqlite'}"
    prefix = f"bench-{int(time.time())}"
    store = open_store(url, prefix, settings=settings)
    first, t_first = measure("ingest run (first, full write)", lambda: pipeline.run(corpus, store, settings, settings.chunking), units={"docs": docs, "chunks": n_chunks, "MB": size_mb})
    second, t_second = measure("ingest run (again, unchanged)", lambda: pipeline.run(corpus, store, settings, settings.chunking), units={"docs": docs})
    assert second.written == 0 and second.deleted == 0
    print(f"{'':<34} second run / first run = {t_second / t_first:.2f}  (written {second.written}, deleted {second.deleted})")

    # Baseline: the same chunk records written with no ingest logic in between.
    records = [c.to_json() for c in chunks]
    if url.startswith("sqlite:///"):
        from ingest.store.sqlite import CHUNK_COLUMNS, JSON_COLUMNS, SCHEMA
        import sqlite3

        def raw_sqlite():
            conn = sqlite3.connect(work / "baseline.sqlite", isolation_level=None)
            conn.executescript(SCHEMA)
            conn.execute("BEGIN")
            cols = ", ".join(f'"{c}"' for c in CHUNK_COLUMNS)
            conn.executemany(
                f"INSERT INTO chunks ({cols}) VALUES ({', '.join('?' * len(CHUNK_COLUMNS))})",
                [tuple(json.dumps(r[c]) if c in JSON_COLUMNS else r[c] for c in CHUNK_COLUMNS) for r in records],
            )
            conn.commit()
            conn.close()

        _, t_base = measure("baseline: raw SQLite executemany", raw_sqlite, units={"chunks": n_chunks})
    else:
        from elasticsearch import Elasticsearch, helpers

        es = Elasticsearch(url)
        index = f"{prefix}-baseline"
        mapping = json.loads((ROOT / "mappings" / "chunks.json").read_text())
        es.indices.create(index=index, **mapping)

        def raw_bulk():
            for ok, item in helpers.streaming_bulk(es, ({"_index": index, "_id": r["chunk_id"], "_source": r} for r in records), chunk_size=1000, max_chunk_bytes=5 * 2**20):
                assert ok, item
            es.indices.refresh(index=index)

        _, t_base = measure("baseline: raw streaming_bulk", raw_bulk, units={"chunks": n_chunks})
        es.indices.delete(index=index)
    print(f"{'':<34} ingest run (first) / baseline write = {t_first / t_base:.1f}x  (the run also scans, parses, chunks, plans)")
    store.close()
    if not url.startswith("sqlite:///"):
        from elasticsearch import Elasticsearch

        es = Elasticsearch(url)
        names = list(es.indices.get(index=f"{prefix}-*", expand_wildcards="all"))
        if names:
            es.indices.delete(index=",".join(names))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
