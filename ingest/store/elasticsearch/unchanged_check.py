"""The no-op check of an incremental run against Elasticsearch, made before the client is imported.

Importing the ``elasticsearch`` package costs about as much as the whole no-op ceiling (``ingest
--version`` plus hashing the folder). An unchanged run writes nothing but its lock, so this check makes
the reads such a run makes, over plain HTTP with the standard library's ``http.client`` (importing
urllib3 alone would cost a fifth of such a run), and decides with the pure rules the full path uses
(:mod:`.layout_rules`, ``ingest.plan``, ``ingest.journal``, ``ingest.run_meta``): the cluster answers;
the layout is recorded and the access reconcile would change nothing; no lock is held; no journal is
pending; ``[roles]``, the analysis and the chunk settings are the recorded ones; the folder's listing
and hashes are all vouched for by the last run's memo; the plan writes and removes nothing and the
end-of-run meta equals the recorded one.
Then it returns the RunResult the full path would have returned (same counts, problems, plan items).

Any doubt returns None and the caller runs the full path, which then says what it says today: an
unexpected status, a TLS or authentication failure, a timeout, an undecodable answer, an option this
check does not replicate (cloud ID, a pinned fingerprint, ``--no-verify-certs``, credentials or a path in
the URL, ``--full``, ``--dry-run``, ``--strict``, ``--accept-edits``), anything changed.

TLS is verified as the client's urllib3 node does (elastic_transport): the default context (the system's
trust store) plus the CA file of ES_CA_CERTS, else certifi's bundle, certificates required, TLS 1.2 or
newer, the host name checked (an IP address against the certificate's IP addresses); authentication
sends the client's header. A pinned fingerprint and --no-verify-certs are left to the client.

Races, without the lock: the lock document and the run metadata are read first and again after the
records (as a run reads them under its lock). A run that holds the lock at either read makes this a
fallback. A run that wrote anything between the two reads recorded its journal in the metadata first,
which changes the metadata's ``_seq_no`` (a ``--full`` also re-records the layout): fallback. A run
that starts after the second read plays the part of a run after this one. So a no-op is only reported
for a state no run was changing while it was read.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ingest import run_meta
from ingest.api import RunOptions
from ingest.config import ConnectionConfig, without_credentials
from ingest.corpus import FolderAhead, ScanMemo, scan_corpus
from ingest.journal import WITHDRAWN_ACCESS, read_journal, read_tombstones, repaired_counts, scan_memo
from ingest.model import Chunk, DocumentRecord
from ingest.plan import plan_sync, with_corpus_limits
from ingest.run_result import RunResult
from ingest.settings import ChunkSettings, Settings
from ingest.store.elasticsearch.layout_rules import (
    LAYOUT_ID,
    LOCK_ID,
    META_ID,
    Layout,
    alias_names,
    alias_plan,
    analyzer_for,
    closed_indices,
    foreign_names,
    found_or_absent,
    layout_of,
    mapping_problems,
    meta_mapping_complete,
    missing_label_indices,
    survey_targets,
)
from ingest.store.elasticsearch.names import IndexNames, check_names
from ingest.store.records import record_of

CHECK_TIMEOUT_S = 10.0  # per request: a slow cluster is left to the full path and its own deadlines
RECORDS_PAGE = 5000  # as transport.RECORDS_PAGE: the same pages as the full path's read of the records
RECORDS_SORT = [{"doc_id": "asc"}, {"version": "asc"}]


class _Doubt(Exception):
    """Anything this check cannot vouch for: the full path decides."""


def unchanged_run(
    corpus: Path,
    connection: ConnectionConfig,
    settings: Settings,
    chunking: ChunkSettings,
    options: RunOptions,
    ahead: FolderAhead,
) -> RunResult | None:
    """The RunResult of an unchanged incremental run, or None (then run the full path; always with
    INGEST_NO_FAST_NOOP=1). ``ahead``: the folder's listing and hashes, put back whenever this returns None."""
    if options.full or options.dry_run or options.accept_edits or options.strict:
        return None
    if os.environ.get("INGEST_NO_FAST_NOOP") == "1" or not _replicable(connection):
        return None
    started = time.perf_counter()  # as pipeline.run's: before the folder's hashes are waited for
    try:
        http = _Http(connection)
        try:
            # The store is read while the folder is still being hashed in its thread: the waits for the
            # node's answers overlap the hashing, which is only waited for once the plan needs it.
            read = _check(http, connection, settings)
        finally:
            http.close()
    except Exception:  # noqa: BLE001 - any doubt at all: the full path runs and reports as it always did
        read = None
    if read is None:
        return None
    result = _plan_or_none(corpus, connection, settings, chunking, ahead, read)
    if result is not None:
        result.elapsed_s = time.perf_counter() - started
    return result


def _plan_or_none(
    corpus: Path,
    connection: ConnectionConfig,
    settings: Settings,
    chunking: ChunkSettings,
    ahead: FolderAhead,
    read: tuple[list[DocumentRecord], Mapping[str, str], str],
) -> RunResult | None:
    """The plan from the store's reads and the folder's hashes (waited for here); None: the full path
    runs, and finds the folder's hashes put back."""
    stored, meta, analyzer = read
    try:
        memo = scan_memo(meta, stored)  # made while the folder may still be hashed
    except Exception:  # noqa: BLE001 - as above
        return None
    found = None if memo is None else ahead.take()
    if memo is None or found is None:
        return None
    try:
        ahead.give_back(found)  # taken by the scan
        result = _plan_without_writes(corpus, connection, settings, chunking, ahead, memo, stored, meta, analyzer)
    except Exception:  # noqa: BLE001 - as above
        result = None
    if result is None:
        ahead.give_back(found)
    return result


def _replicable(connection: ConnectionConfig) -> bool:
    """Options this check reproduces exactly (anything else is left to the client)."""
    if connection.kind != "elasticsearch" or connection.cloud_id or not connection.url:
        return False
    if connection.ssl_assert_fingerprint or not connection.verify_certs:
        return False
    parts = urlsplit(connection.url)
    if parts.scheme not in ("http", "https") or parts.username or parts.password or parts.query or parts.fragment:
        return False
    if parts.path not in ("", "/") or parts.hostname is None or parts.port is None:
        return False
    # A CA file is loaded only over https (a bad one fails there and falls back); over http the client
    # checks it and names a missing or broken one (exit 2), so it decides.
    return not (connection.ca_certs and (parts.scheme == "http" or not os.path.isfile(connection.ca_certs)))


class _Http:
    """One keep-alive connection (``http.client``: the stdlib, no redirects, no retries, no proxy) with the
    client's TLS verification and authentication header."""

    def __init__(self, connection: ConnectionConfig) -> None:
        parts = urlsplit(connection.url)
        host, port = str(parts.hostname), int(parts.port or 0)
        timeout = min(connection.timeout or CHECK_TIMEOUT_S, CHECK_TIMEOUT_S)
        self.headers = {"content-type": "application/json", "accept": "application/json"}
        if connection.api_key:
            self.headers["authorization"] = f"ApiKey {connection.api_key}"
        elif connection.username:
            pair = f"{connection.username}:{connection.password or ''}".encode("ascii")  # as the client: else fallback
            self.headers["authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        self.conn: http.client.HTTPConnection
        if parts.scheme == "https":
            context = _tls_context(connection.ca_certs or _default_ca_certs())
            self.conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
        else:
            self.conn = http.client.HTTPConnection(host, port, timeout=timeout)

    def call(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200,)) -> tuple[int, Any]:
        """(status, decoded JSON) of one request; any other status, or an answer that is not JSON: _Doubt."""
        data = None if body is None else json.dumps(body).encode()
        self.conn.request(method, path, body=data, headers=self.headers)
        response = self.conn.getresponse()
        answer = response.read()
        if response.status not in ok:
            raise _Doubt(f"{method} {path}: {response.status}")
        return response.status, json.loads(answer) if answer else None

    def close(self) -> None:
        self.conn.close()


def _tls_context(ca_certs: str) -> ssl.SSLContext:
    """What elastic_transport's urllib3 node verifies with verify_certs=True and no ssl_version: the
    default context (the system's trust store) plus ``ca_certs``, certificates required, TLS 1.2 or newer,
    the host name checked (an IP address against the certificate's IP addresses: urllib3 does it itself
    for the client, OpenSSL here), SSLKEYLOGFILE honoured."""
    ctx = ssl.create_default_context()
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.check_hostname = True
    keylog = os.environ.get("SSLKEYLOGFILE", "")
    if keylog and hasattr(ctx, "keylog_filename"):
        ctx.keylog_filename = keylog
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_verify_locations(ca_certs)
    return ctx


def _default_ca_certs() -> str:
    """The bundle elastic_transport trusts when no CA file is given: certifi's (else no check here)."""
    try:
        import certifi
    except ImportError:
        raise _Doubt("no certifi: the client's own error decides") from None
    return str(certifi.where())


def _check(
    http: _Http, connection: ConnectionConfig, settings: Settings
) -> tuple[list[DocumentRecord], Mapping[str, str], str] | None:
    """The reads of an unchanged run, in its order: (records, run metadata, analyzer) when they leave
    nothing to repair or reconcile, else None."""
    names = IndexNames(connection.index_prefix)
    check_names(connection.index_prefix, settings)
    analyzer = connection.analyzer or analyzer_for(settings)
    http.call("GET", "/_cluster/health", ok=(200, 403))  # 403: a key without `monitor`, as store.check() allows
    first = _meta_documents(http, names)
    layout, meta = first["layout"], first["meta"]
    if not _access_unchanged(http, names, layout, settings, analyzer):
        return None
    if meta.get("analysis") != analyzer or read_journal(meta) != set():
        return None  # a rebuild, a pending journal (a killed run) or a store older than the journal
    if run_meta.meta_differs(meta, run_meta.roles_record(settings)):
        return None
    targets = f"{names.all_alias},{names.documents_alias}"
    http.call("POST", f"/{targets}/_refresh?ignore_unavailable=true&allow_no_indices=true")
    stored = _records(http, names.documents_alias)
    if not stored:
        return None  # no record: an empty store, or its records lost (pipeline.records_missing rebuilds)
    if _meta_documents(http, names)["versions"] != first["versions"]:
        return None  # a run wrote the metadata or the layout meanwhile
    return stored, meta, analyzer


def _meta_documents(http: _Http, names: IndexNames) -> dict[str, Any]:
    """The layout, the run metadata and the lock in one ``_mget``: layout and metadata found, no lock."""
    _, answer = http.call("POST", f"/{names.meta_index}/_mget", {"ids": [LAYOUT_ID, META_ID, LOCK_ID]})
    docs = {doc.get("_id"): doc for doc in answer.get("docs", [])}
    if set(docs) != {LAYOUT_ID, META_ID, LOCK_ID} or not all(found_or_absent(doc) for doc in docs.values()):
        raise _Doubt("an answer about a meta document that is neither found nor absent")
    if docs[LOCK_ID].get("found") or not docs[LAYOUT_ID].get("found") or not docs[META_ID].get("found"):
        raise _Doubt("a lock held, or no layout or metadata recorded")
    versions = [(docs[i]["_seq_no"], docs[i]["_primary_term"]) for i in (LAYOUT_ID, META_ID)]
    meta = docs[META_ID]["_source"].get("values") or {}
    if not meta or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise _Doubt("run metadata of another shape")
    return {"layout": layout_of(docs[LAYOUT_ID]), "meta": meta, "versions": versions}


def _access_unchanged(http: _Http, names: IndexNames, layout: Layout, settings: Settings, analyzer: str) -> bool:
    """The access reconcile of a run (ElasticsearchStore.reconcile_access), deciding "nothing to change"
    from the same survey: no foreign index under our names, the meta index's mapping complete, no
    mapping drift, no live index missing or closed, no alias action, and no index of the prefix outside
    the live build (the lock would drop an abandoned one)."""
    roles = settings.roles
    if not layout.documents or layout.filling:
        return False  # nothing built, or indices a killed run left with refresh off (the lock restores it)
    targets = ",".join(survey_targets(names, layout, roles))
    _, found = http.call("GET", f"/{targets}?features=aliases,mappings,settings&ignore_unavailable=true")
    if not isinstance(found, dict) or foreign_names(alias_names(names, roles), found):
        return False
    if missing_label_indices(layout, found) or closed_indices(layout, found):
        return False  # deleted or closed outside ingest: the full path recreates it, or says what to do
    meta_index = found.get(names.meta_index)
    if meta_index is None or not meta_mapping_complete(meta_index, analyzer):
        return False
    if mapping_problems(layout, analyzer, found) or set(layout.owned) - set(layout.live):
        return False  # an index outside the live build: the lock may drop it (abandoned_builds)
    actions, _ = alias_plan(names, layout, roles, check=False, specs=found)
    return not actions


def _records(http: _Http, documents_alias: str) -> list[DocumentRecord]:
    """Every document record, in the full path's pages and order (ElasticsearchStore.documents)."""
    records: list[DocumentRecord] = []
    after: list[Any] | None = None
    while True:
        body: dict[str, Any] = {"query": {"match_all": {}}, "size": RECORDS_PAGE, "sort": RECORDS_SORT}
        body |= {"_source": True, "track_total_hits": False}
        if after is not None:
            body["search_after"] = after
        _, resp = http.call("POST", f"/{documents_alias}/_search", body)
        shards = resp.get("_shards") or {}
        if shards.get("failed") or resp.get("timed_out"):
            raise _Doubt("a shard failed")
        hits = resp["hits"]["hits"]
        records += [record_of(hit["_source"]) for hit in hits]  # as DocumentRecord.from_json
        if len(hits) < RECORDS_PAGE:
            return records
        after = hits[-1]["sort"]


def _no_chunks_read(_record: DocumentRecord) -> list[Chunk]:
    raise _Doubt("the plan reads stored chunks: not an unchanged run")


def _plan_without_writes(
    corpus: Path,
    connection: ConnectionConfig,
    settings: Settings,
    chunking: ChunkSettings,
    ahead: FolderAhead,
    memo: ScanMemo,
    stored: list[DocumentRecord],
    meta: Mapping[str, str],
    analyzer: str,
) -> RunResult | None:
    """pipeline._locked_run's scan and plan with nothing to repair, from the memo alone (no file parsed):
    its RunResult when the plan writes and removes nothing and the end-of-run meta is the recorded one."""
    chunking = with_corpus_limits(chunking, settings.chunking)  # as pipeline.run
    if not stored:
        return None
    known = {r.source_sha256 for r in stored}
    scan = scan_corpus(corpus, settings, skip_body=known, memo=memo, ahead=ahead, memo_only=True)
    if scan.seen == 0:
        return None  # the full path refuses to empty the store (or empties it with --allow-empty)
    plan = plan_sync(
        scan,
        stored,
        chunking,
        tombstones=read_tombstones(meta),
        stored_chunks=_no_chunks_read,
        withdrawn_access=read_tombstones(meta, WITHDRAWN_ACCESS),
    )
    if plan.to_write or plan.to_remove or plan.withdrawn:
        return None
    name = without_credentials(connection.url.rstrip("/"))  # ElasticsearchStore.name
    result = RunResult(name, plan, scan.seen, repaired=repaired_counts(), defaulted_access=scan.defaulted_access)
    result.total = run_meta.total_after(stored, plan)
    if run_meta.meta_differs(meta, run_meta.end_of_run_meta(settings, chunking, analyzer, scan, result)):
        return None
    return result
