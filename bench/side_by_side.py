"""ingest side by side with LangChain, LlamaIndex and Haystack 2 on the same documents (issue 11).

Run by hand (not by the tests; 2 shared cores: read the ratios, not the absolute figures):

    .venv/bin/python bench/side_by_side.py --sample 150 --corpus /work/realcorpus/postgres-html \\
        --store http://127.0.0.1:9200 --competitor-python /work/compare-venv/bin/python --repeat 3

Per corpus, each tool does a first build into a fresh index and then an unchanged re-run of the
same folder, both as subprocesses; wall time and CPU (user + system of the child and its waited-for
descendants, from wait4) are the medians of --repeat rounds. The tools take turns within a round
(ingest, LangChain, LlamaIndex, Haystack, then the next round) so a change in the machine's load hits
them alike. BM25 only, one Elasticsearch node, a distinct index per tool and round, deleted after.

  ingest      `ingest run DIR --store URL --index-prefix P --json` (its own parsers, structure chunker)
  langchain   bench/competitors/run_langchain.py: ElasticsearchStore + BM25Strategy, `index()` with a
              SQLRecordManager (cleanup="incremental")
  llamaindex  bench/competitors/run_llamaindex.py: IngestionPipeline + SimpleDocumentStore (upserts),
              ElasticsearchStore with the BM25 strategy
  haystack    bench/competitors/run_haystack.py: converters + DocumentSplitter + DocumentWriter into
              ElasticsearchDocumentStore (DuplicatePolicy.SKIP)

The competitors run under --competitor-python (a separate venv: bench/competitors/requirements.txt),
so ingest's own dependencies stay clean; a competitor whose packages do not import there is skipped
with the reason. Every tool's index is counted (`_count` after a refresh) after each run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _measure import INGEST, Measured, run_child  # noqa: E402

COMPETITORS = {
    "langchain": ("run_langchain.py", "import langchain_elasticsearch, langchain_community, langchain_text_splitters"),
    "llamaindex": ("run_llamaindex.py", "import llama_index.core, llama_index.vector_stores.elasticsearch"),
    "haystack": ("run_haystack.py", "import haystack, haystack_integrations.document_stores.elasticsearch"),
}
LABELS = {"ingest": "ingest", "langchain": "LangChain", "llamaindex": "LlamaIndex", "haystack": "Haystack 2"}


def es_client(url: str):
    from elasticsearch import Elasticsearch

    return Elasticsearch(url, request_timeout=120)


def index_pattern(tool: str, prefix: str) -> str:
    # ingest's chunk indices are `<prefix>-chunks_<label>` (role aliases `<prefix>-chunks-<role>` are not counted)
    return f"{prefix}-chunks_*" if tool == "ingest" else prefix


def count_chunks(url: str, tool: str, prefix: str) -> int:
    es = es_client(url)
    try:
        pattern = index_pattern(tool, prefix)
        es.indices.refresh(index=pattern, ignore_unavailable=True, allow_no_indices=True)
        return int(es.count(index=pattern, ignore_unavailable=True, allow_no_indices=True)["count"])
    finally:
        es.close()


def drop(url: str, prefix: str) -> None:
    es = es_client(url)
    try:
        names = list(es.indices.get(index=f"{prefix}*", expand_wildcards="all"))
        if names:
            es.indices.delete(index=",".join(names))
    finally:
        es.close()


def available(competitor_python: str | None, tools: list[str]) -> tuple[list[str], dict[str, str]]:
    usable, skipped = [], {}
    for tool in tools:
        if tool == "ingest":
            usable.append(tool)
            continue
        if not competitor_python:
            skipped[tool] = "no --competitor-python"
            continue
        probe = subprocess.run([competitor_python, "-c", COMPETITORS[tool][1]], capture_output=True, text=True)
        if probe.returncode:
            skipped[tool] = (
                probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else f"exit {probe.returncode}"
            )
        else:
            usable.append(tool)
    return usable, skipped


def competitor_versions(competitor_python: str) -> dict[str, str]:
    names = [
        "langchain",
        "langchain-core",
        "langchain-community",
        "langchain-elasticsearch",
        "langchain-text-splitters",
        "llama-index-core",
        "llama-index-vector-stores-elasticsearch",
        "llama-index-readers-file",
        "haystack-ai",
        "elasticsearch-haystack",
        "elasticsearch",
        "pypdf",
        "beautifulsoup4",
        "trafilatura",
        "markdown-it-py",
    ]
    code = (
        f"import json, importlib.metadata as m\nout = {{}}\nfor n in {names!r}:\n    try: out[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: pass\nprint(json.dumps(out))"
    )
    done = subprocess.run([competitor_python, "-c", code], capture_output=True, text=True)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def ingest_version() -> str:
    return subprocess.run([str(INGEST), "--version"], capture_output=True, text=True).stdout.strip()


def last_json(output: str) -> dict:
    for line in reversed(output.strip().splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return {}


def argv_for(tool: str, corpus: Path, url: str, prefix: str, state: Path, competitor_python: str | None) -> list[str]:
    if tool == "ingest":
        return [str(INGEST), "run", str(corpus), "--store", url, "--index-prefix", prefix, "--json"]
    assert competitor_python
    script = ROOT / "bench" / "competitors" / COMPETITORS[tool][0]
    return [
        competitor_python,
        str(script),
        "--corpus",
        str(corpus),
        "--url",
        url,
        "--index",
        prefix,
        "--state",
        str(state),
    ]


def one_round(tool: str, corpus: Path, url: str, prefix: str, work: Path, competitor_python: str | None) -> dict:
    state = work / f"{prefix}-state"
    state.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ, HAYSTACK_TELEMETRY_ENABLED="False", ANONYMIZED_TELEMETRY="False", TOKENIZERS_PARALLELISM="false"
    )
    argv = argv_for(tool, corpus, url, prefix, state, competitor_python)
    out: dict = {}
    try:
        # ingest: exit 1 = some documents refused, the rest went in (a complete run); a competitor's
        # exit 1 is a traceback
        ok_codes = (0, 1) if tool == "ingest" else (0,)
        first, text = run_child(argv, env=env, ok_codes=ok_codes)
        out["first"] = first
        out["first_report"] = last_json(text) if tool != "ingest" else {}
        out["chunks_first"] = count_chunks(url, tool, prefix)
        again, text = run_child(argv, env=env, ok_codes=ok_codes)
        out["again"] = again
        out["again_report"] = last_json(text) if tool != "ingest" else {}
        out["chunks_again"] = count_chunks(url, tool, prefix)
    finally:
        drop(url, prefix)
        shutil.rmtree(state, ignore_errors=True)
    return out


def median(ms: list[Measured], attr: str) -> float:
    return statistics.median(getattr(m, attr) for m in ms)


def bench_corpus(name: str, corpus: Path, args, tools: list[str], work: Path) -> dict:
    files = [p for p in (corpus / "documents").rglob("*") if p.is_file() and not p.name.startswith(".")]
    mb = sum(p.stat().st_size for p in files) / 1e6
    print(f"\n== {name}: {len(files):,} files, {mb:.1f} MB ({corpus}); load {os.getloadavg()}", file=sys.stderr)
    load_before = os.getloadavg()
    results: dict[str, list[dict]] = {t: [] for t in tools}
    for r in range(args.repeat):
        for tool in tools:
            prefix = f"sbs-{tool}-{os.getpid()}-{r}"
            started = time.perf_counter()
            try:
                results[tool].append(one_round(tool, corpus, args.store, prefix, work, args.competitor_python))
            except Exception as exc:  # noqa: BLE001 - report it, keep the other tools' figures
                print(f"{name} / {tool} round {r}: {str(exc)[-1500:]}", file=sys.stderr)
                results[tool].append({"error": str(exc)[-500:]})
            done = results[tool][-1]
            if "again" in done:
                print(
                    f"  {tool:10s} round {r}: first {done['first'].wall_s:7.1f} s (cpu {done['first'].cpu_s:6.1f}), "
                    f"re-run {done['again'].wall_s:6.1f} s (cpu {done['again'].cpu_s:5.1f}), "
                    f"{done['chunks_first']:,} chunks; load {os.getloadavg()[0]:.1f}; "
                    f"{time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                )
    summary: dict = {
        "files": len(files),
        "mb": round(mb, 1),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "tools": {},
    }
    for tool in tools:
        ok = [x for x in results[tool] if "again" in x]
        if not ok:
            summary["tools"][tool] = {"error": results[tool][0].get("error", "no run") if results[tool] else "no run"}
            continue
        firsts = [x["first"] for x in ok]
        agains = [x["again"] for x in ok]
        summary["tools"][tool] = {
            "rounds": len(ok),
            "first_s": round(median(firsts, "wall_s"), 2),
            "first_cpu_s": round(median(firsts, "cpu_s"), 2),
            "again_s": round(median(agains, "wall_s"), 2),
            "again_cpu_s": round(median(agains, "cpu_s"), 2),
            "first_peak_rss_mib": round(median(firsts, "peak_rss_mib")),
            "chunks": ok[-1]["chunks_first"],
            "chunks_after_rerun": ok[-1]["chunks_again"],
            "first_report": ok[-1]["first_report"],
            "again_report": ok[-1]["again_report"],
        }
    base = summary["tools"].get("ingest", {})
    for tool, s in summary["tools"].items():
        if tool != "ingest" and "first_s" in s and "first_s" in base:
            s["first_ratio"] = round(s["first_s"] / base["first_s"], 2)
            s["again_ratio"] = round(s["again_s"] / base["again_s"], 2)
    return summary


def print_tables(summaries: dict, tools: list[str], file=sys.stdout) -> None:
    comp = [t for t in tools if t != "ingest"]
    heads = ["corpus", "ingest"] + [LABELS[t] for t in comp]
    for title, key, cpu in (("first build", "first_s", "first_cpu_s"), ("unchanged re-run", "again_s", "again_cpu_s")):
        print(f"\n{title}: wall s (CPU s) [× ingest's wall]", file=file)
        print("| " + " | ".join(heads) + " |", file=file)
        print("| " + " | ".join("---" for _ in heads) + " |", file=file)
        for name, s in summaries.items():
            cells = [f"{name} ({s['files']:,} files, {s['mb']} MB)"]
            for tool in tools:
                t = s["tools"].get(tool, {})
                if key not in t:
                    cells.append(f"failed: {t.get('error', 'skipped')[:80]}")
                    continue
                ratio = (
                    ""
                    if tool == "ingest"
                    else f" [{t[key] / s['tools']['ingest'][key]:.1f}×]"
                    if key in s["tools"].get("ingest", {})
                    else ""
                )
                cells.append(f"{t[key]:.1f} s ({t[cpu]:.1f}){ratio}")
            print("| " + " | ".join(cells) + " |", file=file)
    print("\nchunks in the index after the first build / after the re-run; load average before → after", file=file)
    for name, s in summaries.items():
        parts = [
            f"{tool} {t['chunks']:,}/{t['chunks_after_rerun']:,}" for tool, t in s["tools"].items() if "chunks" in t
        ]
        print(
            f"  {name}: " + ", ".join(parts) + f"; load {s['load_before'][0]:.1f} → {s['load_after'][0]:.1f}", file=file
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sample", type=int, default=0, metavar="N", help="the sample corpus replicated N times under new doc_ids"
    )
    parser.add_argument("--sample-corpus", type=Path, default=ROOT / "corpus")
    parser.add_argument("--corpus", type=Path, action="append", default=[], help="any corpus folder (repeatable)")
    parser.add_argument("--store", default="http://127.0.0.1:9200", help="one Elasticsearch node (default %(default)s)")
    parser.add_argument("--competitor-python", help="the interpreter of a venv with bench/competitors/requirements.txt")
    parser.add_argument("--tools", default="ingest,langchain,llamaindex,haystack")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per tool; medians reported (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the summaries as JSON too")
    args = parser.parse_args()

    requested = [t for t in args.tools.split(",") if t]
    unknown = set(requested) - {"ingest", *COMPETITORS}
    if unknown:
        parser.error(f"unknown tools {sorted(unknown)}")
    tools, skipped = available(args.competitor_python, requested)
    for tool, why in skipped.items():
        print(f"{tool}: skipped ({why})", file=sys.stderr)
    work = Path(tempfile.mkdtemp(prefix="ingest-sbs-"))
    corpora: list[tuple[str, Path]] = []
    try:
        if args.sample:
            from bench_ingest import replicate

            dest = work / f"sample-x{args.sample}"
            replicate(args.sample_corpus, dest, args.sample)
            corpora.append((f"sample ×{args.sample}", dest))
        corpora += [(p.name, p) for p in args.corpus]
        if not corpora:
            parser.error("nothing to run: give --sample N or --corpus PATH")
        summaries = {}
        for name, root in corpora:
            summaries[name] = bench_corpus(name, root, args, tools, work)
            print_tables({name: summaries[name]}, tools, file=sys.stderr)  # partial results as they come
    finally:
        shutil.rmtree(work, ignore_errors=True)
    versions = competitor_versions(args.competitor_python) if args.competitor_python else {}
    print(f"\n{ingest_version()}; competitors: {json.dumps(versions) if versions else '-'}")
    print(f"skipped: {skipped or 'none'}; {os.cpu_count()} CPUs; median of {args.repeat}")
    print_tables(summaries, tools)
    if args.json:
        print(json.dumps(summaries, indent=1, default=str))
    failed = [f"{tool} on {name}" for name, summary in summaries.items()
              for tool, figures in summary.get("tools", {}).items() if "error" in figures]
    if skipped or failed:
        sys.exit("not compared: " + ", ".join([*(f"{t} ({why})" for t, why in skipped.items()), *failed]))


if __name__ == "__main__":
    main()
