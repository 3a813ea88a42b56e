"""The embedded store on a disk that fills up, turns read-only or holds a damaged file:
one clear line and exit 3, never a traceback; a failed write rolls back whole; the next
run repairs once the disk is fine; a failed --full leaves the old file intact. And a run
that waited for a --full rebuild writes into the new file, not the replaced one."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest import pipeline
from ingest.settings import load_settings
from ingest.store.sqlite import SQLiteStore
from tests.corpus_builder import make_corpus, write_doc

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, env=None) -> tuple[int, dict, str]:
    done = subprocess.run([sys.executable, "-m", "ingest.cli", *args, "--json"], capture_output=True, text=True, cwd=ROOT, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


def _fds(pid: int) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []


def snapshot(store):
    chunks = sorted((c.to_json() for c in store.iter_chunks()), key=lambda c: c["chunk_id"])
    docs = sorted((r.to_json() for r in store.documents()), key=lambda r: (r["doc_id"], r["version"]))
    return chunks, docs


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs (root only); remount(size) changes it, readonly() makes it read-only."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.decode().strip()}")

    class Disk:
        path = mount

        def remount(self, options: str) -> None:
            subprocess.run(["mount", "-o", f"remount,{options}", str(mount)], check=True)

    yield Disk()
    subprocess.run(["umount", "-l", str(mount)], check=False)


def add_docs(corpus: Path, first: int, n: int) -> None:
    for i in range(first, first + n):
        write_doc(corpus, f"more/doc{i}.md", f"doc-{i}", salt=" ".join(f"word{i}x{j}" for j in range(150)))


def test_disk_full_mid_run_is_exit_3_and_the_next_run_repairs_once_space_is_back(tmp_path, small_disk):
    corpus = make_corpus(tmp_path / "corpus")
    db = small_disk.path / "index.sqlite"
    url = f"sqlite:///{db}"
    assert cli("run", str(corpus), "--store", url)[0] == 0
    add_docs(corpus, 100, 200)
    code, data, _ = cli("run", str(corpus), "--store", url, env={**__import__("os").environ, "INGEST_WRITE_BATCH_CHUNKS": "50"})
    assert code == 3 and "disk is full" in data["error"] and "\n" not in data["error"]
    code, data, _ = cli("run", str(corpus), "--store", url)  # still full: the repair fails the same clean way
    assert code == 3 and "disk is full" in data["error"]
    small_disk.remount("size=64m")
    code, data, _ = cli("run", str(corpus), "--store", url)
    assert code == 0, data
    store = SQLiteStore(db)
    clean = SQLiteStore(tmp_path / "clean.sqlite")
    settings = load_settings(corpus)
    pipeline.run(corpus, clean, settings, settings.chunking, full=True)
    assert snapshot(store) == snapshot(clean)
    assert pipeline.verify(corpus, store, settings).ok
    store.close()
    clean.close()


def test_full_rebuild_on_a_full_disk_leaves_the_old_file_intact(tmp_path, small_disk):
    corpus = make_corpus(tmp_path / "corpus")
    db = small_disk.path / "index.sqlite"
    url = f"sqlite:///{db}"
    assert cli("run", str(corpus), "--store", url)[0] == 0
    before = snapshot(SQLiteStore(db))
    add_docs(corpus, 100, 200)
    code, data, _ = cli("run", str(corpus), "--store", url, "--full")
    assert code == 3 and "disk is full" in data["error"]
    assert sorted(p.name for p in small_disk.path.iterdir() if "building" in p.name) == []
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    store = SQLiteStore(db)
    assert snapshot(store) == before
    store.close()
    code, data, _ = cli("search", "anchor", "--store", url)
    assert code == 0 and data["hits"]


def test_a_read_only_disk_is_exit_3_with_one_line(tmp_path, small_disk):
    corpus = make_corpus(tmp_path / "corpus")
    url = f"sqlite:///{small_disk.path / 'index.sqlite'}"
    assert cli("run", str(corpus), "--store", url)[0] == 0
    write_doc(corpus, "folder0/doc0.md", "doc-0", version="2", salt="changed")
    small_disk.remount("ro")
    code, data, _ = cli("run", str(corpus), "--store", url)
    assert code == 3 and "read-only" in data["error"], data
    code, data, _ = cli("run", str(corpus), "--store", f"sqlite:///{small_disk.path / 'new' / 'index.sqlite'}")
    assert code == 3 and "read-only" in data["error"], data


def test_a_damaged_file_is_exit_3_for_run_and_verify(tmp_path):
    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "index.sqlite"
    url = f"sqlite:///{db}"
    assert cli("run", str(corpus), "--store", url)[0] == 0
    SQLiteStore(db).close()
    data = bytearray(db.read_bytes())
    for offset in range(4096, len(data), 4096):  # every page after the header page
        data[offset:offset + 64] = b"\xde\xad" * 32
    db.write_bytes(bytes(data))
    for command in ("run", "verify"):
        code, out, _ = cli(command, str(corpus), "--store", url)
        assert code == 3 and "damaged" in out["error"], (command, out)


def test_a_run_that_waited_for_a_full_rebuild_writes_into_the_new_file(tmp_path):
    """The lost update: B waits (--wait) while A rebuilds with --full; B must plan and write
    against the file A renamed into place, and its document must be there afterwards."""
    corpus = make_corpus(tmp_path / "corpus", n=120)
    db = tmp_path / "index.sqlite"
    url = f"sqlite:///{db}"
    assert cli("run", str(corpus), "--store", url)[0] == 0
    other = tmp_path / "other"
    subprocess.run(["cp", "-r", str(corpus), str(other)], check=True)
    write_doc(other, "late/extra.md", "extra-doc")
    go = tmp_path / "go"
    full = subprocess.Popen(
        [sys.executable, "-m", "tests.crash_run", "--pause-until", str(go), "run", str(corpus), "--store", url, "--full", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        lock = Path(f"{db}.lock")
        while str(full.pid) not in (lock.read_text() if lock.exists() else ""):  # A holds the lock, paused
            assert full.poll() is None, full.communicate()
            time.sleep(0.05)
        waiting = subprocess.Popen(
            [sys.executable, "-m", "ingest.cli", "run", str(other), "--store", url, "--wait", "300", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        )
        # B has read the old file, planned nothing yet, and waits for the lock (it holds the lock file open).
        while not any(str(lock) == os.path.realpath(f"/proc/{waiting.pid}/fd/{fd}") for fd in _fds(waiting.pid)):
            assert waiting.poll() is None, waiting.communicate()
            time.sleep(0.05)
    finally:
        go.touch()  # never leave A paused, whatever happened
    out, err = waiting.communicate()
    code, waited = waiting.returncode, json.loads(out)
    _, err = full.communicate()
    assert full.returncode == 0, err
    assert code == 0 and waited["documents"]["indexed"] == 1, waited
    store = SQLiteStore(db)
    assert "extra-doc@1" in {r.key for r in store.documents()}
    assert pipeline.verify(other, store, load_settings(other)).ok
    store.close()
