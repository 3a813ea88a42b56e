"""`run --junit`: one test case per document the run saw, each once; a rejected document is one
failed case (never also a passing one), so CI's counts equal the folder's."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.conftest import CONNECTION_ENV
from tests.corpus_builder import make_corpus, write_doc

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    return subprocess.run([sys.executable, "-m", "ingest.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)  # fmt: skip


def cases(report: Path) -> list[tuple[str, bool]]:
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    found = [(c.get("name") or "", c.find("failure") is not None) for c in suite.iter("testcase")]
    assert suite.get("tests") == str(len(found)) and suite.get("failures") == str(sum(f for _, f in found))
    return found


def test_an_edit_without_a_version_bump_is_one_failed_case(tmp_path, store_args):
    corpus = make_corpus(tmp_path / "corpus", n=6)
    assert cli("run", corpus, *store_args).returncode == 0
    write_doc(corpus, "folder0/doc0.md", "doc-0", salt="edited without a new version")
    done = cli("run", corpus, *store_args, "--junit", tmp_path / "run.xml")
    assert done.returncode == 1, done.stdout + done.stderr
    found = cases(tmp_path / "run.xml")
    names = [name.split(" (")[0] for name, _ in found]
    assert len(names) == len(set(names)) == 6, found  # one case per document, none twice
    assert [name for name, failed in found if failed] == ["documents/folder0/doc0.md (doc-0)"], found
