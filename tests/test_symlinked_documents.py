"""A symlink inside documents/ to a file the folder lists itself is a second name for one document: it is
reported (naming the file it points to) and not read again, and the file is indexed from its own path —
never both rejected as two files declaring one doc_id and version. Links the folder cannot follow stay
problems naming them: out of the corpus, dangling, loops, folders."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import cli_json as cli

DOC = '---\ndoc_id: {0}\nversion: "1"\ntitle: {0}\naccess: public\n---\n# {0}\n\nPelicans of {0}.\n'


def problems(data: dict) -> dict[str, str]:
    return {p["source"]: " | ".join(p["problems"]) for p in data["problems"]}


def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "c"
    docs = root / "documents"
    (docs / "sub").mkdir(parents=True)
    (docs / "policy.md").write_text(DOC.format("policy"))
    os.symlink("policy.md", docs / "current.md")  # relative, sorts before its file
    os.symlink(docs / "policy.md", docs / "sub" / "absolute.md")  # absolute
    os.symlink("../current.md", docs / "sub" / "chain.md")  # a link to the link
    (root / "shared").mkdir()  # inside the corpus, outside documents/: read through the first link only
    (root / "shared" / "notes.md").write_text(DOC.format("notes"))
    os.symlink("../shared/notes.md", docs / "notes-a.md")
    os.symlink("../shared/notes.md", docs / "notes-b.md")
    return root


LINKED = {
    "documents/current.md": "documents/policy.md",
    "documents/sub/absolute.md": "documents/policy.md",
    "documents/sub/chain.md": "documents/policy.md",
    "documents/notes-b.md": "documents/notes-a.md",
}


def test_a_symlink_to_a_listed_file_is_reported_and_the_file_indexed_once(tmp_path):
    root = corpus(tmp_path)
    code, data = cli("validate", root)
    assert code == 1, data
    said = problems(data)
    assert set(said) == set(LINKED), said
    for link, target in LINKED.items():
        assert said[link] == (
            f"{link}: symbolic link to {target}, which is listed itself: not read a second time "
            f"(the document is read from {target}); remove the link"
        ), said[link]
    assert data["valid"] == 2 and data["rejected"] == 4, data

    store = ["--store", f"sqlite:///{tmp_path / 'index.sqlite'}"]
    code, ran = cli("run", root, *store)
    assert code == 1, ran
    assert ran["documents"]["indexed"] == 2, ran["documents"]
    hits = cli("search", "pelicans", *store)[1]["hits"]
    assert sorted((hit["doc_id"], hit["text"].split("\n")[0]) for hit in hits) == [
        ("notes", "notes"),
        ("policy", "policy"),
    ]
    sources = {c["doc_id"]: c["source"] for d in ("policy", "notes") for c in cli("chunks", d, *store)[1]["chunks"]}
    assert sources == {"policy": "documents/policy.md", "notes": "documents/notes-a.md"}, sources


def test_links_the_folder_cannot_follow_stay_named_problems(tmp_path):
    root = tmp_path / "c"
    docs = root / "documents"
    docs.mkdir(parents=True)
    (docs / "policy.md").write_text(DOC.format("policy"))
    outside = tmp_path / "outside.md"
    outside.write_text(DOC.format("outside"))
    os.symlink(outside, docs / "out.md")
    os.symlink("missing.md", docs / "dangling.md")
    os.symlink("loop.md", docs / "loop.md")
    os.symlink(".", docs / "here")  # a folder: never entered (no walk in circles)
    os.symlink(tmp_path, docs / "up.md")  # a folder named like a document
    code, data = cli("validate", root)
    assert code == 1
    said = problems(data)
    assert "symbolic link to a file outside the corpus: not followed" in said["documents/out.md"]
    assert "broken symlink (its target does not exist)" in said["documents/dangling.md"]
    assert "symlink loop" in said["documents/loop.md"]
    assert "symbolic link to a folder: not entered" in said["documents/here"]
    assert "symbolic link to a folder: not entered" in said["documents/up.md"]
    assert data["valid"] == 1, data
