"""Files shipped inside the package, owned here: the Elasticsearch index bodies (``mappings/``).

``mappings/`` at the top of the repository is the one copy people read and edit; the build
(setup.py) copies ``mappings/*.json`` into the wheel as ``ingest/mappings/``. An installed package
reads that copy with :mod:`importlib.resources`; a source checkout (editable install, tests run
from the repository) has no ``ingest/mappings/`` and reads the top-level folder itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CHECKOUT_MAPPINGS = Path(__file__).resolve().parents[1] / "mappings"


def mapping_text(name: str) -> str:
    """The text of ``mappings/{name}.json`` (``name``: chunks, documents or meta)."""
    here = Path(__file__)
    # A package installed in a folder: what importlib.resources would read, without importing it (it
    # imports zipfile and tempfile, a tenth of a no-op run's own imports); elsewhere (a zip) it reads.
    if here.is_file():
        on_disk = here.parent / "mappings" / f"{name}.json"
        if on_disk.is_file():
            return on_disk.read_text(encoding="utf-8")
    else:
        from importlib import resources

        packaged = resources.files("ingest") / "mappings" / f"{name}.json"
        if packaged.is_file():
            return packaged.read_text(encoding="utf-8")
    checkout = CHECKOUT_MAPPINGS / f"{name}.json"
    if checkout.is_file():
        return checkout.read_text(encoding="utf-8")
    raise FileNotFoundError(
        f"index mapping {name}.json is neither in the installed package (ingest/mappings/) "
        f"nor in a source checkout ({CHECKOUT_MAPPINGS}): reinstall ingest"
    )


def load_mapping(name: str) -> dict[str, Any]:
    """``mappings/{name}.json`` parsed: a fresh dict each call, safe to modify."""
    body: dict[str, Any] = json.loads(mapping_text(name))
    return body
