"""Where one prefix's data lives: index and alias names, build suffixes, the recorded ownership of
indices, the mappings (package data) with their analyzer, and the aliases each role may read.

See the package docstring (:mod:`ingest.store.elasticsearch`) for the layout and why names cannot clash.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from elasticsearch import ApiError, AuthorizationException, NotFoundError, TransportError

from ingest.resources import load_mapping
from ingest.settings import Settings
from ingest.store.base import StoreConfigError
from ingest.store.elasticsearch.names import AliasPair, IndexNames, build_of, new_build
from ingest.store.elasticsearch.transport import Transport, error_type, reason

# [search] language -> the analyzer of the BM25 text fields (``english`` is built into every full
# distribution and Docker image; the test node gets it from elasticsearch-plugins/english-analysis).
LANGUAGE_ANALYZERS = {"english": "english", "none": "standard"}
DEFAULT_ANALYZER = LANGUAGE_ANALYZERS["english"]
EXACT_FIELD = "exact"  # the unstemmed sub-field; its analyzer is fixed in mappings/*.json
META_ID = "meta"  # meta documents: the run metadata, the write lock, the owned layout
LOCK_ID = "lock"
LAYOUT_ID = "layout"
META_AHEAD_S = 5.0  # the run metadata read along with the layout serves the next get_meta this long


def _found_or_absent(doc: Mapping[str, Any]) -> bool:
    """An ``_mget`` answer about one document that says found or not found (its index missing too)."""
    error = doc.get("error")
    if error is None:
        return "found" in doc
    return isinstance(error, dict) and error.get("type") == "index_not_found_exception"


# (index, alias) pairs; the _aliases API actions that change them.
Actions = list[dict[str, Any]]


def load_index_body(name: str, analyzer: str = DEFAULT_ANALYZER) -> dict[str, Any]:
    """``mappings/{name}.json`` with every BM25 text field's analyzer set to ``analyzer``
    (the ``.exact`` sub-fields keep theirs)."""
    body = load_mapping(name)  # the package copy when installed (ingest/resources.py)
    _set_analyzer(body["mappings"]["properties"], analyzer)
    return body


def _set_analyzer(properties: dict[str, Any], analyzer: str) -> None:
    for name, spec in properties.items():
        if name == EXACT_FIELD:
            continue
        if spec.get("type") == "text":
            spec["analyzer"] = analyzer
        _set_analyzer(spec.get("fields", {}), analyzer)
        _set_analyzer(spec.get("properties", {}), analyzer)


def analyzer_for(settings: Settings) -> str:
    """The analyzer of the BM25 fields that [search] language names (the store's ``analyzer``
    argument, from INGEST_ES_ANALYZER via ingest.config, overrides it)."""
    return LANGUAGE_ANALYZERS[settings.search.language]


def mapping_drift(expected: dict[str, Any], actual: dict[str, Any], path: str = "") -> list[str]:
    """How an index's field types differ from ingest's mapping (missing fields, other types)."""
    problems: list[str] = []
    for name, spec in expected.items():
        found = actual.get(name)
        want = spec.get("type", "object")
        if found is None:
            problems.append(f"field {path}{name} is missing")
            continue
        if found.get("type", "object") != want:
            problems.append(f"field {path}{name} is {found.get('type', 'object')}, ingest expects {want}")
            continue
        problems += mapping_drift(spec.get("fields", {}), found.get("fields", {}), f"{path}{name}.")
        problems += mapping_drift(spec.get("properties", {}), found.get("properties", {}), f"{path}{name}.")
    return problems


@dataclasses.dataclass
class Layout:
    """What one prefix owns (recorded in the meta index, document ``layout``)."""

    chunks: dict[str, str]  # label -> live concrete chunk index
    documents: str  # live documents index
    owned: list[str]  # every concrete index this prefix created (live build, half-built ones)
    roles: list[str]  # roles whose aliases ingest made (so a role dropped from [roles] loses its alias)

    @property
    def live(self) -> list[str]:
        return [*self.chunks.values(), self.documents]


@dataclasses.dataclass
class IndexLayout:
    """Creates, records and checks the indices and aliases of one prefix.

    The meta document ``layout`` records the concrete indices this prefix owns: the live build
    (label -> index, documents index) and every index it created (a half-built rebuild of a
    killed run included). Only recorded indices are ever deleted, created under an alias, or kept
    in one of this prefix's aliases; names are never matched by wildcard, so a prefix that starts
    with another (``kb`` and ``kb-chunks_eu``) can never touch the other's indices.
    ``check_lock`` runs before every change (the store's write-lock check)."""

    t: Transport
    names: IndexNames
    settings: Settings
    analyzer: str
    check_lock: Callable[[], None]
    _analyzer_checked: bool = dataclasses.field(default=False, init=False)
    _meta_mapping_checked: bool = dataclasses.field(default=False, init=False)
    _replicas: int | None = dataclasses.field(default=None, init=False)
    # Indices this process created (empty when created, written since only by this run under its
    # lock): a chunk can be under another label there only if this run put it there.
    created: set[str] = dataclasses.field(default_factory=set, init=False)
    _meta_ahead: tuple[float, dict[str, str]] | None = dataclasses.field(default=None, init=False)

    # --- the recorded layout ---------------------------------------------------------------------
    def read(self, with_meta: bool = False) -> Layout | None:
        """The recorded layout; for a prefix written by an older ingest, the one its aliases
        show (exact names only); None when the prefix holds nothing yet. ``with_meta``: the run
        metadata is read in the same request and kept for the store's next ``get_meta``
        (:meth:`take_meta`): the reads a run makes just before it reads the metadata itself."""
        if with_meta:
            found = self._read_meta_documents()
        else:
            t = self.t
            found = t.call(lambda: t.es.get(index=self.names.meta_index, id=LAYOUT_ID), missing=None)
        if found:
            values = found["_source"]["values"]
            return Layout(
                dict(values["chunks"]), values["documents"], list(values["owned"]), list(values.get("roles", []))
            )
        chunks: dict[str, str] = {}
        documents: list[str] = []
        for index, alias in self.alias_rows([self.names.all_alias, self.names.documents_alias]):
            label = self.names.label_of_index(index)
            if alias == self.names.all_alias and label and (label in self.settings.labels or "_" not in label):
                chunks[label] = index
            elif alias == self.names.documents_alias and self.names.is_documents_index(index):
                documents.append(index)
        if not documents:
            return None
        documents_index = max(documents)
        return Layout(chunks, documents_index, sorted({*chunks.values(), documents_index}), [])

    def _read_meta_documents(self) -> Any:
        """The layout document (None when absent), with the run metadata document read along in
        one ``_mget``. An answer about either document other than found / not found (a shard
        that failed) is read again by single gets, which retry and raise as every read does."""
        t = self.t
        meta_index = self.names.meta_index
        answer: Any = t.call(lambda: t.es.mget(index=meta_index, ids=[LAYOUT_ID, META_ID]).body, missing=None)
        docs = {doc.get("_id"): doc for doc in (answer or {}).get("docs", [])}
        if set(docs) != {LAYOUT_ID, META_ID} or any(not _found_or_absent(doc) for doc in docs.values()):
            self._meta_ahead = None
            return t.call(lambda: t.es.get(index=meta_index, id=LAYOUT_ID), missing=None)
        meta = docs[META_ID]
        self._meta_ahead = (
            time.monotonic(),
            dict(meta["_source"].get("values") or {}) if meta.get("found") else {},
        )
        layout = docs[LAYOUT_ID]
        return layout if layout.get("found") else None

    def take_meta(self) -> dict[str, str] | None:
        """The run metadata the last :meth:`read` fetched along, once, if read within the last
        ``META_AHEAD_S`` seconds and nothing was written or locked since (:meth:`forget_meta`)."""
        ahead, self._meta_ahead = self._meta_ahead, None
        if ahead is None or time.monotonic() - ahead[0] > META_AHEAD_S:
            return None
        return ahead[1]

    def forget_meta(self) -> None:
        self._meta_ahead = None

    def record(self, layout: Layout) -> None:
        self.check_lock()
        document = {"values": dataclasses.asdict(layout)}
        t = self.t
        t.call(lambda: t.es.index(index=self.names.meta_index, id=LAYOUT_ID, document=document, refresh=True))

    def alias_rows(self, names: Sequence[str]) -> list[AliasPair]:
        """(index, alias) for these exact alias names (missing ones are simply absent)."""
        t = self.t
        rows: Any = t.call(
            lambda: t.es.cat.aliases(name=",".join(names), format="json", expand_wildcards="all").body, missing=[]
        )
        return [(row["index"], row["alias"]) for row in rows if row.get("alias") in names]

    def existing(self, indices: Sequence[str]) -> dict[str, set[str]]:
        """Which of these concrete indices exist, with their aliases."""
        if not indices:
            return {}
        found = self._get_alias(indices)
        return {index: set(spec.get("aliases", {})) for index, spec in found.items() if index in indices}

    def survey(self, names: Sequence[str]) -> dict[str, Any]:
        """The aliases and mappings of these indices in one request (an alias name stands for the
        indices behind it; missing names are absent): what the access reconcile of every run needs
        to know of the cluster, instead of one request per question."""
        t = self.t
        targets = ",".join(dict.fromkeys(names))
        found: dict[str, Any] = t.call(
            lambda: t.es.indices.get(index=targets, features=["aliases", "mappings"], ignore_unavailable=True).body,
            missing={},
        )
        return found

    def _get_alias(self, indices: Sequence[str]) -> dict[str, Any]:
        t = self.t
        found: dict[str, Any] = t.call(
            lambda: t.es.indices.get_alias(index=",".join(indices), ignore_unavailable=True).body, missing={}
        )
        return found

    def refuse_foreign_names(self, roles: Iterable[str]) -> None:
        """Concrete indices that carry the names of this prefix's aliases belong to someone else:
        refuse before anything is created or written."""
        n = self.names
        names = [n.all_alias, n.documents_alias, *(n.role_alias(r) for r in roles)]
        self._refuse_foreign(names, self._get_alias(names))

    def _refuse_foreign(self, names: Sequence[str], found: Mapping[str, Any]) -> None:
        """``found``: an answer about ``names`` by index (alias names resolved to their indices)."""
        n = self.names
        foreign = sorted(set(found) & set(names))
        if foreign:
            raise StoreConfigError(
                f"{self.t.where}: {', '.join(foreign)} already exist as indices, where ingest keeps its "
                f"aliases for index prefix {n.prefix!r}; ingest will not write over them. Delete or rename "
                "them, or use another --index-prefix."
            )

    def check_mappings(self, layout: Layout, report: bool = False, found: Mapping[str, Any] | None = None) -> list[str]:
        """Indices changed by hand (e.g. recreated with another mapping) are refused before writing
        (``report``: listed instead). ``found``: the indices' mappings already read (:meth:`survey`)."""
        targets = {index: "chunks" for index in layout.chunks.values()} | {layout.documents: "documents"}
        t = self.t
        if found is None:
            found = t.call(
                lambda: t.es.indices.get_mapping(index=",".join(targets), ignore_unavailable=True).body, missing={}
            )
        problems: list[str] = []
        for index, kind in targets.items():
            expected = load_index_body(kind, self.analyzer)["mappings"]["properties"]
            actual = found.get(index, {}).get("mappings", {}).get("properties", {})
            if index in found:
                drift = sorted(mapping_drift(expected, actual), key=lambda p: p.endswith("is missing"))
                problems += [f"{index}: {p}" for p in drift]
        if problems and not report:
            raise StoreConfigError(
                f"{self.t.where}: indices of prefix {self.names.prefix!r} do not have ingest's mapping "
                f"({'; '.join(problems[:5])}); they were changed outside ingest. Run `ingest run --full` to "
                "rebuild them (the changed build is dropped once the new one is live)."
            )
        return problems

    def _search_body(self, index: str, body: dict[str, Any]) -> Any:
        return self.t.es.search(index=index, body=body).body

    def abandoned_builds(self, layout: Layout) -> list[str]:
        """Indices this prefix recorded as its own that are not the live build and that none of our
        aliases covers: what a killed ``--full`` left half-built (or an old build a switch could not
        drop). Only recorded names, never a wildcard: another prefix's indices are never among them."""
        n = self.names
        ours = {n.all_alias, n.documents_alias, *(n.role_alias(r) for r in (*self.settings.roles, *layout.roles))}
        existing = self.existing([index for index in layout.owned if index not in layout.live])
        return sorted(index for index, aliases in existing.items() if not aliases & ours)

    def drop_abandoned_builds(self) -> list[str]:
        """Delete :meth:`abandoned_builds` and forget them; only under the run's write lock (a
        ``--full`` in progress holds that lock, so its build is never taken for an abandoned one)."""
        layout = self.read(with_meta=True)  # the run reads its metadata next, under the same lock
        if layout is None or not layout.documents:
            return []
        dropped = self.abandoned_builds(layout)
        if not dropped:
            return []
        self.check_lock()
        t = self.t
        t.call(lambda: t.es.indices.delete(index=",".join(dropped), ignore_unavailable=True))
        self.record(dataclasses.replace(layout, owned=sorted(set(layout.owned) - set(dropped))))
        return dropped

    # --- making it so ----------------------------------------------------------------------------
    def ensure(self) -> Layout:
        """Create the meta index, the label and documents indices and every alias if missing;
        add indices for new labels and re-point role aliases when ingest.toml changed."""
        self.t.call(self.ensure_meta_index)
        self.refuse_foreign_names(self.settings.roles)
        layout = self.read() or Layout({}, "", [], [])
        if not layout.documents or set(self.settings.labels) - set(layout.chunks):
            self.check_analyzer()  # before anything is created with it
        if not layout.documents:  # nothing live yet (or only a first --full that was killed)
            layout.documents = self.names.documents_index(new_build())
        build = build_of(layout.documents)
        for label in self.settings.labels:
            layout.chunks.setdefault(label, self.names.chunk_index(label, build))
        layout.owned = sorted({*layout.owned, *layout.live})
        layout.roles = sorted({*layout.roles, *self.settings.roles})
        self.record(layout)  # recorded before created: a killed run leaves only owned names
        existing = self.existing(layout.live)
        for index in layout.live:
            if index not in existing:
                self.create_index(index, "documents" if index == layout.documents else "chunks")
        self.check_mappings(layout)
        self.apply(self.access_plan(layout, self.settings.roles, check=False)[0])
        return layout

    def apply(self, actions: Actions) -> None:
        """Change the aliases in one atomic call (nothing when there is nothing to change)."""
        if actions:
            self.check_lock()
            t = self.t
            t.call(lambda: t.es.indices.update_aliases(actions=actions))

    def reconcile_access(
        self, roles: Mapping[str, Sequence[str]] | None = None, *, check: bool = False, full: bool = False
    ) -> list[str]:
        """See :meth:`ingest.store.base.RunTarget.reconcile_access`. Creates nothing; refused
        (StoreConfigError) before anything is read or written: concrete indices under our alias
        names, and, unless ``full`` (a rebuild replaces the live build), live indices whose mapping
        was changed by hand (``check`` lists those instead)."""
        roles = self.settings.roles if roles is None else roles
        layout = self.read(with_meta=True)  # a run reads its metadata next (the roles it records)
        n = self.names
        names = [n.all_alias, n.documents_alias, *(n.role_alias(r) for r in roles)]
        owned = [*layout.owned, *layout.live] if layout is not None else []
        made = [n.role_alias(r) for r in layout.roles] if layout is not None else []  # roles ingest made
        found = self.survey([*names, *made, *owned, n.meta_index])
        self._refuse_foreign(names, found)
        self._check_meta_mapping(found)
        if layout is None or not layout.documents:
            return []
        drift = [] if full else self.check_mappings(layout, report=check, found=found)
        actions, changes = self.access_plan(layout, roles, check=check, specs=found)
        changes += [f"mapping changed outside ingest: {problem}" for problem in drift]
        if check:
            changes += self.misplaced_chunks(layout)
            changes += [
                f"{index} is an index of prefix {self.names.prefix!r} outside the live build (left by a killed "
                "`ingest run --full`, or one in progress): the next run deletes it"
                for index in self.abandoned_builds(layout)
            ]
        else:
            self.apply(actions)
        return changes

    def misplaced_chunks(self, layout: Layout) -> list[str]:
        """Label indices holding chunks of another access label (ingest never writes one there: a
        copy made outside ingest, e.g. a mis-routed reindex or restore). The role aliases' filters
        keep them from readers of that label; they are reported so that someone removes them."""
        t = self.t
        found: list[str] = []
        for label, index in sorted(layout.chunks.items()):
            body = {
                "query": {"bool": {"must_not": {"term": {"access": label}}}},
                "size": 3,
                "track_total_hits": True,
                "_source": ["chunk_id", "access"],
                "sort": [{"chunk_id": "asc"}],
            }
            resp: Any = t.call(partial(self._search_body, index, body), missing=None)
            total = resp["hits"]["total"]["value"] if resp else 0
            if total:
                examples = ", ".join(
                    f"{h['_source'].get('chunk_id', h['_id'])} (access {h['_source'].get('access')!r})"
                    for h in resp["hits"]["hits"]
                )
                found.append(
                    f"{index} (access label {label!r}) holds {total} chunk(s) of another access label, e.g. "
                    f"{examples}: copied there outside ingest; delete them from {index}"
                )
        return found

    def access_plan(
        self,
        layout: Layout,
        roles: Mapping[str, Sequence[str]],
        check: bool,
        specs: Mapping[str, Any] | None = None,
    ) -> tuple[Actions, list[str]]:
        """The _aliases actions that make the aliases match ``layout`` and ``roles``, and what each does.
        ``specs``: a :meth:`survey` of the owned indices and of every alias name of ``ours`` below
        (which lists every index behind those aliases, closed and hidden ones too)."""
        n = self.names
        role_prefix = f"{n.all_alias}-"
        ours = {n.all_alias, n.documents_alias, *(n.role_alias(r) for r in (*roles, *layout.roles))}
        surveyed = specs is not None
        if specs is None:
            specs = self._get_alias(layout.owned) if layout.owned else {}
        owned = {index: set(spec.get("aliases", {})) for index, spec in specs.items() if index in layout.owned}
        current = {
            (index, alias)
            for index, aliases in owned.items()
            for alias in aliases
            if alias in ours or alias.startswith(role_prefix)
        }
        if surveyed:
            current |= {
                (index, alias) for index, spec in specs.items() for alias in spec.get("aliases", {}) if alias in ours
            }
        else:
            current |= set(self.alias_rows(sorted(ours)))
        desired = {pair for pair in n.desired_aliases(layout.chunks, layout.documents, roles) if pair[0] in owned}
        actions: Actions = []
        changes: list[str] = []
        for index, alias in sorted(current - desired):
            why = self._why_removed(index, alias, layout, owned, roles)
            actions.append({"remove": {"index": index, "alias": alias, "must_exist": False}})
            changes.append(
                f"alias {alias} covers {index} ({why})" if check else f"removed {index} from alias {alias} ({why})"
            )
        for index, alias in sorted(desired - current):
            actions.append(self._add(index, alias, roles))
            changes.append(f"alias {alias} lacks {index}" if check else f"added {index} to alias {alias}")
        for index, alias in sorted(desired & current):
            # A role alias without its access filter (made by an older ingest, or changed by hand):
            # adding it again replaces its filter.
            want = n.alias_filter(alias, roles)
            have = specs.get(index, {}).get("aliases", {}).get(alias, {}).get("filter")
            if want != have:
                actions.append(self._add(index, alias, roles))
                labels = ", ".join(want["terms"]["access"]) if want else "none"
                changes.append(
                    f"alias {alias} on {index} lacks its access filter (labels: {labels})"
                    if check
                    else f"set the access filter of alias {alias} on {index} (labels: {labels})"
                )
        return actions, changes

    def _add(self, index: str, alias: str, roles: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        action: dict[str, Any] = {"index": index, "alias": alias}
        found = self.names.alias_filter(alias, roles)
        if found is not None:
            action["filter"] = found
        return {"add": action}

    def _why_removed(
        self, index: str, alias: str, layout: Layout, owned: Mapping[str, Any], roles: Mapping[str, Sequence[str]]
    ) -> str:
        role_prefix = f"{self.names.all_alias}-"
        role = alias[len(role_prefix) :] if alias.startswith(role_prefix) else None
        if index not in owned:
            return f"{index} is not an index of prefix {self.names.prefix!r}"
        if index not in layout.live:
            return "not the live build"
        if role is not None and role not in roles:
            return f"role {role!r} is not in [roles]"
        if role is not None:
            return f"[roles] does not let {role!r} read {self.names.label_of_index(index)!r}"
        return "not part of this layout"

    # --- indices and the analyzer ----------------------------------------------------------------
    def check_analyzer(self) -> None:
        """Refuse a cluster without the analyzer (never index with another one)."""
        if self._analyzer_checked:
            return
        try:
            self.t.es.indices.analyze(analyzer=self.analyzer, text="ingest")
        except AuthorizationException:
            return  # may not call _analyze: index creation below names a missing analyzer too
        except ApiError as exc:
            if exc.meta.status == 400:
                raise self._missing_analyzer(exc) from None
            raise self.t.unavailable(exc) from None
        except TransportError as exc:
            raise self.t.unavailable(exc) from None
        self._analyzer_checked = True

    def _missing_analyzer(self, exc: ApiError) -> StoreConfigError:
        hint = (
            'set [search] language = "none" in ingest.toml for the standard analyzer'
            if self.analyzer == analyzer_for(self.settings)
            else "unset INGEST_ES_ANALYZER or name an analyzer the cluster has"
        )
        return StoreConfigError(
            f"{self.t.where} has no analyzer {self.analyzer!r} ({reason(exc)}): "
            f"refusing to index with another one. Use a distribution that includes it (every full "
            f"distribution and Docker image has 'english'; scripts/elasticsearch-local installs it), or {hint}"
        )

    def replicas(self) -> int:
        """Replicas for a new index: 1 on a cluster with two or more data nodes (a lost node loses
        no data), 0 on a single node (a replica could never be placed: the cluster would stay yellow)."""
        if self._replicas is None:
            t = self.t
            health = t.call(lambda: t.es.cluster.health())
            self._replicas = 1 if int(health.get("number_of_data_nodes", 1)) >= 2 else 0
        return self._replicas

    def create_index(self, index: str, kind: str, extra_settings: dict[str, Any] | None = None) -> None:
        """Create one index from ingest's mapping (one that already exists is left as it is)."""
        body = load_index_body(kind, self.analyzer)
        body["settings"]["index"].setdefault("number_of_replicas", self.replicas())
        if extra_settings:
            body["settings"]["index"].update(extra_settings)

        def create() -> None:
            try:
                self.t.es.indices.create(index=index, settings=body["settings"], mappings=body["mappings"])
            except ApiError as exc:
                if error_type(exc) == "mapper_parsing_exception" and "analyzer" in reason(exc):
                    raise self._missing_analyzer(exc) from None
                if error_type(exc) != "resource_already_exists_exception":
                    raise
                return
            self.created.add(index)

        self.t.call(create)

    def ensure_meta_index(self) -> None:
        if self._meta_mapping_checked:
            return
        meta_index = self.names.meta_index
        # One read of its mapping says both whether it exists and whether it lacks a field; the
        # mapping is written only when it must be (a put_mapping is a cluster-state update, and
        # every run, an unchanged one included, passes here).
        try:
            found: dict[str, Any] = self.t.es.indices.get_mapping(index=meta_index).body
        except NotFoundError:
            self.check_analyzer()  # a new store: refuse before creating anything
            self.create_index(meta_index, "meta")
            self._meta_mapping_checked = True
            return
        if not self._meta_mapping_complete(next(iter(found.values()), {})):
            # A meta index from an older ingest: add the fields it lacks (adding is always allowed).
            expected = load_index_body("meta", self.analyzer)["mappings"]["properties"]
            self.t.es.indices.put_mapping(index=meta_index, properties=expected)
        self._meta_mapping_checked = True

    def _meta_mapping_complete(self, index: Mapping[str, Any]) -> bool:
        expected = load_index_body("meta", self.analyzer)["mappings"]["properties"]
        return not set(expected) - set(index.get("mappings", {}).get("properties", {}))

    def _check_meta_mapping(self, found: Mapping[str, Any]) -> None:
        """The meta index's mapping, read along by :meth:`survey`: when it has every field, the
        lock need not read it again (an older one is completed by ``ensure_meta_index``)."""
        meta = found.get(self.names.meta_index)
        if meta is not None and self._meta_mapping_complete(meta):
            self._meta_mapping_checked = True
