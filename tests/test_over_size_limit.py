"""A stored document's file grown over the size limit (50 MiB) is never read: nothing says what access it
declares now, so its stored version is withdrawn like any file that can no longer be read after an edit —
never kept readable under the label it had (the edit may have narrowed it)."""

from __future__ import annotations

import json
import os

from tests.helpers import ingest_cli, search_hits

FRONT = '---\ndoc_id: big\nversion: "1"\ntitle: Big\naccess: {access}\n---\n\nZebrabig manatee quarterly figures.\n'


def test_a_stored_file_grown_over_the_size_limit_withdraws_its_stored_version(tmp_path, store_args):
    doc = tmp_path / "corpus" / "documents" / "big.md"
    doc.parent.mkdir(parents=True)
    doc.write_text(FRONT.format(access="public"), encoding="utf-8")
    other = FRONT.replace("Zebrabig manatee", "Okapi giraffe").replace("doc_id: big", "doc_id: other")
    (doc.parent / "other.md").write_text(other.format(access="public"), encoding="utf-8")
    assert ingest_cli("run", tmp_path / "corpus", *store_args, "-q").returncode == 0
    assert search_hits(store_args, "zebrabig manatee", "public") == {"big"}

    doc.write_text(FRONT.format(access="staff"), encoding="utf-8")
    with doc.open("r+b") as handle:  # sparse: 52 MB without writing them
        handle.truncate(52 * 1024 * 1024)
    done = ingest_cli("run", tmp_path / "corpus", *store_args, "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    problems = " ".join(p for record in report["problems"] for p in record["problems"])
    assert "file too large" in problems and "big@1 is withdrawn" in problems, problems
    assert search_hits(store_args, "zebrabig manatee", "public") == set()
    assert search_hits(store_args, "zebrabig manatee", "staff") == set()
    assert search_hits(store_args, "okapi giraffe", "public") == {"other"}  # the others stay

    again = ingest_cli("run", tmp_path / "corpus", *store_args)  # still too large: rejected, nothing comes back
    assert again.returncode == 1 and search_hits(store_args, "zebrabig manatee", "public") == set()
    assert ingest_cli("verify", tmp_path / "corpus", *store_args).returncode == 0

    os.truncate(doc, len(FRONT.format(access="staff").encode()))  # back under the limit: indexed as staff
    assert ingest_cli("run", tmp_path / "corpus", *store_args, "-q").returncode == 0
    assert search_hits(store_args, "zebrabig manatee", "staff") == {"big"}
    assert search_hits(store_args, "zebrabig manatee", "public") == set()
