"""An index prefix whose first character cannot start an index name ("-x", "_x") says so."""

from __future__ import annotations

import pytest

from ingest.settings import Settings, SettingsError
from ingest.store.elasticsearch.names import check_names


@pytest.mark.parametrize("prefix", ["-x", "_x", ".kb"])
def test_a_prefix_starting_with_a_separator_names_its_first_character(prefix):
    with pytest.raises(SettingsError, match=rf"index prefix '{prefix}': must start with a lowercase letter or a digit"):
        check_names(prefix, Settings())


def test_other_bad_prefixes_keep_the_character_rule():
    with pytest.raises(SettingsError, match="use lowercase letters, digits"):
        check_names("kB", Settings())
    check_names("kb-1", Settings())
