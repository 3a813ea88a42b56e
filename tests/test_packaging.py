"""What a user gets from the built wheel: the index mappings inside the package, identical to the
top-level mappings/ folder, readable with nothing but the installed files; py.typed and the
licence shipped; declared lower bounds that constraints/minimum.txt (the set .ci/run tests) pins.

The wheel: ``INGEST_TEST_WHEEL`` (set by .ci/run, which builds it once), else built here with
``python -m build`` (in the dev extras). Without either, the wheel tests are skipped with a message,
except under ``INGEST_REQUIRE_ES=1`` (CI), where that is a failure.
"""

from __future__ import annotations

import email
import importlib.util
import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from ingest.resources import load_mapping, mapping_text

ROOT = Path(__file__).resolve().parents[1]
MAPPINGS = ROOT / "mappings"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    given = os.environ.get("INGEST_TEST_WHEEL")
    if given:
        return Path(given)
    if importlib.util.find_spec("build") is None:
        reason = "the `build` package is not installed (pip install -e '.[dev]'), cannot build the wheel"
        if os.environ.get("INGEST_REQUIRE_ES") == "1":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
                   check=True, capture_output=True)
    [built] = out.glob("ingest-*.whl")
    return built


def wheel_files(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_wheel_carries_exactly_the_mappings_folder(wheel):
    files = wheel_files(wheel)
    packaged = {name.removeprefix("ingest/mappings/"): body for name, body in files.items()
                if name.startswith("ingest/mappings/")}
    assert packaged == {path.name: path.read_bytes() for path in MAPPINGS.glob("*.json")}
    assert "ingest/py.typed" in files
    assert not [name for name in files if name.startswith("mappings/")]  # never a top-level folder


def test_the_installed_files_alone_load_every_mapping(wheel, tmp_path):
    # Unpacked as pip would, into a folder with no checkout around it: ingest must read its own copy.
    site = tmp_path / "site-packages"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    script = (
        "import json, sys, ingest.resources as r, ingest.store.elasticsearch as es\n"
        "assert r.__file__.startswith(sys.argv[1]), r.__file__\n"
        "print(json.dumps({n: es.load_index_body(n) for n in ('chunks', 'documents', 'meta')}))\n"
    )
    result = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r})\n" + script, str(site)],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    bodies = json.loads(result.stdout)
    assert bodies["chunks"]["mappings"] == json.loads((MAPPINGS / "chunks.json").read_text())["mappings"]
    assert set(bodies) == {"chunks", "documents", "meta"}


def test_the_wheel_declares_licence_and_urls(wheel):
    files = wheel_files(wheel)
    [metadata_name] = [n for n in files if n.endswith(".dist-info/METADATA")]
    metadata = email.message_from_bytes(files[metadata_name])
    assert metadata["License-Expression"] == "MIT"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in files)
    assert "Typing :: Typed" in metadata.get_all("Classifier")
    assert {url.split(",")[0] for url in metadata.get_all("Project-URL")} >= {"Homepage", "Changelog", "Issues"}


def test_a_checkout_reads_the_top_level_folder():
    for path in MAPPINGS.glob("*.json"):
        assert mapping_text(path.stem) == path.read_text(encoding="utf-8")
    first, second = load_mapping("chunks"), load_mapping("chunks")
    first["mappings"]["properties"].clear()
    assert second["mappings"]["properties"]  # each call is a fresh copy


def test_an_unknown_mapping_names_where_it_looked():
    with pytest.raises(FileNotFoundError, match=r"nope\.json .*installed package.*checkout"):
        mapping_text("nope")


def declared_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(line) for line in project["dependencies"]]


def pinned_minimums() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints" / "minimum.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.strip().lower()] = Version(version.strip())
    return pins


def test_every_declared_lower_bound_is_the_pinned_minimum():
    pins = pinned_minimums()
    for requirement in declared_requirements():
        [lower] = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
        assert pins.get(requirement.name.lower()) == lower, f"{requirement} vs constraints/minimum.txt"
        assert requirement.specifier.contains(pins[requirement.name.lower()])
    # typer's own floor for click is 8.0.0; the oldest allowed click is part of the tested set.
    assert pins["click"] == Version("8.0.0")


def test_the_console_script_module_leaves_the_cli_to_the_run():
    """Parser processes are spawned children that re-run the console script as their main module:
    importing what the script imports must not load the CLI (typer, rich) each of them would pay for."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["ingest"].partition(":")
    code = (
        f"import sys, {module}; assert callable({module}.{function}); "
        "print(sorted(m for m in ('typer', 'rich', 'click', 'ingest.cli') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
