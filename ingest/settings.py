"""The corpus settings file, ``ingest.toml``, owned here: access labels and roles, required fields,
field patterns, chunking defaults, search language. Missing file or missing keys mean the defaults."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.field_names import field_name

DEFAULT_LABELS = ("public", "partner", "staff")  # most open first
DEFAULT_ROLES = {
    "public": ("public",),
    "partner": ("public", "partner"),
    "staff": ("public", "partner", "staff"),
}
DEFAULT_REQUIRED = ("doc_id", "version", "title", "access")
CHUNKERS = ("structure", "fixed", "overlap")
# [search] language: how both stores analyse text for BM25. "english": stemming and English stop
# words (FTS5 `porter unicode61`, Elasticsearch's `english` analyzer); "none": the plain
# analyzers (FTS5 `unicode61`, Elasticsearch's `standard`).
LANGUAGES = ("english", "none")
DEFAULT_LANGUAGE = "english"


class SettingsError(Exception):
    """ingest.toml is malformed or inconsistent: a configuration error (exit 2)."""


# Lucene refuses a single term longer than this many UTF-8 bytes ("immense term"): a
# heading (a keyword field) or a whitespace-free run of text this long is refused by the
# chunker, for every store alike.
MAX_TERM_BYTES = 32_766
DEFAULT_MAX_CHUNK_BYTES = 65_536  # a chunk longer than this is split between words
MAX_CHUNK_WORDS = 1_000_000  # a size past this is a typo (chunks are cut at max_chunk_bytes anyway)
DEFAULT_MAX_CHUNKS_PER_DOCUMENT = 20_000  # more is refused: not a document, a flood


@dataclass(frozen=True)
class ChunkSettings:
    chunker: str = "structure"
    size: int = 200  # words: the target for structure, the window for fixed and overlap
    overlap: int = 40  # words shared by consecutive windows (overlap chunker)
    max_chunk_bytes: int = DEFAULT_MAX_CHUNK_BYTES  # UTF-8 bytes of one chunk's text
    max_chunks_per_document: int = DEFAULT_MAX_CHUNKS_PER_DOCUMENT

    def describe(self) -> str:
        base = f"overlap:{self.size}:{self.overlap}" if self.chunker == "overlap" else f"{self.chunker}:{self.size}"
        # The byte limit shapes chunks, so it is part of what they were built with; the
        # default is left out so records built before the limit existed stay unchanged.
        if self.max_chunk_bytes != DEFAULT_MAX_CHUNK_BYTES:
            base += f":bytes{self.max_chunk_bytes}"
        # The chunk-count limit decides whether a document is taken at all: a stored version built
        # under another limit is checked again (a lower one refuses, as a fresh build would).
        if self.max_chunks_per_document != DEFAULT_MAX_CHUNKS_PER_DOCUMENT:
            base += f":chunks{self.max_chunks_per_document}"
        return base


@dataclass(frozen=True)
class SearchSettings:
    language: str = DEFAULT_LANGUAGE  # one of LANGUAGES


@dataclass(frozen=True)
class Settings:
    labels: tuple[str, ...] = DEFAULT_LABELS
    roles: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_ROLES))
    required: tuple[str, ...] = DEFAULT_REQUIRED
    patterns: Mapping[str, str] = field(default_factory=dict)
    access_default: str | None = None
    chunking: ChunkSettings = ChunkSettings()
    search: SearchSettings = SearchSettings()

    def labels_for_role(self, role: str) -> tuple[str, ...]:
        try:
            return self.roles[role]
        except KeyError:
            raise SettingsError(f"unknown role {role!r}; configured roles: {', '.join(sorted(self.roles))}") from None


def roles_from_meta(meta: Mapping[str, str], fallback: Settings) -> dict[str, tuple[str, ...]]:
    """The roles the index was built with (so `search` needs no corpus), else the defaults.
    ValueError when the recorded value is not a role → labels map (changed outside ingest)."""
    if "roles" not in meta:
        return dict(fallback.roles)
    try:
        recorded = json.loads(meta["roles"])
    except (TypeError, ValueError):
        recorded = None
    if not isinstance(recorded, dict) or not all(
        isinstance(labels, list) and all(isinstance(label, str) for label in labels) for labels in recorded.values()
    ):
        raise ValueError(f"the recorded roles are not a map of role to labels: {str(meta['roles'])[:80]!r}")
    return {str(role): tuple(labels) for role, labels in recorded.items()}


def roles_to_meta(roles: Mapping[str, Sequence[str]]) -> str:
    """The ``roles`` meta value a store records (read back by :func:`roles_from_meta`)."""
    return json.dumps({role: list(labels) for role, labels in roles.items()})


def load_settings(corpus: Path | None) -> Settings:
    """Read ``CORPUS/ingest.toml`` if it exists; otherwise the defaults."""
    if corpus is None:
        return Settings()
    path = Path(corpus) / "ingest.toml"
    if not path.is_file():
        return Settings()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:  # unreadable (permissions) is the user's to fix, like a missing corpus
        raise SettingsError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    return settings_from_dict(data, origin=str(path))


KNOWN_KEYS: dict[str, set[str] | None] = {
    "access": {"labels", "default"},
    "roles": None,  # any role name
    "metadata": {"required", "patterns"},
    "chunking": {"chunker", "size", "overlap", "max_chunk_bytes", "max_chunks_per_document"},
    "search": {"language"},
}


def _check_known_keys(data: Mapping[str, Any], origin: str) -> None:
    """A misspelt section ([acces]) must not silently fall back to the defaults."""
    for section, value in data.items():
        if section not in KNOWN_KEYS:
            raise SettingsError(f"{origin}: unknown section [{section}]; known: {', '.join(sorted(KNOWN_KEYS))}")
        if not isinstance(value, Mapping):
            raise SettingsError(f"{origin}: [{section}] must be a table")
        allowed = KNOWN_KEYS[section]
        if allowed is None:
            continue
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise SettingsError(f"{origin}: unknown key {section}.{unknown[0]}; known: {', '.join(sorted(allowed))}")


def _string_list(value: Any, where: str, origin: str) -> tuple[str, ...]:
    """A TOML list of non-empty strings (a bare string is not read letter by letter)."""
    if not isinstance(value, list) or not all(isinstance(x, str) and x.strip() for x in value):
        raise SettingsError(
            f'{origin}: {where} must be a list of non-empty strings, e.g. ["public", "staff"]; found {value!r}'
        )
    return tuple(value)


def _integer(value: Any, where: str, origin: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsError(f"{origin}: {where} must be a whole number; found {value!r}")
    return value


def settings_from_dict(data: Mapping[str, Any], origin: str = "ingest.toml") -> Settings:
    _check_known_keys(data, origin)
    access = data.get("access", {}) or {}
    labels = _labels(access, origin)
    meta = data.get("metadata", {}) or {}
    required = _string_list(meta["required"], "metadata.required", origin) if "required" in meta else DEFAULT_REQUIRED
    # field names as every source reads them: case-insensitive, "-" the same as "_"
    required = tuple(dict.fromkeys(field_name(name) for name in required))
    _refuse_near_misses(required, "metadata.required", origin)
    for must in DEFAULT_REQUIRED:
        if must not in required:
            required = required + (must,)
    chunking = _chunking(data.get("chunking", {}) or {}, origin)
    check_chunking(chunking, origin)
    language = (data.get("search", {}) or {}).get("language", DEFAULT_LANGUAGE)
    if language not in LANGUAGES:
        raise SettingsError(f"{origin}: search.language {language!r} is not one of {', '.join(LANGUAGES)}")
    return Settings(
        labels=labels,
        roles=_roles(data.get("roles"), labels, origin),
        required=required,
        patterns=_patterns(meta.get("patterns", {}) or {}, origin),
        access_default=_access_default(access.get("default"), labels, origin),
        chunking=chunking,
        search=SearchSettings(language=language),
    )


MAX_LABEL_LENGTH = 100  # the access field's limit (metadata.MAX_LENGTH)


def _labels(access: Mapping[str, Any], origin: str) -> tuple[str, ...]:
    labels = _string_list(access["labels"], "access.labels", origin) if "labels" in access else DEFAULT_LABELS
    if not labels:
        raise SettingsError(f"{origin}: access.labels must not be empty")
    _no_repeats(labels, "access.labels", origin)
    too_long = [label for label in labels if len(label) > MAX_LABEL_LENGTH]
    if too_long:  # no document could carry it (the access field's limit), and index names would not fit it
        raise SettingsError(
            f"{origin}: access.labels: {too_long[0][:40]!r}… is {len(too_long[0])} characters long; "
            f"a label has at most {MAX_LABEL_LENGTH}"
        )
    return labels


def _no_repeats(labels: tuple[str, ...], where: str, origin: str) -> None:
    # A label given twice is a slip (a typo for another label?): never read past it.
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise SettingsError(f"{origin}: {where} gives {', '.join(map(repr, repeated))} more than once: {list(labels)}")


def _access_default(default: Any, labels: tuple[str, ...], origin: str) -> str | None:
    if default is None:
        return None
    if not isinstance(default, str) or default not in labels:
        raise SettingsError(f"{origin}: access.default {default!r} is not one of the labels {list(labels)}")
    if default == labels[0] or default == "public":
        raise SettingsError(
            f"{origin}: access.default {default!r} is the most open label; "
            "a document without a label must never become public"
        )
    return default


# A role names the Elasticsearch alias {prefix}-chunks-{role}. A '-' or '.' in it, or one of the
# names below, could spell another prefix's alias ("x-chunks-public" under prefix "kb" is the public
# alias of prefix "kb-chunks-x"; "documents" under "kb" is the documents alias of "kb-chunks").
ROLE_NAME = re.compile(r"[a-z0-9][a-z0-9_]*\Z")
RESERVED_ROLE_NAMES = frozenset({"chunks", "documents", "meta"})


def _check_role_name(role: str, origin: str) -> None:
    if not ROLE_NAME.match(role) or role in RESERVED_ROLE_NAMES:
        raise SettingsError(
            f"{origin}: role name {role!r}: use a-z, 0-9 and _ only, and none of "
            f"{', '.join(sorted(RESERVED_ROLE_NAMES))} (it names the alias PREFIX-chunks-ROLE, which must "
            "never be another prefix's alias)"
        )


def _roles(roles_raw: Mapping[str, Any] | None, labels: tuple[str, ...], origin: str) -> dict[str, tuple[str, ...]]:
    if roles_raw is None:
        return {role: tuple(label for label in ls if label in labels) for role, ls in DEFAULT_ROLES.items()}
    roles = {}
    for role, value in roles_raw.items():
        _check_role_name(role, origin)
        role_labels = value.get("labels", []) if isinstance(value, Mapping) else value
        role_labels = _string_list(role_labels, f"roles.{role}", origin) if role_labels != [] else ()
        unknown = [label for label in role_labels if label not in labels]
        if unknown:
            raise SettingsError(f"{origin}: role {role!r} names unknown labels {unknown}")
        _no_repeats(tuple(role_labels), f"roles.{role}", origin)
        roles[role] = tuple(role_labels)
    return roles


def _refuse_near_misses(names: Iterable[str], where: str, origin: str) -> None:
    """A name one slip from a known field (``acess``) would check a field no document has: refuse it."""
    from ingest.field_names import near_miss_problems
    from ingest.metadata import KNOWN_FIELDS

    found = near_miss_problems(f"{origin}: {where}", dict.fromkeys(names), set(KNOWN_FIELDS), lookalikes=False)
    if found:
        raise SettingsError("; ".join(found))


def _patterns(patterns_raw: Any, origin: str) -> dict[str, str]:
    if not isinstance(patterns_raw, Mapping):
        raise SettingsError(f'{origin}: metadata.patterns must be a table of field = "regex"; found {patterns_raw!r}')
    # names as every source reads them: case-insensitive, "-" the same as "_" (effective-to is effective_to)
    patterns = {field_name(name): pattern for name, pattern in patterns_raw.items()}
    if len(patterns) < len(patterns_raw):
        raise SettingsError(f"{origin}: metadata.patterns names one field twice: {sorted(map(str, patterns_raw))}")
    _refuse_near_misses(patterns, "metadata.patterns", origin)
    for name, pattern in patterns.items():
        if not isinstance(pattern, str):
            raise SettingsError(f"{origin}: metadata.patterns.{name} must be a string; found {pattern!r}")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SettingsError(f"{origin}: metadata.patterns.{name} {pattern!r} is not a valid regex: {exc}") from None
    return patterns


def _chunking(chunk: Mapping[str, Any], origin: str) -> ChunkSettings:
    chunker = chunk.get("chunker", "structure")
    if not isinstance(chunker, str):
        raise SettingsError(f"{origin}: chunking.chunker must be a string; found {chunker!r}")
    return ChunkSettings(
        chunker=chunker,
        size=_integer(chunk.get("size", 200), "chunking.size", origin),
        overlap=_integer(chunk.get("overlap", 40), "chunking.overlap", origin),
        max_chunk_bytes=_integer(
            chunk.get("max_chunk_bytes", DEFAULT_MAX_CHUNK_BYTES), "chunking.max_chunk_bytes", origin
        ),
        max_chunks_per_document=_integer(
            chunk.get("max_chunks_per_document", DEFAULT_MAX_CHUNKS_PER_DOCUMENT),
            "chunking.max_chunks_per_document",
            origin,
        ),
    )


def chunking_with(
    base: ChunkSettings, chunker: str | None, size: int | None, overlap: int | None, origin: str
) -> ChunkSettings:
    """The chunking of a run: arguments (flags) over the corpus's ingest.toml, checked."""
    chunking = ChunkSettings(
        chunker or base.chunker, base.size if size is None else size, base.overlap if overlap is None else overlap
    )
    check_chunking(chunking, origin)
    return chunking


def check_chunking(chunking: ChunkSettings, origin: str = "options") -> None:
    if chunking.chunker not in CHUNKERS:
        raise SettingsError(f"{origin}: unknown chunker {chunking.chunker!r}; choose one of {', '.join(CHUNKERS)}")
    if chunking.size < 10:
        raise SettingsError(f"{origin}: chunk size {chunking.size} is below 10 words")
    if chunking.size > MAX_CHUNK_WORDS:
        raise SettingsError(f"{origin}: chunk size {chunking.size} is above {MAX_CHUNK_WORDS:,} words")
    if chunking.max_chunk_bytes <= MAX_TERM_BYTES:
        # Every word a chunk may hold must fit in one chunk, or splitting could not end.
        raise SettingsError(
            f"{origin}: chunking.max_chunk_bytes {chunking.max_chunk_bytes} must be above "
            f"Lucene's term limit of {MAX_TERM_BYTES} bytes"
        )
    if chunking.max_chunks_per_document < 1:
        raise SettingsError(
            f"{origin}: chunking.max_chunks_per_document {chunking.max_chunks_per_document} must be ≥ 1"
        )
    if chunking.chunker == "overlap" and not 0 <= chunking.overlap < chunking.size:
        raise SettingsError(f"{origin}: overlap {chunking.overlap} must be ≥ 0 and below the size {chunking.size}")
