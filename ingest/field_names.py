"""How metadata field names are read, the same in every source (front matter, inventory.yaml, HTML
``<meta name>``, PDF information keys, ingest.toml): case-insensitive, ``-`` the same as ``_``, and a
near-spelling of a known field a problem rather than a field silently ignored."""

from __future__ import annotations

import re
import reprlib
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


# Words that make an unknown field name read as one of the fields that decide who may read a passage
# and when (``access_level: staff``, ``effectiveDate``, ``doc_status``, ``supersededBy``): ignored, the
# document would be indexed under the default label, in force on every day or as active.
_GUARDED_WORDS = {"access": "access", "status": "status"}
_GUARDED_SUFFIXES = ("", "s", "level", "label", "labels", "class", "group", "role", "roles", "code", "type")
_EFFECTIVE_END = {"to", "until", "till", "end", "ends", "expires", "expiry", "thru", "through"}
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _guarded_lookalike(name: str, known: Collection[str]) -> str | None:
    """The access, status, effective or superseded field an unknown name's words read as, else None."""
    words = [word.casefold() for word in _WORD.findall(unicodedata.normalize("NFKC", name))]
    for word in words:
        for stem, field in _GUARDED_WORDS.items():
            if word.startswith(stem) and word[len(stem) :] in _GUARDED_SUFFIXES and field in known:
                return field
        if word.startswith("supersed") and "superseded_by" in known:
            return "superseded_by"
        if word.startswith("effective") and "effective_from" in known:
            rest = {word[len("effective") :], *words}
            return "effective_to" if rest & _EFFECTIVE_END else "effective_from"
    return None


def _unknown_named(name: str, known: Collection[str], lookalikes: bool = True) -> tuple[str, str] | None:
    """(the known field, how the unknown ``name`` names it) or None for a known or unrelated name."""
    folded = field_name(name)
    if folded in known:
        return None
    near = _near_miss(folded, known)
    if near is not None:
        return near, "a near-spelling of"
    lookalike = _guarded_lookalike(name, known) if lookalikes else None
    return (lookalike, "named like") if lookalike is not None else None


def near_miss_problems(
    where: str, fields: Mapping[str, Any], known: Collection[str], *, lookalikes: bool = True
) -> list[str]:
    """A problem for each unknown field name that is a near-spelling of a known one, or whose words
    read as an access, status or date field: dropping ``efective_to``, ``acess`` or ``access_level``
    silently would index the document as if they were not there. ``lookalikes=False``: near-spellings
    only (the settings' own field names, where ``review_status`` may be a field of the user's)."""
    found = []
    for name in fields:
        named = _unknown_named(str(name), known, lookalikes)
        if named is not None:
            near, how = named
            value = fields[name]
            given = ""
            if value is not None and how == "named like":
                given = f", given {reprlib.repr(value if isinstance(value, str) else str(value))}"
            found.append(f"{where}: {name}: unknown field, {how} {near!r}{given} (write {near!r}; nothing was guessed)")
    return found


def named_field(name: str, known: Collection[str]) -> str | None:
    """The known field ``name`` is (folded) or is a near-spelling of, else None: what every source
    refuses when a name it does not read as a field names one anyway. (Not names merely *like* an
    access or status field: in prose, "Access control: …" is a title, not a field.)"""
    folded = field_name(name)
    return folded if folded in known else _near_miss(folded, known)
