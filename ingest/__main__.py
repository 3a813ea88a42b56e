"""``python -m ingest`` and the ``ingest`` console script: the command line (:func:`ingest.cli.main`).

The console script imports only this module, and the CLI when it runs: parser processes are spawned
children that re-run the script as their main module, and must not pay for importing the CLI (typer,
rich, the stores) they never use.
"""

from __future__ import annotations


def main() -> None:
    import gc

    # Importing the CLI allocates much and frees little: the cycle collector would walk it all again
    # and again (the CLI resumes it, with what start-up made frozen, once the command's imports are done).
    gc.disable()
    from ingest.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
