"""ingest's stages side by side with their ceilings, measured in one run.

Run by hand (not by the tests; 2 shared cores: read the ratios, not the absolute figures):

    .venv/bin/python bench/bench_ingest.py --sample 30 --real all --store http://127.0.0.1:9200
    .venv/bin/python bench/bench_ingest.py --corpus /work/realcorpus/postgres-html --json

Per corpus and stage — list + hash, read + parse per format, validate, chunk, write — documents/s,
MB/s, chunks/s, CPU (user + system, worker processes included) and peak RSS, next to the ceiling
measured in the same run on the same files:

  list + hash     walking documents/ and SHA-256 of every byte (the ceiling of any no-op run)
  parse  pdf      pypdfium2 raw page text          html  lxml tree build
         markdown markdown-it tokens               text  plain UTF-8 decode
  validate        scan_corpus with every body skipped (metadata only) vs list + hash
  chunk           chunk_document over every document (no ceiling: reported as chunks/s)
  write           store.write_chunks of the chunks vs raw streaming_bulk (Elasticsearch) or
                  executemany (SQLite) of the same chunk records
  efficiency      ceiling time / our time (1.0 = at the ceiling)

Then whole runs of the CLI in a subprocess (`ingest run`: first build, unchanged re-run, re-run
with 1 % of the files changed), the no-op ceiling (`ingest --version` + list + hash) and the
unchanged re-run as a multiple of it, and the CLI's import / start-up time. Parsing is measured in
this one process (one core); `ingest run` and validate use the library's worker processes.
`--runs-only --repeat N` measures only those whole runs (first build once; unchanged and 1 %
changed N times each, medians) with the no-op ceiling measured N times in the same run, on every
`--store` given (repeatable: SQLite and Elasticsearch side by side). The 1 % run is set against
2 x the no-op ceiling plus what its files cost alone (a corpus of only those files, built, then its
run with the same edits less that corpus's own no-op ceiling): `changed_less_files_over_noop` <= 2 meets it.

    .venv/bin/python bench/bench_ingest.py --runs-only --repeat 5 --sample 150 --real postgres-html \
        --store sqlite --store http://127.0.0.1:9200 --no-startup

Only public functions are used (scan_corpus, chunk_document, parse_bytes, pipeline.run via the
CLI, open_store), so the bench keeps working while their insides change.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _measure import INGEST, Measured, measure, python, run_child  # noqa: E402

from ingest.chunk import chunk_document  # noqa: E402
from ingest.corpus import scan_corpus  # noqa: E402
from ingest.parse import format_of, parse_bytes  # noqa: E402
from ingest.settings import load_settings  # noqa: E402
from ingest.store import open_store  # noqa: E402

REAL = Path("/work/realcorpus")
INGEST_CMD = [str(INGEST)]  # --ingest: another build's command, e.g. to bench the code before a change
REAL_NAMES = ("postgres-html", "python-html", "texlive-pdf", "markdown", "text")


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


# --- files, hashing and the parse ceilings ----------------------------------------------------
def corpus_files(root: Path) -> list[tuple[Path, str, int]]:
    """(path, format, bytes) of every document file, hidden names skipped as the library does."""
    found = []
    base = root / "documents"
    for folder, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = Path(folder) / name
            fmt = format_of(name)
            if fmt is not None:
                found.append((path, fmt, path.stat().st_size))
    return found


def list_and_hash(root: Path) -> dict[str, str]:
    """The no-op floor: walk documents/ and SHA-256 every byte."""
    out = {}
    for folder, dirs, names in os.walk(root / "documents"):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if not name.startswith("."):
                path = Path(folder) / name
                out[str(path)] = hashlib.file_digest(path.open("rb"), "sha256").hexdigest()
    return out


def _ceiling_pdf(data: bytes) -> int:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        n = 0
        for page in pdf:
            textpage = page.get_textpage()
            n += len(textpage.get_text_range())
            textpage.close()
            page.close()
        return n
    finally:
        pdf.close()


def _ceiling_html(data: bytes) -> int:
    import lxml.html

    return len(lxml.html.document_fromstring(data))


_MD = None


def _ceiling_markdown(data: bytes) -> int:
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark", {"maxNesting": 10_000}).enable("table")  # as ingest configures it
    return len(_MD.parse(data.decode("utf-8")))


def _ceiling_text(data: bytes) -> int:
    return len(data.decode("utf-8"))


CEILINGS = {
    "pdf": ("pypdfium2 page text", _ceiling_pdf),
    "html": ("lxml tree build", _ceiling_html),
    "markdown": ("markdown-it tokens", _ceiling_markdown),
    "text": ("utf-8 decode", _ceiling_text),
}


# --- rows ----------------------------------------------------------------------------------------
def row(corpus: str, stage: str, m: Measured, *, docs: int = 0, mb: float = 0.0, chunks: int = 0,
        ceiling: Measured | None = None, ceiling_name: str = "", note: str = "") -> dict:
    wall = max(m.wall_s, 1e-9)
    out = {
        "corpus": corpus, "stage": stage, "wall_s": round(m.wall_s, 3), "cpu_s": round(m.cpu_s, 3),
        "peak_rss_mib": round(m.peak_rss_mib, 1), "docs": docs, "mb": round(mb, 2), "chunks": chunks,
        "docs_per_s": round(docs / wall, 1) if docs else None,
        "mb_per_s": round(mb / wall, 2) if mb else None,
        "chunks_per_s": round(chunks / wall, 1) if chunks else None,
        "ceiling": ceiling_name or None,
        "ceiling_s": round(ceiling.wall_s, 3) if ceiling else None,
        "efficiency": round(ceiling.wall_s / wall, 2) if ceiling else None,
        "ceiling_cpu_s": round(ceiling.cpu_s, 3) if ceiling else None,
        # On a shared machine wall time includes waiting for a core: CPU time is the steadier ratio.
        "cpu_efficiency": round(ceiling.cpu_s / m.cpu_s, 2) if ceiling and ceiling.cpu_s and m.cpu_s > 0 else None,
        "note": note or None,
    }
    if m.tree_rss_mib:
        out["tree_rss_mib"] = round(m.tree_rss_mib, 1)
    return out


def print_table(rows: list[dict], file=None) -> None:
    head = f"{'corpus':<16} {'stage':<30} {'wall s':>8} {'CPU s':>7} {'RSS MiB':>8} {'docs/s':>9} {'MB/s':>7} {'chunks/s':>9} {'ceiling s':>9} {'eff.':>5} {'CPU eff.':>8}  ceiling / note"
    print(head, file=file)
    print("-" * len(head), file=file)
    fmt = lambda v, spec: "" if v is None else format(v, spec)  # noqa: E731
    for r in rows:
        tail = " / ".join(x for x in (r["ceiling"], r["note"]) if x)
        print(f"{r['corpus']:<16} {r['stage']:<30} {r['wall_s']:>8.2f} {r['cpu_s']:>7.2f} {r['peak_rss_mib']:>8.0f} "
              f"{fmt(r['docs_per_s'], ',.0f'):>9} {fmt(r['mb_per_s'], '.2f'):>7} {fmt(r['chunks_per_s'], ',.0f'):>9} "
              f"{fmt(r['ceiling_s'], '.2f'):>9} {fmt(r['efficiency'], '.2f'):>5} {fmt(r['cpu_efficiency'], '.2f'):>8}  {tail}", file=file)


# --- 1 % changed ------------------------------------------------------------------------------
def one_percent(root: Path) -> list[tuple[Path, str, int]]:
    """Every 100th file of the corpus (at least one): the files the 1 % runs edit."""
    files = corpus_files(root)
    return files[:: 100] or files[:1]


def change_one_percent(root: Path) -> int:
    """Edit every 100th file (at least one) so its bytes and text change; returns how many."""
    return edit_files(one_percent(root))


def edit_files(picked: list[tuple[Path, str, int]]) -> int:
    """Edit each file so that its bytes and text change; returns how many."""
    for path, fmt, _ in picked:
        if fmt == "pdf":
            from pypdf import PdfReader, PdfWriter

            writer = PdfWriter(clone_from=PdfReader(path))
            page = writer.pages[-1]
            writer.add_metadata({"/Subject": "bench edit"})  # bytes change; text is re-read
            del page
            with path.open("wb") as fh:
                writer.write(fh)
        elif fmt == "html":
            text = path.read_text(encoding="utf-8")
            edit = "<p>Bench edit: one more paragraph.</p>"
            text = text.replace("</body>", edit + "</body>", 1) if "</body>" in text else text + edit
            path.write_text(text, encoding="utf-8")
        else:
            with path.open("a", encoding="utf-8") as fh:
                fh.write("\n\nBench edit: one more paragraph.\n")
    return len(picked)


def subset_corpus(src: Path, dest: Path, files: list[tuple[Path, str, int]]) -> None:
    """A corpus of only ``files`` (paths under ``src/documents``), at the same paths, with their
    inventory entries and ingest.toml: the files a 1 % run edits, to measure what they cost alone."""
    rels = [path.relative_to(src / "documents").as_posix() for path, _, _ in files]
    for rel in rels:
        (dest / "documents" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / "documents" / rel, dest / "documents" / rel)
    if (src / "ingest.toml").exists():
        shutil.copy(src / "ingest.toml", dest / "ingest.toml")
    if (src / "inventory.yaml").exists():
        import yaml

        inventory = yaml.safe_load((src / "inventory.yaml").read_text()) or {}
        kept = {rel: fields for rel, fields in inventory.items() if rel in rels}
        if kept:
            (dest / "inventory.yaml").write_text(yaml.safe_dump(kept, sort_keys=True))


def those_files_cost(root: Path, url_template: str, work: Path, prefix: str, repeat: int,
                     version: Measured) -> Measured:
    """What the 1 % runs' files cost a run by themselves: a corpus of only those files (as they are
    before the first edit) is built once; then, ``repeat`` times, the same edits and its run with
    ``--accept-edits``; the median less that corpus's own no-op ceiling (``version``: `ingest --version`,
    plus listing and hashing its files). What a run pays once anything changed (the store's client, the
    parsers' imports, a parser process) is part of their cost. A file of the subset whose
    ``superseded_by`` names a document left out is rejected there, not written: the cost is then, if
    anything, underestimated."""
    subset = work / f"{prefix}-subset"
    subset_corpus(root, subset, one_percent(root))
    url = url_template.format(work=work, name=f"{prefix}-sub")
    argv = [*INGEST_CMD, "run", str(subset), "--store", url, "--index-prefix", f"{prefix}-sub", "--json"]
    try:
        run_child(argv, ok_codes=(0, 1))
        changed = []
        for _ in range(repeat):
            edit_files(corpus_files(subset))  # every file of the subset: the same edit as in the corpus
            changed.append(run_child(argv + ["--accept-edits"], ok_codes=(0, 1))[0])
        hashed = [measure(lambda: list_and_hash(subset)) for _ in range(repeat)]
    finally:
        drop_prefix(url, f"{prefix}-sub")
        shutil.rmtree(subset, ignore_errors=True)
    floor_wall = version.wall_s + statistics.median(h.wall_s for h in hashed)
    floor_cpu = version.cpu_s + statistics.median(h.cpu_s for h in hashed)
    wall = statistics.median(c.wall_s for c in changed) - floor_wall
    cpu = statistics.median(c.cpu_s for c in changed) - floor_cpu
    return Measured(max(wall, 0.0), max(cpu, 0.0), 0)


# --- the write ceiling ---------------------------------------------------------------------------
def raw_write(url: str, records: list[dict], work: Path, prefix: str) -> Measured:
    if url.startswith("sqlite:///"):
        import sqlite3

        def raw_sqlite():
            conn = sqlite3.connect(work / "baseline.sqlite", isolation_level=None)
            try:  # the store's own schema when it still exports it; else a plain JSON table
                from ingest.store.sqlite import CHUNK_COLUMNS, JSON_COLUMNS, LANGUAGE_TOKENIZERS, SCHEMA

                conn.executescript(SCHEMA.replace("@TOKENIZE@", LANGUAGE_TOKENIZERS["english"]))
                cols = ", ".join(f'"{c}"' for c in CHUNK_COLUMNS)
                sql = f"INSERT INTO chunks ({cols}) VALUES ({', '.join('?' * len(CHUNK_COLUMNS))})"
                rows = (tuple(json.dumps(r[c]) if c in JSON_COLUMNS else r[c] for c in CHUNK_COLUMNS) for r in records)
            except (ImportError, KeyError):
                conn.execute("CREATE TABLE chunks (chunk_id TEXT PRIMARY KEY, body TEXT)")
                sql = "INSERT INTO chunks VALUES (?, ?)"
                rows = ((r["chunk_id"], json.dumps(r)) for r in records)
            conn.execute("BEGIN")
            conn.executemany(sql, rows)
            conn.commit()
            conn.close()

        return measure(raw_sqlite)
    from elasticsearch import Elasticsearch, helpers

    es = Elasticsearch(url, request_timeout=120)
    index = f"{prefix}-rawceiling"
    mapping = json.loads((ROOT / "mappings" / "chunks.json").read_text())
    es.indices.create(index=index, **mapping)
    fields = set(mapping.get("mappings", {}).get("properties", {}))

    def raw_bulk():
        source = ({k: v for k, v in r.items() if not fields or k in fields} for r in records)
        for ok, item in helpers.streaming_bulk(es, ({"_index": index, "_id": r["chunk_id"], "_source": r} for r in source),
                                               chunk_size=500, max_chunk_bytes=5 * 2**20, raise_on_error=False):
            assert ok, item
        es.indices.refresh(index=index)

    try:
        return measure(raw_bulk)
    finally:
        es.indices.delete(index=index)
        es.close()


def drop_prefix(url: str, prefix: str) -> None:
    if url.startswith("sqlite:///"):
        return
    from elasticsearch import Elasticsearch

    es = Elasticsearch(url, request_timeout=60)
    names = list(es.indices.get(index=f"{prefix}-*", expand_wildcards="all"))
    if names:
        es.indices.delete(index=",".join(names))
    es.close()


# --- one corpus -----------------------------------------------------------------------------------
def bench_corpus(name: str, root: Path, url_template: str, work: Path, summary: dict, rows: list[dict]) -> None:
    """Appends its rows to ``rows`` as it goes, so a failure late in a corpus keeps what was measured."""
    settings = load_settings(root)
    files = corpus_files(root)
    n_docs = len(files)
    total_mb = sum(size for _, _, size in files) / 1e6
    print(f"\n== {name}: {n_docs:,} files, {total_mb:.1f} MB ({root})", file=sys.stderr)

    hashed = measure(lambda: list_and_hash(root))
    rows.append(row(name, "list + hash", hashed, docs=n_docs, mb=total_mb, ceiling=hashed, ceiling_name="(its own ceiling)"))

    # read + parse per format, one core, against the raw library on the same bytes
    for fmt in ("pdf", "html", "markdown", "text"):
        these = [(p, s) for p, f, s in files if f == fmt]
        if not these:
            continue
        mb = sum(s for _, s in these) / 1e6
        label, ceiling_fn = CEILINGS[fmt]

        def ours(these=these):
            failed = 0
            for path, _ in these:
                try:
                    parse_bytes(path.read_bytes(), path.name)
                except Exception:  # noqa: BLE001 - a refused file still cost its parse
                    failed += 1
            return failed

        def ceiling(these=these, fn=ceiling_fn):
            for path, _ in these:
                try:
                    fn(path.read_bytes())
                except Exception:  # noqa: BLE001
                    pass

        c = measure(ceiling)
        m = measure(ours)
        rows.append(row(name, f"read + parse {fmt}", m, docs=len(these), mb=mb, ceiling=c, ceiling_name=label,
                        note=f"{m.value} refused" if m.value else ""))

    every_hash = set(hashed.value.values())
    validated = measure(lambda: scan_corpus(root, settings, skip_body=every_hash))
    rows.append(row(name, "validate (metadata only)", validated, docs=n_docs, mb=total_mb, ceiling=hashed, ceiling_name="list + hash"))

    scanned = measure(lambda: scan_corpus(root, settings))
    scan = scanned.value
    rows.append(row(name, "scan: read+parse+validate", scanned, docs=n_docs, mb=total_mb,
                    note=f"library workers; {len(scan.rejected)} rejected"))

    chunked = measure(lambda: [c for d in scan.documents for c in chunk_document(d, settings.chunking)])
    chunks = chunked.value
    rows.append(row(name, "chunk", chunked, docs=len(scan.documents), chunks=len(chunks)))

    prefix = f"bench-{re.sub(r'[^a-z0-9]', '', name.lower())[:20]}-{os.getpid()}"
    url = url_template.format(work=work, name=prefix)
    chunk_mb = sum(len(c.text.encode()) for c in chunks) / 1e6
    records = [c.to_json() for c in chunks]
    raw = raw_write(url, records, work, prefix)
    write_url = url if not url.startswith("sqlite:///") else f"sqlite:///{work / (prefix + '-write.sqlite')}"
    store = open_store(write_url, f"{prefix}-w", settings=settings)
    try:
        def write():
            report = store.write_chunks(iter(chunks))
            refresh = getattr(store, "refresh", None)  # Elasticsearch only: SQLite's writes are visible once committed
            if refresh is not None:
                refresh()
            return report

        wrote = measure(write)
    finally:
        store.close()
        drop_prefix(url, f"{prefix}-w")
    rows.append(row(name, "write (store.write_chunks)", wrote, chunks=len(chunks), mb=chunk_mb, ceiling=raw,
                    ceiling_name="raw streaming_bulk" if url.startswith("http") else "raw executemany"))
    del records

    # whole runs through the CLI, on a private copy (the 1 % edit must not touch the source corpus)
    copy = work / f"{prefix}-corpus"
    shutil.copytree(root, copy)
    argv = [str(INGEST), "run", str(copy), "--store", url, "--index-prefix", prefix, "--json"]
    # exit 1: some documents were refused (the scan row says how many), the rest went in: a complete run.
    first, _ = run_child(argv, sample_tree=True, ok_codes=(0, 1))
    stage_ceiling = hashed.wall_s + sum(r["ceiling_s"] for r in rows if r["corpus"] == name and r["stage"].startswith("read + parse")) + raw.wall_s
    stage_ceiling_cpu = hashed.cpu_s + sum(r["ceiling_cpu_s"] for r in rows if r["corpus"] == name and r["stage"].startswith("read + parse")) + raw.cpu_s
    slowest = max([hashed.wall_s, raw.wall_s] + [r["ceiling_s"] for r in rows if r["corpus"] == name and r["stage"].startswith("read + parse")])
    rows.append(row(name, "ingest run (first build)", first, docs=n_docs, mb=total_mb, chunks=len(chunks),
                    ceiling=Measured(stage_ceiling, stage_ceiling_cpu, 0), ceiling_name="sum of stage ceilings",
                    note=f"slowest ceiling {slowest:.2f} s -> {first.wall_s / max(slowest, 1e-9):.1f}x it; tree RSS {first.tree_rss_mib:,.0f} MiB"))
    again, _ = run_child(argv, sample_tree=True, ok_codes=(0, 1))
    versions = [run_child([str(INGEST), "--version"])[0] for _ in range(3)]
    startup = [m.wall_s for m in versions]
    noop = statistics.median(startup) + hashed.wall_s
    noop_cpu = statistics.median(m.cpu_s for m in versions) + hashed.cpu_s
    rows.append(row(name, "ingest run (unchanged)", again, docs=n_docs, mb=total_mb,
                    ceiling=Measured(noop, noop_cpu, 0), ceiling_name="no-op: --version + list + hash",
                    note=f"{again.wall_s / first.wall_s:.2f} of first; {again.wall_s / noop:.1f}x no-op ceiling"))
    changed_n = change_one_percent(copy)
    changed, _ = run_child(argv + ["--accept-edits"], sample_tree=True, ok_codes=(0, 1))
    rows.append(row(name, f"ingest run (1 % = {changed_n} changed)", changed, docs=n_docs, mb=total_mb,
                    ceiling=Measured(noop, noop_cpu, 0), ceiling_name="no-op: --version + list + hash",
                    note=f"{changed.wall_s / first.wall_s:.2f} of first"))
    summary[name] = {
        "files": n_docs, "mb": round(total_mb, 2), "chunks": len(chunks),
        "first_s": round(first.wall_s, 3), "unchanged_s": round(again.wall_s, 3), "changed_1pct_s": round(changed.wall_s, 3),
        "unchanged_over_first": round(again.wall_s / first.wall_s, 3),
        "changed_over_first": round(changed.wall_s / first.wall_s, 3),
        "noop_ceiling_s": round(noop, 3), "cli_version_s": round(statistics.median(startup), 3),
        "unchanged_over_noop": round(again.wall_s / noop, 2),
        "noop_ceiling_cpu_s": round(noop_cpu, 3), "unchanged_cpu_s": round(again.cpu_s, 3), "first_cpu_s": round(first.cpu_s, 3),
        "unchanged_over_noop_cpu": round(again.cpu_s / max(noop_cpu, 1e-9), 2),
        "first_over_slowest_ceiling": round(first.wall_s / max(slowest, 1e-9), 2),
        "first_over_sum_of_ceilings": round(first.wall_s / max(stage_ceiling, 1e-9), 2),
        "first_cpu_over_sum_of_ceiling_cpu": round(first.cpu_s / max(stage_ceiling_cpu, 1e-9), 2),
    }
    drop_prefix(url, prefix)
    shutil.rmtree(copy, ignore_errors=True)


def bench_runs(name: str, root: Path, url_template: str, work: Path, summary: dict, rows: list[dict],
               repeat: int) -> None:
    """Whole CLI runs only (no stage rows): first build, then ``repeat`` unchanged re-runs and
    ``repeat`` re-runs with 1 % of the files edited, each next to the no-op ceiling measured as
    many times in the same run (`ingest --version` + list + hash); medians."""
    kind = "sqlite" if url_template.startswith("sqlite:") else "elasticsearch"
    label = f"{name} [{kind}]"
    files = corpus_files(root)
    n_docs, total_mb = len(files), sum(size for _, _, size in files) / 1e6
    prefix = f"bench-{re.sub(r'[^a-z0-9]', '', name.lower())[:20]}-{os.getpid()}-{kind[:2]}"
    url = url_template.format(work=work, name=prefix)
    copy = work / f"{prefix}-corpus"
    shutil.copytree(root, copy)
    print(f"\n== {label}: {n_docs:,} files, {total_mb:.1f} MB ({root})", file=sys.stderr)
    argv = [*INGEST_CMD, "run", str(copy), "--store", url, "--index-prefix", prefix, "--json"]
    try:
        first, _ = run_child(argv, ok_codes=(0, 1))
        rows.append(row(label, "ingest run (first build)", first, docs=n_docs, mb=total_mb))
        list_and_hash(copy)  # the page cache warm for the ceiling as for the runs

        def med(ms: list[Measured]) -> Measured:
            return Measured(statistics.median(m.wall_s for m in ms), statistics.median(m.cpu_s for m in ms),
                            max(m.peak_rss_mib for m in ms))

        hashed = med([measure(lambda: list_and_hash(copy)) for _ in range(repeat)])
        version = med([run_child([*INGEST_CMD, "--version"])[0] for _ in range(repeat)])
        noop = Measured(version.wall_s + hashed.wall_s, version.cpu_s + hashed.cpu_s, 0)
        rows.append(row(label, "no-op ceiling", noop, docs=n_docs, mb=total_mb,
                        note=f"--version {version.wall_s:.2f} s / {version.cpu_s:.2f} CPU-s + list+hash "
                             f"{hashed.wall_s:.2f} s / {hashed.cpu_s:.2f} CPU-s"))
        again = med([run_child(argv, ok_codes=(0, 1))[0] for _ in range(repeat)])
        rows.append(row(label, f"ingest run (unchanged, median of {repeat})", again, docs=n_docs, mb=total_mb,
                        ceiling=noop, ceiling_name="no-op: --version + list + hash",
                        note=f"{again.wall_s / noop.wall_s:.2f}x no-op wall, {again.cpu_s / max(noop.cpu_s, 1e-9):.2f}x CPU"))
        changed_runs = []
        changed_n = 0
        for _ in range(repeat):
            changed_n = change_one_percent(copy)
            changed_runs.append(run_child(argv + ["--accept-edits"], ok_codes=(0, 1))[0])
        changed = med(changed_runs)
        # The 1 % target (issue 11): within 2x the no-op ceiling plus what those files cost by themselves.
        cost = those_files_cost(root, url_template, work, prefix, repeat, version)
        target = Measured(2 * noop.wall_s + cost.wall_s, 2 * noop.cpu_s + cost.cpu_s, 0)
        rows.append(row(label, f"those {changed_n} files alone (median of {repeat})", cost,
                        note="a corpus of only those files: its run with the edits less its no-op ceiling"))
        rows.append(row(label, f"ingest run (1 % = {changed_n} changed, median of {repeat})", changed, docs=n_docs,
                        mb=total_mb, ceiling=target, ceiling_name="2 x no-op ceiling + those files alone",
                        note=f"{changed.wall_s - again.wall_s:+.2f} s wall over unchanged; (1 % - those files) = "
                             f"{(changed.wall_s - cost.wall_s) / noop.wall_s:.2f}x no-op wall, "
                             f"{(changed.cpu_s - cost.cpu_s) / max(noop.cpu_s, 1e-9):.2f}x CPU"))
        summary[label] = {
            "files": n_docs, "mb": round(total_mb, 2), "first_s": round(first.wall_s, 3),
            "noop_ceiling_s": round(noop.wall_s, 3), "noop_ceiling_cpu_s": round(noop.cpu_s, 3),
            "cli_version_s": round(version.wall_s, 3), "cli_version_cpu_s": round(version.cpu_s, 3),
            "hash_s": round(hashed.wall_s, 3), "hash_cpu_s": round(hashed.cpu_s, 3),
            "unchanged_s": round(again.wall_s, 3), "unchanged_cpu_s": round(again.cpu_s, 3),
            "unchanged_over_noop": round(again.wall_s / noop.wall_s, 2),
            "unchanged_over_noop_cpu": round(again.cpu_s / max(noop.cpu_s, 1e-9), 2),
            "changed_1pct_files": changed_n, "changed_1pct_s": round(changed.wall_s, 3),
            "changed_1pct_cpu_s": round(changed.cpu_s, 3),
            "those_files_s": round(cost.wall_s, 3), "those_files_cpu_s": round(cost.cpu_s, 3),
            # <= 2 meets the 1 % target: (1 % run - those files alone) / no-op ceiling
            "changed_less_files_over_noop": round((changed.wall_s - cost.wall_s) / noop.wall_s, 2),
            "changed_less_files_over_noop_cpu": round((changed.cpu_s - cost.cpu_s) / max(noop.cpu_s, 1e-9), 2),
        }
    finally:
        drop_prefix(url, prefix)
        shutil.rmtree(copy, ignore_errors=True)


def cli_startup() -> list[dict]:
    """Import and start-up of the CLI: `python -c 'import ingest.cli'` and `ingest --version`."""
    rows = []
    for label, argv in (("python -c pass", [python(), "-c", "pass"]),
                        ("import ingest.cli", [python(), "-c", "import ingest.cli"]),
                        ("ingest --version", [str(INGEST), "--version"])):
        runs = [run_child(argv)[0] for _ in range(5)]
        best = min(runs, key=lambda m: m.wall_s)
        med = statistics.median(m.wall_s for m in runs)
        rows.append(row("cli", label, Measured(med, best.cpu_s, best.peak_rss_mib), note=f"median of 5, min {best.wall_s:.3f} s"))
    # the heaviest imports (self time) of the CLI module
    out = run_child([python(), "-X", "importtime", "-c", "import ingest.cli"])[1]
    costs = []
    for line in out.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s+(.*)", line)
        if m:
            costs.append((int(m.group(2)), m.group(3).strip()))
    top = sorted(costs, reverse=True)[:6]
    rows.append(row("cli", "heaviest imports (cumulative)", Measured(0, 0, 0),
                    note=", ".join(f"{n} {us / 1e3:.0f} ms" for us, n in top)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=int, default=0, metavar="N", help="the sample corpus replicated N times (0: not benched)")
    parser.add_argument("--sample-corpus", type=Path, default=ROOT / "corpus")
    parser.add_argument("--real", default="", help="comma list of /work/realcorpus names, or 'all'")
    parser.add_argument("--corpus", type=Path, action="append", default=[], help="any corpus folder (repeatable)")
    parser.add_argument("--store", action="append", default=[],
                        help="http://host:9200 for Elasticsearch, or 'sqlite' (a temp file; default); repeatable: "
                             "each corpus is benched on each store")
    parser.add_argument("--runs-only", action="store_true",
                        help="only whole `ingest run`s (first, unchanged, 1 %% changed) against the no-op ceiling; "
                             "no stage rows")
    parser.add_argument("--ingest", default="", help="--runs-only: the command that runs `ingest` (default: this "
                        "checkout's .venv/bin/ingest), e.g. 'python launch_other_checkout.py'")
    parser.add_argument("--repeat", type=int, default=3, metavar="N",
                        help="--runs-only: unchanged and 1 %% re-runs and ceilings measured N times (medians)")
    parser.add_argument("--no-startup", action="store_true", help="skip the CLI import/start-up measurement")
    parser.add_argument("--json", action="store_true", help="print the rows and the summary as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()

    # The CLI runs as installed: its modules byte-compiled (an environment that forbids writing
    # .pyc files would have every run compile ingest's sources again, ~0.1 s of each start-up).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.ingest:
        import shlex

        INGEST_CMD[:] = shlex.split(args.ingest)
    import compileall

    compileall.compile_dir(str(ROOT / "ingest"), quiet=1)
    work = Path(tempfile.mkdtemp(prefix="ingest-bench-"))
    stores = args.store or ["sqlite"]
    templates = [f"sqlite:///{{work}}/{{name}}.sqlite" if s == "sqlite" else s for s in stores]
    corpora: list[tuple[str, Path]] = []
    if args.sample:
        dest = work / f"sample-x{args.sample}"
        t = time.perf_counter()
        replicate(args.sample_corpus, dest, args.sample)
        print(f"replicated the sample corpus x{args.sample} in {time.perf_counter() - t:.1f} s -> {dest}", file=sys.stderr)
        corpora.append((f"sample x{args.sample}", dest))
    names = REAL_NAMES if args.real == "all" else [n for n in args.real.split(",") if n]
    for n in names:
        corpora.append((n, REAL / n))
    corpora += [(p.name, p) for p in args.corpus]
    missing = [str(p) for _, p in corpora if not (p / "documents").is_dir()]
    if missing:
        parser.error(f"not a corpus folder (no documents/ in it): {', '.join(missing)}")
    if not corpora:
        parser.error("nothing to bench: give --sample N, --real NAMES|all or --corpus PATH")

    rows: list[dict] = [] if args.no_startup else cli_startup()
    summary: dict = {"store": stores, "cpus": os.cpu_count(), "load_avg_start": os.getloadavg()}
    try:
        for name, root in corpora:
            for url_template in templates:
                try:
                    if args.runs_only:
                        bench_runs(name, root, url_template, work, summary, rows, args.repeat)
                    else:
                        bench_corpus(name, root, url_template, work, summary, rows)
                except Exception as exc:  # noqa: BLE001 - report it, keep the other corpora's figures
                    print(f"{name}: the bench stopped: {exc}"[:2000], file=sys.stderr)
                    summary.setdefault("failed", {})[name] = str(exc)[:500]
                print_table([r for r in rows if r["corpus"].startswith(name)], file=sys.stderr)  # partial results
        summary["load_avg_end"] = os.getloadavg()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        json.dump({"rows": rows, "summary": summary}, sys.stdout, indent=1)
        print()
    else:
        print()
        print_table(rows)
        print("\nsummary:", json.dumps(summary, indent=1))
    if summary.get("failed"):
        sys.exit(f"bench failed for: {', '.join(summary['failed'])} (see above)")


if __name__ == "__main__":
    main()
