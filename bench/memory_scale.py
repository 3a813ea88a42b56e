"""Peak memory of `ingest run` from 20k to 1M chunks (issue 11, item 5: the measuring side).

    .venv/bin/python bench/memory_scale.py synth /tmp/m1m --chunks 1000000      # write a corpus only
    .venv/bin/python bench/memory_scale.py run --chunks 20000,100000,1000000    # synthesise + run each
    .venv/bin/python bench/memory_scale.py run --chunks 20000 --store http://127.0.0.1:9200 --json

The synthesised corpus is generated Markdown: DOCS documents with front matter (doc_id, version,
title, access cycling public/partner/staff, effective_from on every third) and SECTIONS sections
each of about WORDS words drawn from a fixed pseudo-random vocabulary (seeded: the same corpus
every time), with `chunking.size` in ingest.toml just above a section, so every section is exactly
one chunk and the chunk count is known before the run. Each corpus is run by `ingest run` in a
subprocess on a fresh store; reported: wall, CPU, ru_maxrss of the child (wait4: the largest process
of its tree) and the peak of the summed RSS of the child's whole process tree (sampled every 0.2 s),
and the growth of the largest process per extra document over the smallest run (what a run still
holds per document). The target: peak RSS at 1M chunks <= 1.2 x at 20k.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _measure import INGEST, run_child  # noqa: E402

SECTIONS_PER_DOC = 200
WORDS_PER_SECTION = 30
CHUNK_SIZE = 40  # words: a section (heading + ~30 words) fits, two do not


def vocabulary(n: int = 6000, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vi", "so", "de", "pa", "gu", "fe", "ri", "mo", "sha", "tor", "lin", "dar", "quel", "bri"]
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def synthesise(dest: Path, chunks: int, *, sections: int = SECTIONS_PER_DOC, words: int = WORDS_PER_SECTION, seed: int = 7) -> dict:
    """A corpus of about ``chunks`` chunks (one per section) at ``dest``."""
    vocab = vocabulary()
    weights = [1 / (rank + 1) for rank in range(len(vocab))]  # Zipf-like: realistic BM25 postings
    rng = random.Random(seed)
    docs = max(1, -(-chunks // sections))
    (dest / "documents").mkdir(parents=True, exist_ok=True)
    (dest / "ingest.toml").write_text(
        '[access]\nlabels = ["public", "partner", "staff"]\n\n'
        '[roles]\npublic = ["public"]\npartner = ["public", "partner"]\nstaff = ["public", "partner", "staff"]\n\n'
        f'[chunking]\nchunker = "structure"\nsize = {CHUNK_SIZE}\n'
    )
    made = 0
    access = ("public", "partner", "staff")
    for d in range(docs):
        n_sections = min(sections, chunks - made)
        folder = dest / "documents" / f"d{d // 1000:03d}"
        folder.mkdir(exist_ok=True)
        pool = rng.choices(vocab, weights=weights, k=n_sections * words)
        parts = [
            "---", f"doc_id: synth-{d:06d}", 'version: "1"', f'title: "Synthetic handbook {d}"', f"access: {access[d % 3]}",
            *(["effective_from: 2025-01-01"] if d % 3 == 0 else []), "---", "",
        ]
        for s in range(n_sections):
            sentence = " ".join(pool[s * words:(s + 1) * words])
            parts += [f"## Part {s} {pool[s * words]}", "", sentence.capitalize() + ".", ""]
        (folder / f"synth-{d:06d}.md").write_text("\n".join(parts), encoding="utf-8")
        made += n_sections
    size = sum(p.stat().st_size for p in (dest / "documents").rglob("*.md"))
    return {"documents": docs, "chunks": made, "mb": round(size / 1e6, 1)}


def prefix_indices(url: str, prefix: str) -> list[str]:
    if not url.startswith("http"):
        return []
    from elasticsearch import Elasticsearch

    with Elasticsearch(url, request_timeout=120) as es:
        return list(es.indices.get(index=f"{prefix}-*", expand_wildcards="all"))


def drop_prefix(url: str, prefix: str) -> None:
    names = prefix_indices(url, prefix)
    if names:
        from elasticsearch import Elasticsearch

        with Elasticsearch(url, request_timeout=120) as es:
            es.indices.delete(index=",".join(names))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    synth = sub.add_parser("synth", help="write a synthesised corpus")
    synth.add_argument("dest", type=Path)
    synth.add_argument("--chunks", type=int, default=1_000_000)
    run = sub.add_parser("run", help="synthesise and run `ingest run` at each size, reporting peak RSS")
    run.add_argument("--chunks", default="20000,100000,1000000", help="comma list of corpus sizes in chunks")
    run.add_argument("--store", default="sqlite", help="'sqlite' (temp file, default) or http://host:9200")
    run.add_argument("--keep-index", default="", help="Elasticsearch: keep the largest run's index under this prefix (for search_latency.py); "
                     "a prefix that already holds indices is refused unless --replace-index")
    run.add_argument("--replace-index", action="store_true", help="with --keep-index: delete what the prefix holds first")
    run.add_argument("--work", type=Path, default=None, help="where corpora go (default: a temp folder, removed)")
    run.add_argument("--json", action="store_true")
    args = parser.parse_args()

    if args.cmd == "synth":
        print(json.dumps(synthesise(args.dest, args.chunks)))
        return

    if args.keep_index and not args.replace_index and (held := prefix_indices(args.store, args.keep_index)):
        parser.error(f"--keep-index {args.keep_index}: the prefix already holds {len(held)} indices "
                     f"({', '.join(sorted(held)[:4])}...); pick another prefix or add --replace-index")
    work = args.work or Path(tempfile.mkdtemp(prefix="ingest-mem-"))
    sizes = [int(x) for x in args.chunks.split(",") if x]
    results = []
    for n in sizes:
        corpus = work / f"synth-{n}"
        if not (corpus / "documents").is_dir():
            info = synthesise(corpus, n)
        else:
            info = {"chunks": n, "reused": True}
        keep = bool(args.keep_index) and n == max(sizes)
        prefix = args.keep_index if keep else f"bench-mem-{n}-{os.getpid()}"
        url = f"sqlite:///{work / (prefix + '.sqlite')}" if args.store == "sqlite" else args.store
        if keep:
            drop_prefix(url, prefix)
        measured, output = run_child([str(INGEST), "run", str(corpus), "--store", url, "--index-prefix", prefix, "--json"],
                                     sample_tree=True, check=False)
        try:
            report = json.loads(output[output.index("{"):])
            written = report["chunks"]["written"]
        except (ValueError, KeyError):
            written = None
        result = {"chunks": n, **info, "exit": measured.value, "written": written, "wall_s": round(measured.wall_s, 1),
                  "cpu_s": round(measured.cpu_s, 1), "max_rss_mib": round(measured.peak_rss_mib),
                  "max_rss_kib": round(measured.peak_rss_mib * 1024),
                  "tree_rss_mib": round(measured.tree_rss_mib)}
        if measured.value != 0:
            result["output_tail"] = output[-600:]
        results.append(result)
        print(json.dumps(result), file=sys.stderr, flush=True)
        if not keep:
            drop_prefix(url, prefix)
            if url.startswith("sqlite:///"):
                Path(url[len("sqlite:///"):]).unlink(missing_ok=True)
        if args.work is None:
            shutil.rmtree(corpus, ignore_errors=True)
    base = results[0]
    for r in results:
        r["rss_vs_smallest"] = round(r["max_rss_mib"] / max(base["max_rss_mib"], 1), 2)
        r["tree_rss_vs_smallest"] = round(r["tree_rss_mib"] / max(base["tree_rss_mib"], 1), 2)
        # what a run still holds per document (its result, plan line, metadata): the growth of the
        # largest process over the smallest run, per extra document (the same documents, 200 chunks each)
        extra_docs = -(-r["chunks"] // SECTIONS_PER_DOC) - -(-base["chunks"] // SECTIONS_PER_DOC)
        if extra_docs > 0:
            r["bytes_per_extra_doc"] = round((r["max_rss_kib"] - base["max_rss_kib"]) * 1024 / extra_docs)
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(f"{'chunks':>9} {'docs':>6} {'MB':>6} {'exit':>4} {'wall s':>8} {'CPU s':>7} {'max RSS MiB':>11} {'tree RSS MiB':>12} {'x smallest':>10}")
        for r in results:
            print(f"{r['chunks']:>9,} {r.get('documents', ''):>6} {r.get('mb', ''):>6} {r['exit']:>4} {r['wall_s']:>8.1f} {r['cpu_s']:>7.1f} "
                  f"{r['max_rss_mib']:>11,} {r['tree_rss_mib']:>12,} {r['rss_vs_smallest']:>10.2f}"
                  + (f"  {r['bytes_per_extra_doc']:,} B per extra document" if "bytes_per_extra_doc" in r else ""))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
