"""A real 3-node Elasticsearch cluster that loses a data node (SIGKILL) in the middle of a run.

Opt-in: runs only when INGEST_TEST_ES_CLUSTER_URL names a cluster of at least 3 nodes started by
scripts/elasticsearch-local, and INGEST_TEST_ES_CLUSTER_STATE its state file (to bring the killed
node back):

    export INGEST_TEST_ES_CLUSTER_STATE=/tmp/ingest-cluster.state
    export INGEST_TEST_ES_CLUSTER_URL=$(INGEST_ES_NODES=3 INGEST_ES_PORT=9500 INGEST_ES_HEAP=384m \\
        INGEST_ES_STATE=$INGEST_TEST_ES_CLUSTER_STATE scripts/elasticsearch-local start)
    .venv/bin/python -m pytest -q tests/test_cluster_elasticsearch.py
    INGEST_ES_STATE=$INGEST_TEST_ES_CLUSTER_STATE scripts/elasticsearch-local stop

What a user relies on: a run that loses a node still completes with nothing lost (`ingest verify`
clean; document and chunk counts equal a clean build of the same folder), and searches through
the role aliases keep answering while the node is gone.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INGEST = str(Path(sys.executable).parent / "ingest")
CLUSTER_URL = os.environ.get("INGEST_TEST_ES_CLUSTER_URL", "").rstrip("/")
CLUSTER_STATE = os.environ.get("INGEST_TEST_ES_CLUSTER_STATE", "")

pytestmark = [
    pytest.mark.elasticsearch,
    pytest.mark.skipif(
        not (CLUSTER_URL and CLUSTER_STATE),
        reason="cluster tests are opt-in: set INGEST_TEST_ES_CLUSTER_URL and INGEST_TEST_ES_CLUSTER_STATE to a "
        "3-node cluster from `INGEST_ES_NODES=3 INGEST_ES_PORT=9500 INGEST_ES_STATE=... scripts/elasticsearch-local start`",
    ),
]

WORDS = ("anchor hull keel rudder mast sail bow stern deck cabin galley bilge winch cleat halyard sheet "
         "boom tiller compass chart beacon buoy harbour mooring tide current swell gust squall ballast").split()
ACCESS = ("public", "partner", "staff")
RUN_TIMEOUT_S = float(os.environ.get("INGEST_TEST_CLUSTER_RUN_TIMEOUT", "300"))  # a run that loses a node must still end


def write_corpus(root: Path, docs: int, sections: int, *, salt: str = "", version: str = "1") -> Path:
    """Markdown documents of ``sections`` one-chunk sections each (chunking.size 40)."""
    (root / "documents").mkdir(parents=True, exist_ok=True)
    (root / "ingest.toml").write_text(
        '[access]\nlabels = ["public", "partner", "staff"]\n\n'
        '[roles]\npublic = ["public"]\npartner = ["public", "partner"]\nstaff = ["public", "partner", "staff"]\n\n'
        '[chunking]\nchunker = "structure"\nsize = 40\n'
    )
    for d in range(docs):
        write_doc(root, d, sections, salt=salt, version=version)
    return root


def write_doc(root: Path, d: int, sections: int, *, salt: str = "", version: str = "1") -> None:
    rng = random.Random(f"{d}{salt}")
    lines = ["---", f"doc_id: cluster-{d:04d}", f'version: "{version}"', f'title: "Cluster doc {d}"',
             f"access: {ACCESS[d % 3]}", "---", ""]
    for s in range(sections):
        lines += [f"## Part {s}", "", " ".join(rng.choice(WORDS) for _ in range(28)).capitalize() + ".", ""]
    (root / "documents" / f"doc-{d:04d}.md").write_text("\n".join(lines))


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([INGEST, *args], capture_output=True, text=True)
    if check:
        assert done.returncode == 0, f"ingest {' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


def totals(store: str, prefix: str) -> dict:
    return json.loads(cli("stats", "--store", store, "--index-prefix", prefix, "--json").stdout)["totals"]


@pytest.fixture(scope="module")
def es():
    from elasticsearch import Elasticsearch

    client = Elasticsearch(CLUSTER_URL, request_timeout=60)
    health = client.cluster.health(wait_for_status="green", timeout="120s")
    if health["number_of_nodes"] < 3:
        pytest.skip(f"INGEST_TEST_ES_CLUSTER_URL={CLUSTER_URL} has {health['number_of_nodes']} nodes, not 3")
    yield client
    client.close()


@pytest.fixture
def prefix(es):
    name = f"cl-{uuid.uuid4().hex[:10]}"
    yield name
    es.indices.delete(index=f"{name}-*", expand_wildcards="all", ignore_unavailable=True, allow_no_indices=True)


def restart_killed_nodes(es) -> None:
    env = dict(os.environ, INGEST_ES_STATE=CLUSTER_STATE)
    subprocess.run([str(ROOT / "scripts" / "elasticsearch-local"), "start"], env=env, check=True, capture_output=True)
    es.cluster.health(wait_for_nodes="3", wait_for_status="green", timeout="180s")


def chunk_writes(es, prefix: str) -> int:
    try:
        stats = es.indices.stats(index=f"{prefix}-chunks_*", metric="indexing")
    except Exception:  # noqa: BLE001 - the indices do not exist yet
        return 0
    return stats["_all"]["primaries"].get("indexing", {}).get("index_total", 0)


def victim(es, prefix: str) -> tuple[str, int]:
    """A node other than the one the client talks to, preferring one holding a primary of ours."""
    port = int(CLUSTER_URL.rsplit(":", 1)[1])
    nodes = es.nodes.info(metric="process,http")["nodes"]
    others = {n["name"]: n["process"]["id"] for n in nodes.values() if not n["http"]["publish_address"].endswith(f":{port}")}
    shards = es.cat.shards(index=f"{prefix}-chunks_*", format="json", h="prirep,node")
    for shard in shards:
        if shard["prirep"] == "p" and shard.get("node") in others:
            return shard["node"], others[shard["node"]]
    name = sorted(others)[0]
    return name, others[name]


def run_killing_a_node(es, corpus: Path, prefix: str, *extra: str) -> tuple[subprocess.CompletedProcess, str, dict]:
    """`ingest run` in a subprocess; once chunks are being written, SIGKILL a data node; meanwhile
    search the public role alias every 0.2 s. Returns the run, the killed node, search outcomes."""
    searches = {"answered": 0, "failed": 0, "shard_failures": 0, "errors": []}
    stop = threading.Event()

    def search_loop() -> None:
        from elasticsearch import Elasticsearch

        client = Elasticsearch(CLUSTER_URL, request_timeout=10)
        while not stop.wait(0.2):
            try:
                answer = client.search(index=f"{prefix}-chunks-public", query={"match": {"text": "anchor harbour"}}, size=5)
                searches["answered"] += 1
                searches["shard_failures"] += answer["_shards"].get("failed", 0)
            except Exception as exc:  # noqa: BLE001 - index not there yet counts separately below
                if "index_not_found" not in str(exc):
                    searches["failed"] += 1
                    searches["errors"].append(str(exc)[:200])
        client.close()

    started = time.monotonic()
    proc = subprocess.Popen([INGEST, "run", str(corpus), "--store", CLUSTER_URL, "--index-prefix", prefix, "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    searcher = threading.Thread(target=search_loop, daemon=True)
    searcher.start()
    deadline = time.monotonic() + 300
    while chunk_writes(es, prefix) < 200 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, "the run ended before a node could be killed mid-run: make the corpus bigger"
    name, pid = victim(es, prefix)
    os.kill(pid, signal.SIGKILL)
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        red = [i["index"] for i in es.cat.indices(index=f"{prefix}-*", format="json", h="index,health") if i["health"] == "red"]
        stop.set()
        searcher.join()
        restart_killed_nodes(es)
        pytest.fail(f"`ingest run` still running {RUN_TIMEOUT_S} s after {name} was killed (red indices: {red}; "
                    f"a shard without a replica on the lost node); output:\n{out[-1000:]}\n{err[-1000:]}", pytrace=False)
    searches["run_s"] = round(time.monotonic() - started, 1)
    # A few more searches with the node gone, after the run.
    time.sleep(2)
    stop.set()
    searcher.join()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), name, searches


def clean_reference(tmp_path: Path, corpus: Path) -> dict:
    store = f"sqlite:///{tmp_path / 'reference.sqlite'}"
    cli("run", str(corpus), "--store", store)
    return totals(store, "ref")


def check_nothing_lost(es, corpus: Path, prefix: str, reference: dict, searches: dict, run, killed: str) -> None:
    restart_killed_nodes(es)
    # What happened, for the README's measured outcome (shown by `pytest -rA`).
    print(f"killed {killed}; run exit {run.returncode} after {searches['run_s']} s; searches answered "
          f"{searches['answered']}, failed {searches['failed']}, shard failures {searches['shard_failures']}; "
          f"reference {reference}")
    assert run.returncode == 0, f"the run with {killed} killed did not complete (exit {run.returncode}):\n{run.stdout[-1500:]}\n{run.stderr[-1500:]}"
    verified = cli("verify", str(corpus), "--store", CLUSTER_URL, "--index-prefix", prefix, "--json", check=False)
    assert verified.returncode == 0, f"verify after losing {killed}:\n{verified.stdout[-2000:]}"
    assert totals(CLUSTER_URL, prefix) == reference
    assert searches["failed"] == 0, f"searches through the role alias failed while {killed} was gone: {searches['errors'][:3]}"
    assert searches["answered"] > 0
    hits = json.loads(cli("search", "anchor harbour", "--role", "public", "--as-of", "any",
                          "--store", CLUSTER_URL, "--index-prefix", prefix, "--json").stdout)["hits"]
    assert hits and all(hit["access"] == "public" for hit in hits)


def test_full_build_loses_a_data_node_and_loses_nothing(es, prefix, tmp_path):
    corpus = write_corpus(tmp_path / "corpus", docs=240, sections=50)  # 12,000 chunks
    reference = clean_reference(tmp_path, corpus)
    run, killed, searches = run_killing_a_node(es, corpus, prefix, "--full")
    check_nothing_lost(es, corpus, prefix, reference, searches, run, killed)


def test_incremental_run_loses_a_data_node_and_loses_nothing(es, prefix, tmp_path):
    corpus = write_corpus(tmp_path / "corpus", docs=240, sections=50)
    cli("run", str(corpus), "--store", CLUSTER_URL, "--index-prefix", prefix)
    # A third of the documents get a new version, a few leave the folder.
    for d in range(0, 240, 3):
        write_doc(corpus, d, 50, salt="v2", version="2")
    for d in range(1, 240, 40):
        (corpus / "documents" / f"doc-{d:04d}.md").unlink()
    reference = clean_reference(tmp_path, corpus)
    run, killed, searches = run_killing_a_node(es, corpus, prefix)
    check_nothing_lost(es, corpus, prefix, reference, searches, run, killed)
