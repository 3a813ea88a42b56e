"""A file that changes between two valid states while a run reads it (its front matter rewritten by an
editor, say) is neither an edit without a version bump nor new text: it is refused as "changed while this
run was reading it" (the next run picks it up), and its stored version is kept or withdrawn by what it
declares, as for any refused file. Both stores, through the real plan and the stores' records."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from ingest import pipeline
from ingest.corpus import scan_corpus
from ingest.settings import load_settings
from ingest.store import open_store

ROOT = Path(__file__).resolve().parents[1]
STAFF = "---\ndoc_id: race\nversion: \"1\"\ntitle: Race\naccess: staff\n---\n# Race\n\nConfidential narwhal acquisition.\n"
PUBLIC = STAFF.replace("access: staff", "access: public")


def test_a_file_changed_while_read_is_refused_as_such_not_as_an_edit(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    path = corpus / "documents" / "race.md"
    path.parent.mkdir(parents=True)
    path.write_text(STAFF)
    done = subprocess.run([sys.executable, "-m", "ingest.cli", "run", str(corpus), *store_args], cwd=ROOT)
    assert done.returncode == 0
    prefix = store_args[store_args.index("--index-prefix") + 1] if "--index-prefix" in store_args else None
    store = open_store(store_args[1], index_prefix=prefix)
    try:
        settings = load_settings(corpus)
        path.write_text(PUBLIC)  # the scan reads the public state (its body skipped: bytes it knows) ...
        scan = scan_corpus(corpus, settings, skip_body={hashlib.sha256(PUBLIC.encode()).hexdigest()})
        path.write_text(STAFF)  # ... and the file is back to staff when the plan reads it again
        stored = store.documents()
        plan = pipeline.plan_sync(
            scan, stored, settings.chunking, stored_chunks=lambda old: store.document_chunks(old.doc_id, old.version)
        )
    finally:
        store.close()
    items = {(i.action, i.key): i.reason for i in plan.items}
    reason = items[("rejected", "race@1")]
    assert reason == "the file changed while this run was reading it; the next run picks it up"
    problems = " ".join(p for record in plan.problems for p in record.problems)
    assert "content changed" not in problems
    # what the scan read declares public: the staff version is not kept readable wider (withdrawn)
    assert items[("removed", "race@1")].startswith("withdrawn: documents/race.md: access 'staff' → 'public'")
    assert "documents/race.md: documents/race.md" not in problems
