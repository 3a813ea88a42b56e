"""The atomic full rebuild: a new build's indices filled beside the live ones, every alias moved to
them in one call, the old build dropped; a failed rebuild leaves the live build as it was."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from ingest.store.base import StoreError
from ingest.store.elasticsearch.layout import FILL_SETTINGS, IndexLayout
from ingest.store.elasticsearch.layout_rules import Layout
from ingest.store.elasticsearch.names import new_build
from ingest.store.elasticsearch.transport import Transport

# While a build fills: no refresh (FILL_SETTINGS, restored at the switch). Replicas: none on a single
# node; on a cluster the target count from the start, so that losing a node mid-fill loses no part of the build.

S = TypeVar("S")


@contextmanager
def full_rebuild(layout: IndexLayout, pinned_store: Callable[[str], S], warnings: list[str]) -> Iterator[S]:
    """Yield a store pinned to a new build; on clean exit make that build live and drop the old one."""
    names, settings = layout.names, layout.settings
    build = new_build()
    new_labels, new_documents = names.build_indices(settings.labels, build)
    new_indices = [*new_labels.values(), new_documents]
    layout.check_analyzer()
    layout.t.call(layout.ensure_meta_index)
    layout.refuse_foreign_names(settings.roles)
    # Recorded as owned before they exist: a killed rebuild leaves only indices the next full run
    # knows to delete. (A first build has no live layout yet: nothing behind the aliases until the switch.)
    pending = layout.read() or Layout({}, "", [], [])
    pending = dataclasses.replace(pending, owned=sorted({*pending.owned, *new_indices}))
    layout.record(pending)
    try:
        for index in new_labels.values():
            layout.create_index(index, "chunks", FILL_SETTINGS)
        layout.create_index(new_documents, "documents", FILL_SETTINGS)
        yield pinned_store(build)
        live = Layout(new_labels, new_documents, pending.owned, sorted({*pending.roles, *settings.roles}))
        _switch_to(layout, live)
    except BaseException:
        if _switched(layout, new_documents):
            # The alias switch went through but its answer was lost: the new build IS live.
            # Dropping it would leave readers with no index at all; record it and let the next
            # full run drop the old build (still recorded as owned).
            with contextlib.suppress(Exception):
                layout.record(
                    Layout(new_labels, new_documents, pending.owned, sorted({*pending.roles, *settings.roles}))
                )
            raise
        # Not switched: readers still use the old build; drop the half-built one (best effort: it
        # stays recorded as owned, so the next full run deletes it).
        _drop_quietly(layout.t, new_indices)
        raise
    old_indices = [index for index in live.owned if index not in new_indices]
    try:
        if old_indices:
            t = layout.t
            t.call(lambda: t.es.indices.delete(index=",".join(old_indices), ignore_unavailable=True))
        layout.record(dataclasses.replace(live, owned=sorted(new_indices)))
    except StoreError as exc:
        warnings.append(f"the new build is live, but dropping the old one failed ({exc}); the next full run drops it")


def _switch_to(layout: IndexLayout, live: Layout) -> None:
    """Finish the new build and move every alias to it in one atomic call; then record it."""
    t = layout.t
    new_indices = ",".join(live.live)
    replicas = _replicas_of(layout, [i for i in live.owned if i not in live.live])
    t.call(
        lambda: t.es.indices.put_settings(
            index=new_indices, settings={"index": {"refresh_interval": None, "number_of_replicas": replicas}}
        )
    )
    t.call(lambda: t.es.indices.refresh(index=new_indices))
    if replicas:
        t.call(lambda: t.es.cluster.health(index=new_indices, wait_for_status="yellow", timeout="60s"))
    actions, _ = layout.access_plan(live, layout.settings.roles, check=False)
    layout.check_lock()
    t.call(lambda: t.es.indices.update_aliases(actions=actions))  # the one atomic switch
    layout.record(live)


def _switched(layout: IndexLayout, new_documents: str) -> bool:
    """Whether the documents alias already points at the new build (asked with a fresh request)."""
    try:
        found = layout.t.quick().indices.get_alias(name=layout.names.documents_alias)
    except Exception:  # noqa: BLE001 - cannot tell: treat as not switched (the old build stays)
        return False
    return new_documents in found


def _replicas_of(layout: IndexLayout, indices: list[str]) -> int:
    """The replica count the live build had (set by hand, perhaps), else the cluster's (see replicas())."""
    existing = sorted(layout.existing(indices))
    if not existing:
        return layout.replicas()
    t = layout.t
    found = t.call(lambda: t.es.indices.get_settings(index=existing[0], name="index.number_of_replicas"))
    for spec in found.values():
        return int(spec["settings"]["index"]["number_of_replicas"])
    return layout.replicas()


def _drop_quietly(t: Transport, indices: list[str]) -> None:
    # Any failure is ignored: the original error is what the run reports.
    with contextlib.suppress(Exception):
        t.quick().indices.delete(index=",".join(indices), ignore_unavailable=True)
