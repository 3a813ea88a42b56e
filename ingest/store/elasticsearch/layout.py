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

from ingest.settings import Settings
from ingest.store.base import StoreConfigError, StoreError
from ingest.store.elasticsearch.layout_rules import DEFAULT_ANALYZER as DEFAULT_ANALYZER
from ingest.store.elasticsearch.layout_rules import EXACT_FIELD as EXACT_FIELD
from ingest.store.elasticsearch.layout_rules import LANGUAGE_ANALYZERS as LANGUAGE_ANALYZERS
from ingest.store.elasticsearch.layout_rules import (
    LAYOUT_ID,
    META_ID,
    Actions,
    Layout,
    alias_names,
    alias_plan,
    analyzer_for,
    applicable_on_closed,
    closed_indices,
    closed_message,
    foreign_names,
    found_or_absent,
    layout_of,
    load_index_body,
    mapping_problems,
    meta_mapping_complete,
    missing_label_indices,
    our_aliases,
    survey_targets,
)
from ingest.store.elasticsearch.layout_rules import LOCK_ID as LOCK_ID
from ingest.store.elasticsearch.layout_rules import mapping_drift as mapping_drift
from ingest.store.elasticsearch.names import AliasPair, IndexNames, build_of, new_build
from ingest.store.elasticsearch.transport import Transport, error_type, reason

# Indices being filled: no periodic refresh (a refresh a second per index, each making a small segment
# to merge, cost the node a quarter of a first build's CPU); the run refreshes once at its end.
FILL_SETTINGS: dict[str, object] = {"refresh_interval": "-1"}
META_AHEAD_S = 5.0  # the run metadata read along with the layout serves the next get_meta this long


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
    # Indices this process created with refresh off (FILL_SETTINGS), to give back at the run's end.
    filled: set[str] = dataclasses.field(default_factory=set, init=False)

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
            return layout_of(found)
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
        if set(docs) != {LAYOUT_ID, META_ID} or any(not found_or_absent(doc) for doc in docs.values()):
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
        """The aliases, mappings and settings of these indices in one request (an alias name stands for
        the indices behind it; missing names are absent; closed ones are there, see closed_indices):
        what the access reconcile of every run needs to know of the cluster, instead of one request
        per question."""
        t = self.t
        targets = ",".join(dict.fromkeys(names))
        features = ["aliases", "mappings", "settings"]
        found: dict[str, Any] = t.call(
            lambda: t.es.indices.get(index=targets, features=features, ignore_unavailable=True).body,
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
        names = alias_names(self.names, roles)
        self._refuse_foreign(names, self._get_alias(names))

    def _refuse_foreign(self, names: Sequence[str], found: Mapping[str, Any]) -> None:
        """``found``: an answer about ``names`` by index (alias names resolved to their indices)."""
        n = self.names
        foreign = foreign_names(names, found)
        if foreign:
            raise StoreConfigError(
                f"{self.t.where}: {', '.join(foreign)} already exist as indices, where ingest keeps its "
                f"aliases for index prefix {n.prefix!r}; ingest will not write over them. Delete or rename "
                "them, or use another --index-prefix."
            )

    def check_mappings(self, layout: Layout, report: bool = False, found: Mapping[str, Any] | None = None) -> list[str]:
        """Indices changed by hand (e.g. recreated with another mapping) are refused before writing
        (``report``: listed instead). ``found``: the indices' mappings already read (:meth:`survey`)."""
        if found is None:
            targets = [*layout.chunks.values(), layout.documents]
            t = self.t
            found = t.call(
                lambda: t.es.indices.get_mapping(index=",".join(targets), ignore_unavailable=True).body, missing={}
            )
        problems = mapping_problems(layout, self.analyzer, found)
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
        ours = our_aliases(self.names, layout, self.settings.roles)
        existing = self.existing([index for index in layout.owned if index not in layout.live])
        return sorted(index for index, aliases in existing.items() if not aliases & ours)

    def drop_abandoned_builds(self, layout: Layout | None = None) -> list[str]:
        """Delete :meth:`abandoned_builds` and forget them; only under the run's write lock (a
        ``--full`` in progress holds that lock, so its build is never taken for an abandoned one).
        ``layout``: the layout just read under that lock (None: read it now)."""
        if layout is None:
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
    def ensure(self, fill: bool = False) -> Layout:
        """Create the meta index, the label and documents indices and every alias if missing;
        add indices for new labels and re-point role aliases when ingest.toml changed.
        ``fill`` (under the run's lock): the indices created now get refresh off until
        :meth:`finish_filling` (the run's end, or the next run's lock when this one is killed)."""
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
        existing = self.existing(layout.live)
        missing = [index for index in layout.live if index not in existing]
        if fill and missing:
            layout.filling = sorted({*layout.filling, *missing})
        self.record(layout)  # recorded before created: a killed run leaves only owned (and filling) names
        for index in missing:
            kind = "documents" if index == layout.documents else "chunks"
            self.create_index(index, kind, FILL_SETTINGS if fill else None)
        if fill:
            self.filled.update(missing)
        self.check_mappings(layout)
        self.apply(self.access_plan(layout, self.settings.roles, check=False)[0])
        return layout

    def finish_filling(self, layout: Layout | None = None) -> Layout | None:
        """The indices a run filled with refresh off (this run's, or a killed run's as recorded) get
        Elasticsearch's default refresh back, and the layout forgets them. Under the run's lock."""
        layout = self.read() if layout is None else layout
        if layout is None or not layout.filling:
            self.filled.clear()
            return layout
        t = self.t
        indices = ",".join(layout.filling)
        self.check_lock()
        t.call(
            lambda: t.es.indices.put_settings(
                index=indices, settings={"index": {"refresh_interval": None}}, ignore_unavailable=True
            )
        )
        layout = dataclasses.replace(layout, filling=[])
        self.record(layout)
        self.filled.clear()
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
        found = self.survey(survey_targets(self.names, layout, roles))
        self._refuse_foreign(alias_names(self.names, roles), found)
        self._check_meta_mapping(found)
        if layout is None or not layout.documents:
            return []
        closed = closed_indices(layout, found)
        if closed and not check and not full:
            # Access first even so: every alias follows [roles] where Elasticsearch allows it (an alias
            # can be removed from a closed index, not added to one) before the closed index stops the run.
            self.apply(applicable_on_closed(self.access_plan(layout, roles, check=False, specs=found)[0], closed))
            raise StoreError(closed_message(self.t.name, self.names, closed[0]))
        drift = [] if full else self.check_mappings(layout, report=check, found=found)
        actions, changes = self.access_plan(layout, roles, check=check, specs=found)
        changes += [f"mapping changed outside ingest: {problem}" for problem in drift]
        if check:
            changes += [closed_message(self.t.name, self.names, index) for index in closed]
            changes += [
                f"{index} (the index of access label {label!r}) is missing: deleted outside ingest, so "
                f"the chunks its records list cannot be found; the next `ingest run` recreates it and "
                "writes them again from their files"
                for label, index in missing_label_indices(layout, found).items()
            ]
            changes += self.misplaced_chunks(layout, skip=closed)
            changes += [
                f"{index} is an index of prefix {self.names.prefix!r} outside the live build (left by a killed "
                "`ingest run --full`, or one in progress): the next run deletes it"
                for index in self.abandoned_builds(layout)
            ]
        else:
            self.apply(actions)
        return changes

    def misplaced_chunks(self, layout: Layout, skip: Sequence[str] = ()) -> list[str]:
        """Label indices holding chunks of another access label (ingest never writes one there: a
        copy made outside ingest, e.g. a mis-routed reindex or restore). The role aliases' filters
        keep them from readers of that label; they are reported so that someone removes them.
        ``skip``: indices that cannot be searched (closed, reported as such)."""
        t = self.t
        found: list[str] = []
        for label, index in sorted(layout.chunks.items()):
            if index in skip:
                continue
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
        if specs is not None:
            return alias_plan(self.names, layout, roles, check, specs)
        specs = self._get_alias(layout.owned) if layout.owned else {}
        rows = self.alias_rows(sorted(our_aliases(self.names, layout, roles)))
        return alias_plan(self.names, layout, roles, check, specs, rows)

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
        return meta_mapping_complete(index, self.analyzer)

    def _check_meta_mapping(self, found: Mapping[str, Any]) -> None:
        """The meta index's mapping, read along by :meth:`survey`: when it has every field, the
        lock need not read it again (an older one is completed by ``ensure_meta_index``)."""
        meta = found.get(self.names.meta_index)
        if meta is not None and self._meta_mapping_complete(meta):
            self._meta_mapping_checked = True
