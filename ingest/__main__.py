"""``python -m ingest``: the command line (:func:`ingest.cli.main`)."""

from ingest.cli import main

main()
