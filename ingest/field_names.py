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
# and when (``access_level: staff``, ``effectiveDate``, ``doc_status``, ``DC.accessRights``): ignored, the
# document would be indexed under the default label, in force on every day or as active. Only as the first
# or last word of a short name: ``citation_access_date`` or ``apple-mobile-web-app-status-bar-style`` (HTML
# meta tags of ordinary pages) name something else.
_EFFECTIVE_END = {"to", "until", "till", "end", "ends", "expires", "expiry", "thru", "through"}
_EFFECTIVE_START = {"from", "since", "start", "starts", "begin", "begins"}
_RANGE = tuple(sorted(_EFFECTIVE_END | _EFFECTIVE_START))
_GUARDED_STEMS = {
    "access": ("", "s", "level", "label", "labels", "class", "group", "role", "roles", "code", "type", "rights"),
    "status": ("", "es", "code", "type", "label"),
    "effective": ("", "date", "dates", "from", "to", "until", "till", "start", "end", "since", "through"),
    "supersed": ("e", "ed", "es", "edby"),
    # the same dates and successor in other words: "valid" only with a word of a range (valid_from,
    # validUntil, validity_end; valid: true and validated name no date); replaced_by, replaces (not replacement)
    "valid": _RANGE,
    "validity": _RANGE,
    "replace": ("s", "dby"),
}
_GUARDED_FIELDS = {"access": "access", "status": "status", "supersed": "superseded_by", "replace": "superseded_by"}
_DATED = ("effective", "valid", "validity")  # effective_from or effective_to; never with a word run in before
_COMPOUND_PREFIX = 4  # "docaccess", "myaccess", "docstatus": a short word run into the stem
_MAX_GUARDED_WORDS = 3
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _visible(name: str) -> str:
    """``name`` in compatibility form without what does not show (format characters such as U+200B,
    combining marks): ``acc\u200bess_level`` is ``access_level``."""
    return "".join(c for c in unicodedata.normalize("NFKD", name) if unicodedata.category(c) not in ("Cf", "Mn"))


def _guarded_stem(word: str) -> str | None:
    for stem, suffixes in _GUARDED_STEMS.items():
        at = word.find(stem)
        if 0 <= at <= _COMPOUND_PREFIX and (at == 0 or stem not in _DATED) and word[at + len(stem) :] in suffixes:
            return stem
    return None


def guarded_lookalike(name: str, known: Collection[str]) -> str | None:
    """The access, status, effective or superseded field an unknown name's words read as, else None
    (valid_from/validUntil and replaced_by/replaces: those dates and that successor in other words)."""
    words = [word.casefold() for word in _WORD.findall(_visible(name))]
    if not words or len(words) > _MAX_GUARDED_WORDS:
        return None
    # the first and last words, alone and run into their neighbour (``DC.accessRights``: access+rights)
    for word in dict.fromkeys((words[0], words[-1], "".join(words[:2]), "".join(words[-2:]))):
        stem = _guarded_stem(word)
        field: str | None
        if stem in _DATED:
            rest = {word[len(stem or "") :], *words}
            field = "effective_to" if rest & _EFFECTIVE_END else "effective_from"
        else:
            field = _GUARDED_FIELDS.get(stem or "")
        if field is not None and field in known:
            return field
    return None


def _unknown_named(name: str, known: Collection[str], lookalikes: bool = True) -> tuple[str, str] | None:
    """(the known field, how the unknown ``name`` names it) or None for a known or unrelated name."""
    folded = field_name(name)
    if folded in known:
        return None
    near = _near_miss(folded, known)
    if near is not None:
        return near, "a near-spelling of"
    lookalike = guarded_lookalike(name, known) if lookalikes else None
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
            given = ""  # the value too, for a near-spelling as for a lookalike: the file may hold many
            if value is not None:
                given = f", given {reprlib.repr(value if isinstance(value, str) else str(value))}"
            found.append(f"{where}: {name}: unknown field, {how} {near!r}{given} (write {near!r}; nothing was guessed)")
    return found


def named_field(name: str, known: Collection[str]) -> str | None:
    """The known field ``name`` is (folded) or is a near-spelling of, else None: what every source
    refuses when a name it does not read as a field names one anyway. (Not names merely *like* an
    access or status field: in prose, "Access control: …" is a title, not a field.)"""
    folded = field_name(name)
    return folded if folded in known else _near_miss(folded, known)
