"""The cycle collector paused while one document is parsed and chunked.

A parse builds tens of thousands of short-lived objects (lxml's element proxies, markdown-it's tokens,
a PDF's lines, the blocks and chunks) and keeps many of them to its end, so each collection the
allocations trigger on the way walks them all again: a quarter of an HTML parse of Sphinx pages, 3–5 %
of a PDF's. A parse leaves few cycles (pypdf's reader, an exception's traceback): the first collection
after it takes them.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cycle collector for the block, unless it is already paused (by a caller, or by the CLI's
    start-up), in which case it is left as it is."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
