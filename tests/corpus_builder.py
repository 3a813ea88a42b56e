"""Write small, valid corpora for pipeline tests (Markdown with front matter)."""

from __future__ import annotations

from pathlib import Path

WORDS = (
    "anchor hull keel rudder propeller engine gearbox impeller filter pump valve gasket "
    "throttle tiller bilge winch cleat fender mooring ballast compass radar sonar beacon"
).split()


def body(doc_id: str, n_sections: int = 3, words: int = 60, salt: str = "") -> str:
    parts = [f"# {doc_id.title()} overview"]
    for s in range(n_sections):
        parts.append(f"## Section {s + 1} of {doc_id}")
        text = " ".join(WORDS[(s * 7 + i + len(doc_id)) % len(WORDS)] for i in range(words))
        parts.append(f"The {doc_id} {salt} section {s + 1} covers {text}.")
    return "\n\n".join(parts) + "\n"


def write_doc(
    root: Path,
    rel: str,
    doc_id: str,
    version: str = "1",
    access: str = "public",
    salt: str = "",
    extra: str = "",
    **kwargs,
) -> Path:
    path = root / "documents" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    front = [f"doc_id: {doc_id}", f'version: "{version}"', f'title: "{doc_id.title()}: a test document"', f"access: {access}"]
    front += [f"{k}: {v}" for k, v in kwargs.items()]
    path.write_text("---\n" + "\n".join(front) + "\n---\n" + body(doc_id, salt=salt) + extra, encoding="utf-8")
    return path


def make_corpus(root: Path, n: int = 6) -> Path:
    for i in range(n):
        access = ("public", "partner", "staff")[i % 3]
        write_doc(root, f"folder{i % 2}/doc{i}.md", f"doc-{i}", access=access)
    return root
