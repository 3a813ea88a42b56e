"""What cannot be read is a problem for that path, never a deletion and never a hang or a
traceback: FIFOs and devices, symlink loops, names that are not UTF-8, unreadable folders
and files, files too large to read, on the real file system and the embedded store."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ingest import pipeline
from ingest.corpus import read_document, scan_corpus
from ingest.model import UnreadableFile
from ingest.parse import MAX_BYTES
from ingest.settings import load_settings
from ingest.store.sqlite import SQLiteStore
from tests.corpus_builder import make_corpus, write_doc

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def no_hang():
    """A test that would block forever fails instead (a guard, not a timing assertion)."""
    def stuck(signum, frame):
        raise AssertionError("blocked: a read that must never wait did")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def run(corpus: Path, store, **kwargs):
    settings = load_settings(corpus)
    return pipeline.run(corpus, store, settings, settings.chunking, **kwargs)


def problems_by_source(scan_or_plan) -> dict[str, str]:
    return {p.source: " ".join(p.problems) for p in scan_or_plan.problems}


@pytest.fixture
def corpus(tmp_path):
    return make_corpus(tmp_path / "corpus")


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "index.sqlite")
    yield s
    s.close()


def test_a_fifo_in_place_of_a_stored_document_is_a_problem_and_the_document_is_kept(corpus, store, no_hang):
    assert run(corpus, store).ok
    path = corpus / "documents/folder0/doc0.md"
    path.unlink()
    os.mkfifo(path)
    result = run(corpus, store)
    assert not result.ok
    assert "FIFO" in problems_by_source(result.plan)["documents/folder0/doc0.md"]
    assert [i.action for i in result.plan.items if i.key == "doc-0@1"] == ["kept"]
    assert "doc-0@1" in {r.key for r in store.documents()} and store.document_chunks("doc-0")
    assert result.to_json()["documents"]["rejected"] == 1


def test_a_fifo_swapped_in_after_listing_is_refused_without_blocking(tmp_path, no_hang):
    fifo = tmp_path / "late.md"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFile, match="FIFO"):
        read_document(fifo)


def test_a_device_is_never_opened_as_a_document(corpus, no_hang):
    os.symlink("/dev/zero", corpus / "documents/zero.md")  # a symlink out of the corpus: skipped
    os.symlink("/dev/null", corpus / "documents/null.md")
    scan = scan_corpus(corpus, load_settings(corpus))
    assert len(scan.documents) == 6
    with pytest.raises(UnreadableFile, match="device"):
        read_document(Path("/dev/zero"))


@pytest.mark.parametrize("loop", ["self", "pair"])
def test_a_symlink_loop_is_a_problem_not_a_crash(corpus, loop):
    docs = corpus / "documents"
    if loop == "self":
        os.symlink("loop.md", docs / "loop.md")
    else:
        os.symlink("b.md", docs / "a.md")
        os.symlink("a.md", docs / "b.md")
    scan = scan_corpus(corpus, load_settings(corpus))
    found = problems_by_source(scan)
    names = ["documents/loop.md"] if loop == "self" else ["documents/a.md", "documents/b.md"]
    for name in names:
        assert "symlink loop" in found[name]
    assert len(scan.documents) == 6 and not scan.ok


def test_a_name_that_is_not_utf8_is_a_named_problem_and_the_others_go_in(corpus, store):
    """validate and run agree: a problem whose source gives the exact bytes back (os.fsencode;
    the CLI escapes it for people and JSON), never a UnicodeEncodeError in the SQLite write."""
    bad = os.fsencode(corpus / "documents") + b"/caf\xe9.md"
    with open(bad, "wb") as f:
        f.write((corpus / "documents/folder0/doc0.md").read_bytes().replace(b"doc-0", b"doc-cafe"))
    scan = scan_corpus(corpus, load_settings(corpus))
    result = run(corpus, store)
    for problems in (scan.problems, result.plan.problems):
        [problem] = problems
        assert os.fsencode(problem.source) == b"documents/caf\xe9.md"
        assert problem.problems == ("documents/caf\\xe9.md: file name is not valid UTF-8; rename the file",)
    assert result.to_json()["documents"] == {**result.to_json()["documents"], "seen": 7, "indexed": 6, "rejected": 1}
    json.dumps(result.to_json())  # serialisable (as \udcXX escapes)
    assert {r.doc_id for r in store.documents()} == {f"doc-{i}" for i in range(6)}


def test_a_sparse_file_over_the_size_limit_is_refused_before_reading(corpus, tmp_path):
    huge = corpus / "documents/huge.txt"
    with open(huge, "wb") as f:
        f.truncate(3 * 1024**3)  # 3 GiB of holes: costs no disk, would cost 3 GiB of memory
    script = (
        "import json, resource, sys; from ingest.corpus import scan_corpus; from ingest.settings import Settings;"
        f"scan = scan_corpus({str(corpus)!r}, Settings());"
        "print(json.dumps({'problems': [p.to_json() for p in scan.problems],"
        " 'rss_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    [problem] = data["problems"]
    assert problem["source"] == "documents/huge.txt"
    assert f"file too large ({3 * 1024**3} bytes; limit {MAX_BYTES})" in problem["problems"][0]
    assert data["rss_kb"] < 1024 * 1024  # far below the file's 3 GiB: it was never read


def test_a_read_never_takes_more_than_the_limit(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"a " * 600)
    assert len(read_document(path, limit=1200)) == 1200
    with pytest.raises(UnreadableFile, match="file too large"):
        read_document(path, limit=1199)


# --- permissions: root reads everything, so these run the CLI without the capabilities that
# let root ignore file permissions (setpriv drops them from the bounding set) -----------------

WITHOUT_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


def _unprivileged() -> list[str] | None:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    return WITHOUT_OVERRIDE


@pytest.fixture
def shared_dir(tmp_path):
    yield tmp_path
    for folder, subfolders, files in os.walk(tmp_path):
        for name in subfolders + files:
            os.chmod(os.path.join(folder, name), 0o755, follow_symlinks=False) if not os.path.islink(os.path.join(folder, name)) else None


def _cli_as_user(prefix: list[str], *args: str) -> tuple[int, dict]:
    done = subprocess.run([*prefix, sys.executable, "-m", "ingest.cli", *args, "--json"], capture_output=True, text=True, cwd=ROOT)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("what", ["folder", "file"])
def test_an_unreadable_folder_or_file_is_a_problem_and_its_stored_documents_are_kept(shared_dir, what):
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be taken away from root")
    corpus = make_corpus(shared_dir / "corpus")
    db = shared_dir / "store" / "index.sqlite"
    db.parent.mkdir()
    store_args = ("--store", f"sqlite:///{db}")
    code, first = _cli_as_user(prefix, "run", str(corpus), *store_args)
    assert code == 0 and first["documents"]["indexed"] == 6, first
    target = corpus / "documents/folder1" if what == "folder" else corpus / "documents/folder1/doc1.md"
    target.chmod(0o000)
    code, validated = _cli_as_user(prefix, "validate", str(corpus))
    assert code == 1
    code, data = _cli_as_user(prefix, "run", str(corpus), *store_args)
    assert code == 1, data
    found = {p["source"]: " ".join(p["problems"]) for p in data["problems"]}
    name = "documents/folder1" if what == "folder" else "documents/folder1/doc1.md"
    assert "Permission denied" in found[name]
    assert {p["source"] for p in validated["problems"]} == {name}
    assert data["documents"]["removed"] == 0
    kept = {"doc-1@1", "doc-3@1", "doc-5@1"} if what == "folder" else {"doc-1@1"}
    assert {i["document"] for i in data["plan"] if i["action"] == "kept"} == kept
    target.chmod(0o755)
    check = SQLiteStore(db, create=False)
    assert {r.key for r in check.documents()} == {f"doc-{i}@1" for i in range(6)}
    check.close()
    code, again = _cli_as_user(prefix, "run", str(corpus), *store_args)
    assert code == 0 and again["documents"]["unchanged"] == 6


def test_an_unreadable_documents_folder_is_a_problem_not_an_empty_corpus(shared_dir):
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be taken away from root")
    corpus = make_corpus(shared_dir / "corpus")
    db = shared_dir / "index.sqlite"
    assert _cli_as_user(prefix, "run", str(corpus), "--store", f"sqlite:///{db}")[0] == 0
    (corpus / "documents").chmod(0o000)
    code, data = _cli_as_user(prefix, "run", str(corpus), "--store", f"sqlite:///{db}")
    (corpus / "documents").chmod(0o755)
    assert code == 1 and data["documents"]["removed"] == 0
    assert "unreadable folder" in data["problems"][0]["problems"][0]


def test_a_file_that_changes_during_the_run_is_a_problem_not_a_wrong_version(corpus):
    """Read once for its hash and metadata, again for its body: other bytes the second time
    are refused (run again), never indexed under the first read's hash."""
    import hashlib

    settings = load_settings(corpus)
    path = corpus / "documents/folder0/doc0.md"
    scan = scan_corpus(corpus, settings, skip_body={hashlib.sha256(path.read_bytes()).hexdigest()})
    path.write_text(path.read_text(encoding="utf-8") + "\nAppended while the run was going.\n", encoding="utf-8")
    plan = pipeline.plan_sync(scan, [], settings.chunking)
    assert "changed while this run was reading it" in problems_by_source(plan)["documents/folder0/doc0.md"]
    assert [i.action for i in plan.items if i.key == "doc-0@1"] == ["rejected"]
    assert "doc-0" in plan.held and len(plan.to_write) == 5


def test_validate_refuses_an_immense_token_as_run_does(corpus, store):
    write_doc(corpus, "big/token.md", "big-token", extra="\n" + "z" * 40_000 + "\n")
    scan = scan_corpus(corpus, load_settings(corpus))
    assert "32766-byte term limit" in problems_by_source(scan)["documents/big/token.md"]
    result = run(corpus, store)
    assert "32766-byte term limit" in problems_by_source(result.plan)["documents/big/token.md"]
    assert result.to_json()["documents"]["rejected"] == 1 and result.to_json()["documents"]["indexed"] == 6


def test_an_unreadable_ingest_toml_is_a_configuration_error(shared_dir):
    """Exit 2 naming the file (the user's to fix), never exit 4 "a bug"."""
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be taken away from root")
    corpus = make_corpus(shared_dir / "corpus")
    (corpus / "ingest.toml").write_text('[chunking]\nsize = 120\n', encoding="utf-8")
    (corpus / "ingest.toml").chmod(0o000)
    done = subprocess.run([*prefix, sys.executable, "-m", "ingest.cli", "validate", str(corpus)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert "ingest.toml: cannot be read" in done.stderr and "Traceback" not in done.stderr
