"""docker/kibana/*.ndjson against mappings/: every saved object parses, every field it names exists
in the index its data view reads (with a type the aggregation can use), every reference resolves,
and the compose setup service renames the data views for INGEST_INDEX_PREFIX, retries the import
until Kibana says "success": true, and keeps the single node green.

Kibana itself is not run here (no Docker engine on the build machine): these checks are static.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
INDEX_REF = "kibanaSavedObjectMeta.searchSourceJSON.index"
AGGREGATABLE = {"keyword", "integer", "long", "date", "boolean"}
FIELD_TYPES_BY_AGG = {"terms": AGGREGATABLE, "date_histogram": {"date"}, "histogram": {"integer", "long"},
                      "sum": {"integer", "long"}, "avg": {"integer", "long"}, "min": AGGREGATABLE - {"keyword"},
                      "max": AGGREGATABLE - {"keyword"}, "cardinality": AGGREGATABLE}


def field_types(props: dict, parent: str = "") -> dict[str, str]:
    """Every field Kibana can name, with its type: "title" keyword, "title.text" text, …"""
    types = {}
    for name, spec in props.items():
        path = f"{parent}{name}"
        types[path] = spec.get("type", "object")
        types |= field_types(spec.get("fields", {}), f"{path}.")
        types |= field_types(spec.get("properties", {}), f"{path}.")
    return types


def mapping(name: str) -> dict[str, str]:
    body = json.loads((ROOT / "mappings" / f"{name}.json").read_text(encoding="utf-8"))
    return field_types(body["mappings"]["properties"])


# A data view's title is an alias of the default prefix: ingest-chunks -> mappings/chunks.json.
def fields_of_view(title: str) -> dict[str, str]:
    match = re.fullmatch(r"ingest-(chunks|documents)", title)
    assert match, f"data view {title!r} is not an ingest alias"
    return mapping(match.group(1))


def saved_objects() -> list[dict]:
    return [json.loads(line)
            for path in sorted((ROOT / "docker" / "kibana").glob("*.ndjson"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def by_id() -> dict[tuple[str, str], dict]:
    objects = saved_objects()
    index = {(obj["type"], obj["id"]): obj for obj in objects}
    assert len(index) == len(objects), "duplicate saved object IDs"
    return index


def data_view_of(obj: dict) -> dict:
    source = json.loads(obj["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
    [ref] = [r for r in obj["references"] if r["name"] == source["indexRefName"]]
    assert ref["type"] == "index-pattern"
    return by_id()[("index-pattern", ref["id"])]


def kql_fields(query: str) -> set[str]:
    return set(re.findall(r"([A-Za-z_][\w.]*)\s*(?::|<=|>=|<|>)", query))


def test_data_views_are_the_chunks_and_documents_aliases():
    views = {obj["id"]: obj["attributes"]["title"] for obj in saved_objects() if obj["type"] == "index-pattern"}
    assert views == {"ingest-chunks": "ingest-chunks", "ingest-documents": "ingest-documents"}


def test_the_saved_search_names_only_mapped_fields():
    search = by_id()[("search", "ingest-chunks-search")]
    fields = fields_of_view(data_view_of(search)["attributes"]["title"])
    assert search["attributes"]["columns"] == ["doc_id", "version", "section", "pages", "access", "text"]
    assert set(search["attributes"]["columns"]) | {field for field, _ in search["attributes"]["sort"]} <= set(fields)


def test_every_visualization_aggregates_mapped_fields_of_a_usable_type():
    visualizations = [obj for obj in saved_objects() if obj["type"] == "visualization"]
    assert len(visualizations) == 6
    for vis in visualizations:
        fields = fields_of_view(data_view_of(vis)["attributes"]["title"])
        state = json.loads(vis["attributes"]["visState"])
        assert state["title"] == vis["attributes"]["title"]
        for agg in state["aggs"]:
            field = agg["params"].get("field")
            if agg["type"] == "count":
                continue
            assert field in fields, (vis["id"], field)
            assert fields[field] in FIELD_TYPES_BY_AGG[agg["type"]], (vis["id"], agg["type"], field, fields[field])
        source = json.loads(vis["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
        assert kql_fields(source["query"]["query"]) <= set(fields), vis["id"]
        json.loads(vis["attributes"]["uiStateJSON"])


def test_the_dashboard_shows_what_the_issue_asks_for():
    objects = by_id()
    dashboard = objects[("dashboard", "ingest-dashboard")]
    panels = json.loads(dashboard["attributes"]["panelsJSON"])
    refs = {ref["name"]: ref for ref in dashboard["references"]}
    shown = []
    for panel in panels:
        ref = refs[panel["panelRefName"]]
        shown.append(objects[(ref["type"], ref["id"])])
    assert len({p["panelIndex"] for p in panels}) == len(panels)
    aggregated = {(data_view_of(vis)["attributes"]["title"], agg["params"].get("field"))
                  for vis in shown for agg in json.loads(vis["attributes"]["visState"])["aggs"]}
    assert {("ingest-chunks", "access"), ("ingest-chunks", "doc_id"), ("ingest-chunks", "version"),
            ("ingest-chunks", "status"), ("ingest-chunks", "word_count"),
            ("ingest-documents", "effective_from")} <= aggregated
    in_force = objects[("visualization", "ingest-vis-documents-in-force-today")]
    query = json.loads(in_force["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])["query"]["query"]
    assert kql_fields(query) == {"effective_from", "effective_to"}
    assert all(0 <= p["gridData"]["x"] and p["gridData"]["x"] + p["gridData"]["w"] <= 48 for p in panels)


def setup_service() -> dict:
    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text(encoding="utf-8"))
    return compose["services"]["kibana-setup"]


def setup_script() -> str:
    # Compose turns "$$" into "$" before the shell sees the command.
    return setup_service()["command"][0].replace("$$", "$")


def test_setup_checks_the_import_answer_and_retries():
    script = setup_script()
    assert "\"success\":true" in script and "_import?overwrite=true" in script
    assert re.search(r"until curl -fsS \"\$kibana/api/status\"", script)
    assert "exit 1" in script
    assert setup_service()["depends_on"]["elasticsearch"]["condition"] == "service_healthy"


def test_setup_follows_the_index_prefix_and_keeps_a_single_node_green():
    service = setup_service()
    assert service["environment"]["INGEST_INDEX_PREFIX"] == "${INGEST_INDEX_PREFIX:-ingest}"
    script = setup_script()
    assert "auto_expand_replicas" in script and "0-1" in script
    # The rename the script applies (sed s/"ingest-/"PREFIX-/g) keeps every object consistent.
    renamed = [json.loads(json.dumps(obj).replace('"ingest-', '"docs-')) for obj in saved_objects()]
    ids = {(obj["type"], obj["id"]) for obj in renamed}
    assert {obj["attributes"]["title"] for obj in renamed if obj["type"] == "index-pattern"} == {"docs-chunks", "docs-documents"}
    assert all((ref["type"], ref["id"]) in ids for obj in renamed for ref in obj["references"])


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX shell")
def test_setup_script_is_valid_shell():
    result = subprocess.run(["sh", "-n"], input=setup_script(), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
