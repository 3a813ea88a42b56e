"""Build step (everything else is in pyproject.toml): ``mappings/*.json``, the top-level folder
users read, is copied into the package as ``ingest/mappings/`` so that an installed ``ingest``
finds its index bodies (read with importlib.resources in ingest/resources.py). A copy, not a
symlink: wheels and sdists carry no symlinks. MANIFEST.in puts mappings/ into the sdist."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithMappings(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the checkout's mappings/ directly
            return
        target = Path(self.build_lib) / "ingest" / "mappings"
        self.mkpath(str(target))
        for source in sorted(Path(__file__).resolve().parent.joinpath("mappings").glob("*.json")):
            self.copy_file(str(source), str(target / source.name))


setup(cmdclass={"build_py": BuildPyWithMappings})
