"""The pure rules of a prefix's layout: the mappings with their analyzer, the recorded layout, and what
the aliases, mappings and meta index must look like, decided from the cluster's answers without a client.

:mod:`.layout` asks the cluster through the Elasticsearch client and applies these rules; the no-op
check of an unchanged run (:mod:`.unchanged_check`) asks the same questions over plain HTTP before the
client is imported and applies the same rules, so the two cannot disagree about what "unchanged" means.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ingest.resources import load_mapping
from ingest.settings import Settings
from ingest.store.elasticsearch.names import IndexNames

# [search] language -> the analyzer of the BM25 text fields (``english`` is built into every full
# distribution and Docker image; the test node gets it from elasticsearch-plugins/english-analysis).
LANGUAGE_ANALYZERS = {"english": "english", "none": "standard"}
DEFAULT_ANALYZER = LANGUAGE_ANALYZERS["english"]
EXACT_FIELD = "exact"  # the unstemmed sub-field; its analyzer is fixed in mappings/*.json
META_ID = "meta"  # meta documents: the run metadata, the write lock, the owned layout
LOCK_ID = "lock"
LAYOUT_ID = "layout"

# the _aliases API actions that change aliases
Actions = list[dict[str, Any]]


def found_or_absent(doc: Mapping[str, Any]) -> bool:
    """An ``_mget`` answer about one document that says found or not found (its index missing too)."""
    error = doc.get("error")
    if error is None:
        return "found" in doc
    return isinstance(error, dict) and error.get("type") == "index_not_found_exception"


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
    # Live indices a run created with refresh off (FILL_SETTINGS) and has not given the default back
    # yet: recorded before they are created, so the next run restores what a killed run left.
    filling: list[str] = dataclasses.field(default_factory=list)

    @property
    def live(self) -> list[str]:
        return [*self.chunks.values(), self.documents]


def layout_of(document: Mapping[str, Any]) -> Layout:
    """The layout a found ``layout`` meta document records."""
    values = document["_source"]["values"]
    return Layout(
        dict(values["chunks"]),
        values["documents"],
        list(values["owned"]),
        list(values.get("roles", [])),
        list(values.get("filling", [])),
    )


def meta_mapping_complete(index: Mapping[str, Any], analyzer: str) -> bool:
    """The meta index (its entry in a mapping answer) has every field ingest's meta mapping has."""
    expected = load_index_body("meta", analyzer)["mappings"]["properties"]
    return not set(expected) - set(index.get("mappings", {}).get("properties", {}))


def alias_names(names: IndexNames, roles: Iterable[str]) -> list[str]:
    """The alias names of this prefix that must not exist as concrete indices."""
    return [names.all_alias, names.documents_alias, *(names.role_alias(r) for r in roles)]


def survey_targets(names: IndexNames, layout: Layout | None, roles: Iterable[str]) -> list[str]:
    """What the access reconcile reads in one request: our alias names, the aliases of roles ingest made,
    the indices the prefix owns, and the meta index (see IndexLayout.survey)."""
    owned = [*layout.owned, *layout.live] if layout is not None else []
    made = [names.role_alias(r) for r in layout.roles] if layout is not None else []
    return list(dict.fromkeys([*alias_names(names, roles), *made, *owned, names.meta_index]))


def foreign_names(names: Sequence[str], found: Mapping[str, Any]) -> list[str]:
    """``found``: an answer about ``names`` by index (alias names resolved to their indices): the
    concrete indices that carry one of those names belong to someone else."""
    return sorted(set(found) & set(names))


def mapping_problems(layout: Layout, analyzer: str, found: Mapping[str, Any]) -> list[str]:
    """How the live indices' mappings (``found``, by index) differ from ingest's (changed by hand)."""
    targets = {index: "chunks" for index in layout.chunks.values()} | {layout.documents: "documents"}
    problems: list[str] = []
    for index, kind in targets.items():
        expected = load_index_body(kind, analyzer)["mappings"]["properties"]
        actual = found.get(index, {}).get("mappings", {}).get("properties", {})
        if index in found:
            drift = sorted(mapping_drift(expected, actual), key=lambda p: p.endswith("is missing"))
            problems += [f"{index}: {p}" for p in drift]
    return problems


def missing_label_indices(layout: Layout, found: Mapping[str, Any]) -> dict[str, str]:
    """label -> live label index that ``found`` (an answer about the live indices, by index) lacks:
    deleted outside ingest while the records still list its chunks (a run recreates it and writes
    those versions again, see ElasticsearchStore.restore_missing_label_indices)."""
    return {label: index for label, index in sorted(layout.chunks.items()) if index not in found}


def closed_indices(layout: Layout, found: Mapping[str, Any]) -> list[str]:
    """Live indices that ``found`` (a survey with the ``settings`` feature) shows closed: Elasticsearch
    sets ``index.verified_before_close`` when it closes an index and removes it when it opens it."""
    return sorted(
        index
        for index in layout.live
        if str(found.get(index, {}).get("settings", {}).get("index", {}).get("verified_before_close")).lower() == "true"
    )


def applicable_on_closed(actions: Actions, closed: Sequence[str]) -> Actions:
    """The alias actions Elasticsearch accepts while ``closed`` indices are closed: every removal (it
    works on a closed index) and every addition to an open index (adding one to a closed index fails)."""
    return [a for a in actions if "remove" in a or a.get("add", {}).get("index") not in closed]


def closed_message(url: str, names: IndexNames, index: str) -> str:
    """What to do about a closed index of the prefix (what it holds can be neither read nor written)."""
    label = names.label_of_index(index)
    what = f"the index of access label {label!r}" if label else "the documents index"
    return (
        f"Elasticsearch at {url}: {index} ({what} of index prefix {names.prefix!r}) is closed (closed outside "
        f"ingest): what it holds can be neither searched nor written. Open it (`curl -XPOST "
        f"'{url}/{index}/_open'`) and run `ingest run` again, or delete it (`curl -XDELETE '{url}/{index}'`): "
        "the next `ingest run` then builds it again from the files."
    )


def our_aliases(names: IndexNames, layout: Layout, roles: Iterable[str]) -> set[str]:
    return {names.all_alias, names.documents_alias, *(names.role_alias(r) for r in (*roles, *layout.roles))}


def alias_plan(
    names: IndexNames,
    layout: Layout,
    roles: Mapping[str, Sequence[str]],
    check: bool,
    specs: Mapping[str, Any],
    current_rows: Iterable[tuple[str, str]] | None = None,
) -> tuple[Actions, list[str]]:
    """The _aliases actions that make the aliases match ``layout`` and ``roles``, and what each does.
    ``specs``: the aliases of the owned indices by index; when it is a survey (``current_rows`` None) it
    also lists every index behind our alias names, else ``current_rows`` gives (index, alias) of those."""
    role_prefix = f"{names.all_alias}-"
    ours = our_aliases(names, layout, roles)
    owned = {index: set(spec.get("aliases", {})) for index, spec in specs.items() if index in layout.owned}
    current = {
        (index, alias)
        for index, aliases in owned.items()
        for alias in aliases
        if alias in ours or alias.startswith(role_prefix)
    }
    if current_rows is None:
        current |= {
            (index, alias) for index, spec in specs.items() for alias in spec.get("aliases", {}) if alias in ours
        }
    else:
        current |= set(current_rows)
    desired = {pair for pair in names.desired_aliases(layout.chunks, layout.documents, roles) if pair[0] in owned}
    actions: Actions = []
    changes: list[str] = []
    for index, alias in sorted(current - desired):
        why = _why_removed(names, index, alias, layout, owned, roles)
        actions.append({"remove": {"index": index, "alias": alias, "must_exist": False}})
        changes.append(
            f"alias {alias} covers {index} ({why})" if check else f"removed {index} from alias {alias} ({why})"
        )
    for index, alias in sorted(desired - current):
        actions.append(_add(names, index, alias, roles))
        changes.append(f"alias {alias} lacks {index}" if check else f"added {index} to alias {alias}")
    for index, alias in sorted(desired & current):
        # A role alias without its access filter (made by an older ingest, or changed by hand):
        # adding it again replaces its filter.
        want = names.alias_filter(alias, roles)
        have = specs.get(index, {}).get("aliases", {}).get(alias, {}).get("filter")
        if want != have:
            actions.append(_add(names, index, alias, roles))
            labels = ", ".join(want["terms"]["access"]) if want else "none"
            changes.append(
                f"alias {alias} on {index} lacks its access filter (labels: {labels})"
                if check
                else f"set the access filter of alias {alias} on {index} (labels: {labels})"
            )
    return actions, changes


def _add(names: IndexNames, index: str, alias: str, roles: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    action: dict[str, Any] = {"index": index, "alias": alias}
    found = names.alias_filter(alias, roles)
    if found is not None:
        action["filter"] = found
    return {"add": action}


def _why_removed(
    names: IndexNames,
    index: str,
    alias: str,
    layout: Layout,
    owned: Mapping[str, Any],
    roles: Mapping[str, Sequence[str]],
) -> str:
    role_prefix = f"{names.all_alias}-"
    role = alias[len(role_prefix) :] if alias.startswith(role_prefix) else None
    if index not in owned:
        return f"{index} is not an index of prefix {names.prefix!r}"
    if index not in layout.live:
        return "not the live build"
    if role is not None and role not in roles:
        return f"role {role!r} is not in [roles]"
    if role is not None:
        return f"[roles] does not let {role!r} read {names.label_of_index(index)!r}"
    return "not part of this layout"
