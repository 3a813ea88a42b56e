"""How metadata field names are read, the same in every source (front matter, inventory.yaml, HTML
``<meta name>``, PDF information keys, ingest.toml): case-insensitive, ``-`` the same as ``_``, and a
near-spelling of a known field a problem rather than a field silently ignored."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping
from typing import Any


def field_name(name: object) -> str:
    """A field name as every source is read: compatibility-normalised (NFKC: the ligature in ``eﬀective_to``
    is two letters) and case-folded (``acceß`` is access), ``-`` the same as ``_`` (``Effective-To`` is
    effective_to), so no spelling of a known field is silently ignored."""
    return unicodedata.normalize("NFKC", str(name)).casefold().replace("-", "_")


def fold_field_names(fields: Mapping[str, Any]) -> dict[str, list[tuple[str, Any]]]:
    """Every (name as written, value) of ``fields`` under its folded name (:func:`field_name`), in order.
    ``Access: staff`` next to ``access: public`` is one field given twice, never one value picked."""
    folded: dict[str, list[tuple[str, Any]]] = {}
    for name, value in fields.items():
        folded.setdefault(field_name(name), []).append((str(name), value))
    return folded


def _near_miss(name: str, known: Collection[str]) -> str | None:
    """The known field ``name`` (folded, not itself known) is one slip away from: the same letters
    without separators or spaces, or one letter added, dropped, changed or two swapped (names of 4+)."""
    squeezed = re.sub(r"[\W_]", "", name)
    for field in known:
        if squeezed == field.replace("_", "") or (len(field) >= 4 and _one_edit_apart(name, field)):
            return field
    return None


def _one_edit_apart(a: str, b: str) -> bool:
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        swapped = (
            len(diffs) == 2 and diffs[1] == diffs[0] + 1 and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]]
        )
        return len(diffs) == 1 or swapped
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def near_miss_problems(where: str, fields: Mapping[str, Any], known: Collection[str]) -> list[str]:
    """A problem for each unknown field name that is a near-spelling of a known one: dropping
    ``efective_to`` or ``acess`` silently would index the document as if they were not there."""
    found = []
    for name in fields:
        folded = field_name(name)
        near = None if folded in known else _near_miss(folded, known)
        if near is not None:
            found.append(
                f"{where}: {name}: unknown field, a near-spelling of {near!r} (write {near!r}; nothing was guessed)"
            )
    return found


def named_field(name: str, known: Collection[str]) -> str | None:
    """The known field ``name`` is (folded) or is a near-spelling of, else None: what every source
    refuses when a name it does not read as a field names one anyway."""
    folded = field_name(name)
    return folded if folded in known else _near_miss(folded, known)
