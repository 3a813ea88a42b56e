"""A corpus's ``inventory.yaml`` as the scan uses it: its bytes (which the scan memo's fingerprint covers),
its entries, the problems of the file itself, entries that name no file, and what an entry declares for a
path that cannot be read."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ingest.listing import DOCUMENTS, CorpusError, Listing, read_document
from ingest.metadata import INVENTORY, Visibility, entry_visibility, path_as_read, read_inventory
from ingest.model import UnreadableFile


def inventory_bytes(root: Path) -> tuple[bytes | None, list[str]]:
    """inventory.yaml's bytes (None when there is none), or the problem reading it."""
    path = root / INVENTORY
    if not path.exists():
        return None, []
    if not path.is_file():
        return None, [f"{INVENTORY}: not a file"]
    try:
        return read_document(path), []
    except OSError as exc:
        return None, [f"{INVENTORY}: unreadable file: {exc.strerror or exc}"]
    except UnreadableFile as exc:
        return None, [f"{INVENTORY}: unreadable file: {exc}"]


def parse_inventory(data: bytes | None) -> tuple[Mapping[str, Mapping[str, Any]], list[str]]:
    if data is None:
        return {}, []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return {}, [f"{INVENTORY}: not UTF-8: {exc.reason} at byte {exc.start}"]
    return read_inventory(text, INVENTORY)


def entries_for_files(
    root: Path, inventory: Mapping[str, Mapping[str, Any]], listing: Listing
) -> dict[str, Mapping[str, Any]]:
    """The inventory keyed by the listed files' own paths (relative to documents/): an entry names every
    file whose path reads the same (NFC or NFD, "./a.md", "sub\\a.md"), as its duplicate-key check reads
    keys — "café.md" written in NFC names the file stored in NFD, never "no file" while the file goes in
    under another label. (Keys are unique as read: two keys naming one file are refused before this.)"""
    by_read_path = {path_as_read(key): entry for key, entry in inventory.items()}
    matched = dict(inventory)  # keys naming no listed file stay (a folder that could not be listed)
    for name in _present(root, listing):
        entry = by_read_path.get(path_as_read(name)) if name not in inventory else None
        if entry is not None:
            matched[name] = entry
    return matched


def bad_inventory(problems: list[str]) -> CorpusError:
    # Checking documents without the fields the inventory gives could index a guess (a defaulted
    # access label for a confidential file): stop, as for a bad ingest.toml.
    return CorpusError("; ".join(problems) + " (fix inventory.yaml: nothing was checked or written)")


def inventory_visibility(
    listing: Listing, inventory: Mapping[str, Mapping[str, Any]]
) -> dict[str, tuple[str, Visibility | None]]:
    """Paths that could not be read, with the access, dates and status their inventory entry gives (its
    own fields only): a stored version the inventory now narrows must not be kept as it was."""
    found: dict[str, tuple[str, Visibility | None]] = {}
    for problem in listing.file_problems:
        declared = entry_visibility(inventory.get(problem.source.removeprefix(DOCUMENTS + "/")))
        if declared:
            found[problem.source] = ("", declared)
    # files in a folder that could not be listed: their entries count as much as an unreadable file's
    unlisted = tuple(p.source.removeprefix(DOCUMENTS + "/") + "/" for p in listing.folder_problems)
    for name in sorted(inventory) if unlisted else ():
        declared = entry_visibility(inventory.get(name)) if name.startswith(unlisted) else None
        if declared:
            found.setdefault(f"{DOCUMENTS}/{name}", ("", declared))
    return found


def _present(root: Path, listing: Listing) -> set[str]:
    """Every listed path relative to documents/, unreadable files included."""
    present = {source.removeprefix(DOCUMENTS + "/") for source in listing.sources}  # paths under documents/
    return present | {p.source.removeprefix(DOCUMENTS + "/") for p in listing.file_problems}


def entries_naming_no_file(root: Path, inventory: Mapping[str, Mapping[str, Any]], listing: Listing) -> list[str]:
    present = {path_as_read(name) for name in _present(root, listing)}
    # an entry under a folder that could not be listed may well name a file there: that folder is the problem
    unlisted = tuple(p.source.removeprefix(DOCUMENTS + "/") + "/" for p in listing.folder_problems)
    return [
        f"{INVENTORY}: {name}: names no file under {DOCUMENTS}/"
        for name in sorted(inventory)
        if path_as_read(name) not in present and not name.startswith(unlisted)
    ]
