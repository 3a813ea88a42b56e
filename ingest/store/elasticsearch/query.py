"""The Elasticsearch query of a search: BM25F over title, section and text with the access, as-of and
document filters inside the query, and codes in the query also matched as exact phrases."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import Any

from ingest.store.base import EXACT_TOKEN, FIELD_WEIGHTS, QueryTooLarge
from ingest.store.elasticsearch.layout import EXACT_FIELD

SEARCH_TYPE = "dfs_query_then_fetch"
MAX_QUERY_TERMS = 1000  # x 3 searched fields stays under Elasticsearch's default 4096 clauses
SEARCH_FIELDS = tuple(
    f"{field}^{weight:g}" if field == "text" else f"{field}.text^{weight:g}" for field, weight in FIELD_WEIGHTS.items()
)
EXACT_FIELDS = tuple(f"{field}.{EXACT_FIELD}^{weight:g}" for field, weight in FIELD_WEIGHTS.items())


def as_of_filters(as_of: date | None) -> list[dict[str, Any]]:
    """effective_from ≤ as_of (or none) and effective_to ≥ as_of (or none)."""
    if as_of is None:
        return []
    day = as_of.isoformat()

    def bound(field: str, op: str) -> dict[str, Any]:
        return {
            "bool": {
                "should": [
                    {"range": {field: {op: day}}},
                    {"bool": {"must_not": {"exists": {"field": field}}}},
                ],
                "minimum_should_match": 1,
            }
        }

    return [bound("effective_from", "lte"), bound("effective_to", "gte")]


def check_query_size(query: str) -> None:
    terms = len(set(re.findall(r"\w+", query.lower())))
    if terms > MAX_QUERY_TERMS:
        raise QueryTooLarge(
            f"the query has {terms} distinct words; at most {MAX_QUERY_TERMS} can be searched at once: shorten it"
        )


def search_body(
    query: str,
    labels: Sequence[str],
    as_of: date | None,
    top: int,
    doc_id: str | None,
    *,
    behind_role_alias: bool = False,
    withheld: Sequence[str] | None = None,
    check_labels: bool = False,
) -> dict[str, Any]:
    """The search request. ``behind_role_alias``: it goes to a role alias, which carries a filter of
    its own (the role's labels); the conditions are then written as exclusions (same hits): the
    ``withheld`` labels (the other labels the index records), the role's labels as a double negation
    too when ``check_labels`` or the withheld labels are unknown (None), in force after the day, out
    of force before it."""
    conditions: list[dict[str, Any]] = [{"terms": {"access": list(labels)}}, *as_of_filters(as_of)]
    selective = [{"term": {"doc_id": doc_id}}] if doc_id else []
    # Codes in the query, also as exact phrases over the unstemmed sub-fields.
    exact = [
        {"multi_match": {"query": code, "type": "phrase", "fields": list(EXACT_FIELDS)}}
        for code in dict.fromkeys(re.findall(EXACT_TOKEN, query))
    ]
    search: dict[str, Any] = {
        "must": {"combined_fields": {"query": query, "fields": list(SEARCH_FIELDS)}},
        "should": exact,
        "filter": [*conditions, *selective],
    }
    if behind_role_alias:
        search["filter"] = selective
        search["must_not"] = [*access_exclusions(labels, withheld, check_labels), *as_of_exclusions(as_of)]
    return {
        "query": {"bool": search},
        "size": top,
        "sort": [{"_score": "desc"}, {"chunk_id": "asc"}],
        "track_total_hits": False,
    }


def access_exclusions(
    labels: Sequence[str], withheld: Sequence[str] | None, check_labels: bool = False
) -> list[dict[str, Any]]:
    """Under ``must_not``: chunks of the withheld labels, and (``check_labels``, or withheld unknown)
    chunks without any of the role's labels.

    Why not a filter on the role's labels: Elasticsearch puts a role alias's own filter around the
    query (+query #alias_filter), and Lucene does not flatten that when the query's disjunction
    carries FILTER clauses: a filtered search then took 5-17x the unfiltered time on 1M chunks
    (p50). Why not only its double negation: that walks every chunk of each segment to find none
    (p95 +60-80 %); a withheld label is absent from the alias's indices, so excluding it costs
    nothing (ES 9.5.4; README "Search latency"). Still inside the query, before the top k."""
    excluded: list[dict[str, Any]] = [{"terms": {"access": sorted(withheld)}}] if withheld else []
    if withheld is None or check_labels:
        excluded.append({"bool": {"must_not": {"terms": {"access": list(labels)}}}})
    return excluded


def as_of_exclusions(as_of: date | None) -> list[dict[str, Any]]:
    """Under ``must_not``: chunks not in force on ``as_of`` (in force from after it, or out of force
    before it); a missing date bounds nothing, as in :func:`as_of_filters`."""
    if as_of is None:
        return []
    day = as_of.isoformat()
    return [{"range": {"effective_from": {"gt": day}}}, {"range": {"effective_to": {"lt": day}}}]


def neighbours_query(doc_id: str, version: str, bounds: dict[str, int]) -> dict[str, Any]:
    """Chunks of one document version whose position lies within ``bounds`` (a range query)."""
    filters = [{"term": {"doc_id": doc_id}}, {"term": {"version": version}}, {"range": {"position": bounds}}]
    return {"bool": {"filter": filters}}


def prefix_query(prefix: str) -> dict[str, Any]:
    """A full chunk ID by term, a shorter prefix by prefix query."""
    return {"term": {"chunk_id": prefix}} if len(prefix) >= 20 else {"prefix": {"chunk_id": prefix}}
