"""What a first build costs the Elasticsearch node, next to a raw ``streaming_bulk`` of the same chunks.

Run by hand (never by the tests), against a node on this machine (its CPU is read from /proc):

    .venv/bin/python bench/es_node_cpu.py --node-pid "$(ss -ltnp | grep -Po ':9200 .*pid=\\K[0-9]+')" \\
        --store http://127.0.0.1:9200 --corpus /tmp/lead/s150 --repeat 3 [--code ref=/tmp/checkout --code new=.]

Per trial, in alternation: the raw ceiling (one index with ingest's chunk mapping, refresh off,
500 actions per request, refresh at the end) and ``ingest run CORPUS`` into a fresh prefix for every
``--code NAME=PATH`` (that checkout's ``ingest`` package on PYTHONPATH; default: this one). Before
each, the node is let settle (its CPU below 0.04 s per second). Printed: wall, the node's CPU, the
run's own process CPU and its parser processes' CPU (read in the run's process at exit), load average.
Uses the prefix ``bench-nodecpu`` (deleted before and after each trial).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "bench-nodecpu"

# Runs `ingest` and writes this process's own CPU and its children's (the parser processes) at exit.
LAUNCHER = """
import atexit, os, sys
def report():
    f = open('/proc/self/stat').read().rsplit(')', 1)[1].split()
    hz = os.sysconf('SC_CLK_TCK')
    with open(os.environ['BENCH_CPU_FILE'], 'w') as out:
        out.write(f'{(int(f[11]) + int(f[12])) / hz} {(int(f[13]) + int(f[14])) / hz}')
if __name__ == '__main__':
    atexit.register(report)
    from ingest.__main__ import main
    sys.argv[0] = 'ingest'
    sys.exit(main())
"""

RAW = """
import json, sys
from elasticsearch import Elasticsearch, helpers
url, index, records_file, mapping_file = sys.argv[1:5]
records = json.load(open(records_file))
es = Elasticsearch(url, request_timeout=120)
es.indices.create(index=index, **json.load(open(mapping_file)))
es.indices.put_settings(index=index, settings={'refresh_interval': '-1'})
actions = ({'_index': index, '_id': r['chunk_id'], '_source': r} for r in records)
for ok, item in helpers.streaming_bulk(es, actions, chunk_size=500, max_chunk_bytes=5 * 2**20):
    assert ok, item
es.indices.refresh(index=index)
"""


def node_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(pid: int) -> None:
    for _ in range(30):
        before = node_cpu(pid)
        time.sleep(1.0)
        if node_cpu(pid) - before < 0.04:
            return


def drop(url: str) -> None:
    from elasticsearch import Elasticsearch

    es = Elasticsearch(url, request_timeout=60)
    es.options(ignore_status=404).indices.delete(index=f"{PREFIX}-*", expand_wildcards="all")
    es.close()


def chunk_records(corpus: Path, path: Path) -> None:
    """The chunks a first build of ``corpus`` writes, as their stored documents (one process)."""
    from ingest.chunk import chunk_document
    from ingest.corpus import scan_corpus
    from ingest.settings import load_settings

    settings = load_settings(corpus)
    scan = scan_corpus(corpus, settings, workers=0)
    records = [c.to_json() for d in scan.documents for c in chunk_document(d, settings.chunking)]
    path.write_text(json.dumps(records))


def trial(name: str, args: argparse.Namespace, code: dict[str, str], tmp: Path) -> tuple[float, float, float, float]:
    drop(args.store)
    settle(args.node_pid)
    cpu_file = tmp / "cpu"
    if name == "raw":
        mapping = ROOT / "mappings" / "chunks.json"
        argv = [sys.executable, "-c", RAW, args.store, f"{PREFIX}-raw", str(tmp / "records.json"), str(mapping)]
        env = dict(os.environ)
    else:
        argv = [sys.executable, "-c", LAUNCHER, "run", str(args.corpus), "--store", args.store]
        argv += ["--index-prefix", PREFIX, "-q"]
        env = {**os.environ, "PYTHONPATH": code[name], "BENCH_CPU_FILE": str(cpu_file)}
    before, start = node_cpu(args.node_pid), time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall, node = time.perf_counter() - start, node_cpu(args.node_pid) - before
    if done.returncode != 0:
        raise SystemExit(f"{name} failed (exit {done.returncode}):\n{done.stderr}")
    own, workers = (0.0, 0.0) if name == "raw" else tuple(map(float, cpu_file.read_text().split()))
    return wall, node, own, workers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--node-pid", type=int, required=True, help="the Elasticsearch node's java process")
    parser.add_argument("--store", default="http://127.0.0.1:9200")
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--code", action="append", default=[], help="NAME=PATH of a checkout to run (repeatable)")
    args = parser.parse_args()
    code = dict(item.split("=", 1) for item in args.code) or {"ingest": str(ROOT)}
    code = {name: str(Path(path).resolve()) for name, path in code.items()}
    names = ["raw", *code]
    rows: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="bench-nodecpu-") as folder:
        tmp = Path(folder)
        chunk_records(args.corpus, tmp / "records.json")
        try:
            for i in range(args.repeat):
                for name in names if i % 2 == 0 else names[::-1]:
                    row = trial(name, args, code, tmp)
                    rows[name].append(row)
                    wall, node, own, workers = row
                    print(
                        f"{name:8s} wall {wall:6.2f} s  node {node:5.2f} CPU-s  run {own:5.2f}  workers {workers:5.2f}"
                        f"  load {os.getloadavg()[0]:.1f}",
                        flush=True,
                    )
        finally:
            drop(args.store)
    for name in names:
        medians = [statistics.median(row[k] for row in rows[name]) for k in range(4)]
        wall, node, own, workers = medians
        print(f"{name:8s} median wall {wall:.2f}  node {node:.2f}  run {own:.2f}  workers {workers:.2f}")


if __name__ == "__main__":
    main()
