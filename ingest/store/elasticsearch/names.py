"""The names of one prefix's indices and aliases, and the build suffixes of its concrete indices."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ingest.settings import Settings, SettingsError

NAME_PART = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")
BUILD_PATTERN = r"\d{8}t\d{6}-[0-9a-f]{6}"  # exactly what new_build() makes
AliasPair = tuple[str, str]


def new_build() -> str:
    """A build suffix: sortable UTC time plus randomness (no ``_``, lowercase)."""
    import secrets  # here: it imports hmac, and only a run that creates indices needs it

    return datetime.now(UTC).strftime("%Y%m%dt%H%M%S") + "-" + secrets.token_hex(3)


def build_of(index: str) -> str:
    return index.rsplit("_", 1)[-1]


def check_names(prefix: str, settings: Settings) -> None:
    """Labels, roles and the prefix must be able to name indices and aliases (lowercase slugs)."""
    for kind, names in (("access label", settings.labels), ("role", settings.roles)):
        for name in names:
            if not NAME_PART.match(name):
                raise SettingsError(
                    f"{kind} {name!r} cannot name an Elasticsearch index or alias: "
                    "use lowercase letters, digits, '.', '_' and '-'"
                )
    if prefix[:1] and NAME_PART.match("a" + prefix[1:]) and not NAME_PART.match(prefix):
        raise SettingsError(
            f"index prefix {prefix!r}: must start with a lowercase letter or a digit, not {prefix[0]!r}"
        )
    if not NAME_PART.match(prefix):
        raise SettingsError(f"index prefix {prefix!r}: use lowercase letters, digits, '.', '_' and '-'")
    # Index names are at most 255 bytes: the longest is {prefix}-chunks_{label}_{build}.
    longest = max((len(label.encode()) for label in settings.labels), default=0)
    if len(prefix.encode()) + len("-chunks__") + longest + len(new_build()) > 255:
        raise SettingsError(
            f"index prefix {prefix[:40]!r}… ({len(prefix)} characters) is too long: index names would pass "
            "Elasticsearch's 255-byte limit; use a shorter --index-prefix"
        )


class IndexNames:
    """Every name of one prefix (aliases readers use, concrete indices of a build)."""

    def __init__(self, prefix: str):
        self.prefix = prefix

    @property
    def all_alias(self) -> str:
        return f"{self.prefix}-chunks"

    def role_alias(self, role: str) -> str:
        return f"{self.prefix}-chunks-{role}"

    @property
    def documents_alias(self) -> str:
        return f"{self.prefix}-documents"

    @property
    def meta_index(self) -> str:
        return f"{self.prefix}-meta"

    def chunk_index(self, label: str, build: str) -> str:
        return f"{self.prefix}-chunks_{label}_{build}"

    def documents_index(self, build: str) -> str:
        return f"{self.prefix}-documents_{build}"

    def label_of_index(self, index: str) -> str | None:
        """The label of one of this prefix's chunk indices, matched exactly (build suffix format)."""
        found = re.fullmatch(re.escape(f"{self.prefix}-chunks_") + r"([a-z0-9][a-z0-9._-]*)_" + BUILD_PATTERN, index)
        return found[1] if found else None

    def is_documents_index(self, index: str) -> bool:
        return re.fullmatch(re.escape(f"{self.prefix}-documents_") + BUILD_PATTERN, index) is not None

    def build_indices(self, labels: Iterable[str], build: str) -> tuple[dict[str, str], str]:
        """(label -> chunk index, documents index) of one build."""
        return {label: self.chunk_index(label, build) for label in labels}, self.documents_index(build)

    def desired_aliases(
        self, label_index: Mapping[str, str], documents_index: str, roles: Mapping[str, Sequence[str]]
    ) -> set[AliasPair]:
        """(index, alias) pairs of a complete layout for these labels and roles."""
        pairs = {(index, self.all_alias) for index in label_index.values()}
        for role, labels in roles.items():
            pairs |= {(label_index[label], self.role_alias(role)) for label in labels if label in label_index}
        pairs.add((documents_index, self.documents_alias))
        return pairs

    def alias_filter(self, alias: str, roles: Mapping[str, Sequence[str]]) -> dict[str, Any] | None:
        """The filter a role alias carries: only chunks whose access label the role may read, whatever
        index they sit in (a chunk copied into the wrong label's index is never returned through it).
        The other aliases (all chunks, documents) carry none."""
        role_prefix = f"{self.all_alias}-"
        if not alias.startswith(role_prefix):
            return None
        labels = roles.get(alias[len(role_prefix) :])
        return None if labels is None else {"terms": {"access": sorted(labels)}}
