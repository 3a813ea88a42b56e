"""Search latency at k = 5 on a big Elasticsearch index (issue 11, item 7): p50 / p95.

    .venv/bin/python bench/search_latency.py --store http://127.0.0.1:9200 --index-prefix bench-search-1m
    .venv/bin/python bench/search_latency.py --store http://127.0.0.1:9200 --index-prefix x --build /work/realcorpus/postgres-html

Build the index first with `--build CORPUS` (an `ingest run`), or reuse one, e.g. the 1M-chunk run
of `bench/memory_scale.py run --store URL --keep-index bench-search-1m`. Queries are two to three
words taken from chunks sampled at random from the index (seeded), the same list for every mode,
each query through every mode in turn (interleaved, so that a shared machine's load falls on all alike):

  library  unfiltered   store.search with every label and no as-of date (`ingest search --role <all> --as-of any`)
  library  filtered     ingest.api Index.search as --role, as-of today (what `ingest search` runs)
  raw      unfiltered   the Python client: combined_fields (as the store) on the all-labels alias, no filter
  raw      filtered     the Python client: the role alias, as the README writes it: the labels the index
                        records that the role may not read and the as-of conditions as exclusions
  raw      negated      the role's labels and the as-of conditions as one must_not of their negation
                        (for a service that cannot know the other labels; for comparison)
  raw      flat         the same conditions, each negated in its own must_not clause (for comparison)
  raw      plain        the same conditions as plain filter clauses (the slower form, for comparison)
  cli      both         `ingest search` as a subprocess (start-up included; fewer runs)

The target: filtered <= 1.2 x unfiltered.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _measure import INGEST  # noqa: E402

from ingest.api import open_store as open_index  # noqa: E402
from ingest.store import open_store  # noqa: E402

from ingest.store.elasticsearch.query import SEARCH_FIELDS as STORE_FIELDS  # noqa: E402

SEARCH_FIELDS = list(STORE_FIELDS)  # as the store searches


def as_of_filters(day: str) -> list[dict]:
    def bound(field: str, op: str) -> dict:
        return {"bool": {"should": [{"range": {field: {op: day}}}, {"bool": {"must_not": {"exists": {"field": field}}}}],
                         "minimum_should_match": 1}}

    return [bound("effective_from", "lte"), bound("effective_to", "gte")]


def role_alias_query(q: str, labels: list[str], day: str, withheld: list[str], form: str = "withheld") -> dict:
    """The README's raw role-alias query (``withheld``): the labels the index records that the role
    may not read, and the as-of conditions, as exclusions (the alias's own filter holds the role's
    labels). For comparison: ``negated``, the role's labels and the as-of conditions as one must_not
    of their negation (the form for a service that cannot know the other labels); ``flat``, each
    negated condition its own must_not clause; ``plain``, filter clauses, which Elasticsearch runs
    slower inside the alias's own filter. The same chunks in every form."""
    conditions = [{"terms": {"access": labels}}, *as_of_filters(day)]
    match = {"combined_fields": {"query": q, "fields": SEARCH_FIELDS}}
    as_of_excluded = [{"range": {"effective_from": {"gt": day}}}, {"range": {"effective_to": {"lt": day}}}]
    if form == "withheld":
        access = [{"terms": {"access": withheld}}] if withheld else []
        return {"bool": {"must": match, "must_not": access + as_of_excluded}}
    if form == "flat":
        return {"bool": {"must": match, "must_not": [{"bool": {"must_not": {"terms": {"access": labels}}}}, *as_of_excluded]}}
    if form == "plain":
        return {"bool": {"must": match, "filter": conditions}}
    return {"bool": {"must": match, "must_not": [{"bool": {"must_not": {"bool": {"filter": conditions}}}}]}}


def percentiles(samples: list[float]) -> dict:
    ms = sorted(s * 1000 for s in samples)
    q = statistics.quantiles(ms, n=20, method="inclusive")
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 2), "p95_ms": round(q[18], 2), "max_ms": round(ms[-1], 2)}


def timed(modes: dict, queries: list[str]) -> dict[str, tuple[list[float], int]]:
    """Each query through every mode in turn (interleaved: on a shared machine a change of load
    then falls on every mode alike, not on whichever block ran then)."""
    found: dict[str, tuple[list[float], int]] = {name: ([], 0) for name in modes}
    for q in queries:
        for name, fn in modes.items():
            started = time.perf_counter()
            hit = bool(fn(q))
            samples, hits = found[name]
            samples.append(time.perf_counter() - started)
            found[name] = (samples, hits + hit)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", required=True, help="http://host:9200")
    parser.add_argument("--index-prefix", required=True)
    parser.add_argument("--build", type=Path, help="run `ingest run CORPUS` into the prefix first")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--cli-runs", type=int, default=15)
    parser.add_argument("--role", default="public", help="the role of the filtered searches")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    k = 5
    if args.build:
        started = time.perf_counter()
        subprocess.run([str(INGEST), "run", str(args.build), "--store", args.store, "--index-prefix", args.index_prefix], check=True,
                       stdout=subprocess.DEVNULL)
        print(f"built {args.index_prefix} from {args.build} in {time.perf_counter() - started:.1f} s", file=sys.stderr)

    from elasticsearch import Elasticsearch

    es = Elasticsearch(args.store, request_timeout=60)
    all_alias, role_alias = f"{args.index_prefix}-chunks", f"{args.index_prefix}-chunks-{args.role}"
    size = es.count(index=all_alias)["count"]
    role_size = es.count(index=role_alias)["count"]
    rng = random.Random(5)
    sample = es.search(index=all_alias, size=min(args.queries, 1000), source=["text"],
                       query={"function_score": {"query": {"match_all": {}}, "random_score": {"seed": 5, "field": "_seq_no"}}})
    queries = []
    for hit in sample["hits"]["hits"]:
        words = [w.strip(".,;:()[]\"'") for w in hit["_source"]["text"].split()]
        words = [w for w in words if len(w) > 3 and w.isalpha()]
        if len(words) >= 3:
            queries.append(" ".join(rng.sample(words, rng.choice((2, 3)))))
    queries = (queries * (args.queries // max(1, len(queries)) + 1))[: args.queries]

    store = open_store(args.store, args.index_prefix, create=False)
    index = open_index(args.store, args.index_prefix, create=False)
    meta = store.get_meta()
    roles = json.loads(meta["roles"]) if "roles" in meta else {}
    all_labels = sorted(json.loads(meta["labels"])) if "labels" in meta else sorted({lab for v in roles.values() for lab in v})
    role_labels = tuple(roles.get(args.role, (args.role,)))
    withheld = sorted(({label for labels in roles.values() for label in labels} | set(all_labels)) - set(role_labels))
    today = date.today()
    day = today.isoformat()

    modes = {
        "library unfiltered (all labels, as-of any)": lambda q: store.search(q, all_labels, None, top=k),
        f"library filtered (role {args.role}, as-of today)": lambda q: index.search(q, role=args.role, as_of=today, top=k),
        "raw unfiltered (all alias, no filter)": lambda q: es.search(
            index=all_alias, size=k, query={"combined_fields": {"query": q, "fields": SEARCH_FIELDS}}, track_total_hits=False)["hits"]["hits"],
        f"raw filtered (role alias {args.role}, README form)": lambda q: es.search(
            index=role_alias, size=k, track_total_hits=False,
            query=role_alias_query(q, list(role_labels), day, withheld))["hits"]["hits"],
        "raw filtered, one must_not of the negation": lambda q: es.search(
            index=role_alias, size=k, track_total_hits=False,
            query=role_alias_query(q, list(role_labels), day, withheld, "negated"))["hits"]["hits"],
        "raw filtered, one must_not per condition": lambda q: es.search(
            index=role_alias, size=k, track_total_hits=False,
            query=role_alias_query(q, list(role_labels), day, withheld, "flat"))["hits"]["hits"],
        "raw filtered, as plain filter clauses": lambda q: es.search(
            index=role_alias, size=k, track_total_hits=False,
            query=role_alias_query(q, list(role_labels), day, withheld, "plain"))["hits"]["hits"],
    }
    timed(modes, queries[:30])  # warm caches the same way for every mode
    results = {name: {**percentiles(samples), "queries_with_hits": hits} for name, (samples, hits) in timed(modes, queries).items()}
    cli_modes = {
        "cli unfiltered (--role <all labels> --as-of any)": ["--as-of", "any", "--role", max(roles, key=lambda r: len(roles[r])) if roles else "staff"],
        f"cli filtered (--role {args.role})": ["--role", args.role],
    }
    for name, extra in cli_modes.items() if args.cli_runs > 0 else ():
        samples = []
        for q in queries[: args.cli_runs]:
            started = time.perf_counter()
            subprocess.run([str(INGEST), "search", q, "-k", str(k), "--store", args.store, "--index-prefix", args.index_prefix, *extra],
                           check=True, stdout=subprocess.DEVNULL)
            samples.append(time.perf_counter() - started)
        results[name] = percentiles(samples)
    store.close()
    index.close()
    names = list(results)
    ratio = {
        "library filtered / unfiltered p50": round(results[names[1]]["p50_ms"] / results[names[0]]["p50_ms"], 2),
        "library filtered / unfiltered p95": round(results[names[1]]["p95_ms"] / results[names[0]]["p95_ms"], 2),
        "raw filtered / unfiltered p50": round(results[names[3]]["p50_ms"] / results[names[2]]["p50_ms"], 2),
        "raw filtered / unfiltered p95": round(results[names[3]]["p95_ms"] / results[names[2]]["p95_ms"], 2),
        "raw must_not of the negation / unfiltered p50": round(results[names[4]]["p50_ms"] / results[names[2]]["p50_ms"], 2),
        "raw must_not of the negation / unfiltered p95": round(results[names[4]]["p95_ms"] / results[names[2]]["p95_ms"], 2),
        "raw one must_not per condition / unfiltered p95": round(results[names[5]]["p95_ms"] / results[names[2]]["p95_ms"], 2),
        "raw plain filters / unfiltered p50": round(results[names[6]]["p50_ms"] / results[names[2]]["p50_ms"], 2),
        "library filtered / raw filtered p50": round(results[names[1]]["p50_ms"] / results[names[3]]["p50_ms"], 2),
    }
    report = {"index": args.index_prefix, "chunks": size, f"chunks readable by {args.role}": role_size, "k": k, "results": results, "ratios": ratio}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"index {args.index_prefix}: {size:,} chunks ({role_size:,} readable by {args.role}), k = {k}, {len(queries)} queries")
    print(f"{'mode':<52} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, r in results.items():
        print(f"{name:<52} {r['n']:>5} {r['p50_ms']:>8.1f} {r['p95_ms']:>8.1f} {r['max_ms']:>8.1f}")
    for name, value in ratio.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    from elastic_transport import ConnectionError as NoConnection
    from elasticsearch import NotFoundError

    try:
        main()
    except NoConnection as exc:
        sys.exit(f"search_latency: cannot reach {sys.argv[sys.argv.index('--store') + 1] if '--store' in sys.argv else 'the store'}: {exc}")
    except NotFoundError as exc:
        sys.exit(f"search_latency: nothing to search under that --index-prefix ({exc.message}); build it first (--build CORPUS)")
