"""The documents folder on disk: which files it lists (hidden, symlinked, special files and
unreadable folders decided here) and reading one file's bytes within the size limit."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ingest.model import DocumentProblems, FileTooLarge, UnreadableFile
from ingest.parse import MAX_BYTES, SUFFIXES

DOCUMENTS = "documents"


class CorpusError(Exception):
    """The corpus folder itself is unusable (no ``documents/`` folder): a usage error (exit 2)."""


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def shown(source: str) -> str:
    """A path for messages: bytes that are not UTF-8 (kept by the file system as
    surrogates) written as \\xNN, so the text is always valid and never a raw byte."""
    return source.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


Identity = tuple[int, int]  # (st_dev, st_ino): the file a listed path reads, whatever its name


def _why_unreadable(path: Path, relative: str, real_root: Path) -> str | tuple[Identity, bool]:
    """Why a listed path with a document's name cannot be read, or for a regular file to read: the file
    it reads and whether a symbolic link leads there."""
    if shown(relative) != relative:
        return "file name is not valid UTF-8; rename the file"
    try:
        found = os.lstat(path)  # one system call for the usual case, a regular file
        link = stat.S_ISLNK(found.st_mode)
        if link:
            if not path.resolve(strict=True).is_relative_to(real_root):  # never read (documented)
                return "symbolic link to a file outside the corpus: not followed (a document stored from it is kept)"
            found = path.stat()
    except RuntimeError:
        return "symlink loop"
    except OSError as exc:
        if exc.errno == errno.ENOENT and path.is_symlink():
            return "broken symlink (its target does not exist)"
        return "symlink loop" if exc.errno == errno.ELOOP else f"unreadable file: {exc.strerror or exc}"
    if not stat.S_ISREG(found.st_mode):
        return f"unreadable file: {_kind(found.st_mode)}, not a regular file; never opened"
    return (found.st_dev, found.st_ino), link


def _second_names(found: list[tuple[str, Path, Identity, bool]]) -> dict[str, str]:
    """Symbolic links to a file listed under another name: link source -> that name. The file's own
    path names it when the folder lists it, else its first link (by path): one document, read once,
    never two files declaring one doc_id and version. Hard links are files of their own."""
    named: dict[Identity, str] = {}
    for source, _, identity, _ in sorted(found, key=lambda item: (item[3], item[0])):  # files, then links
        named.setdefault(identity, source)
    return {source: named[identity] for source, _, identity, link in found if link and named[identity] != source}


@dataclass(frozen=True)
class Listing:
    """What a walk of ``documents/`` found: files to read, and paths that are problems."""

    paths: list[Path]
    file_problems: list[DocumentProblems]  # a path that looks like a document but cannot be one
    folder_problems: list[DocumentProblems]  # a folder that could not be listed
    # relative_source of each path, in the same order: made once by the walk, asked for per file by the
    # hashing, the memo and the scan (its cost on a no-op run was about that of hashing small files)
    sources: list[str]


def relative_source(path: Path, root: Path) -> str:
    """``path.relative_to(root).as_posix()`` for a path listed under ``root``, by slicing its text:
    pathlib's relative_to costs more than the hashing of a small file, and a run with nothing to
    do asks it several times per file."""
    text, base = str(path), str(root)
    prefix = "" if base == "." else base.rstrip("/") + "/"
    if os.sep == "/" and text.startswith(prefix):  # relative_to is lexical too: the same text
        return text[len(prefix) :]
    return path.relative_to(root).as_posix()


def list_documents(root: Path) -> Listing:
    """Every supported file under ``root/documents``, sorted by its path relative to root,
    and every path that cannot be read, as a problem naming it.

    Hidden files and folders are skipped. Symlinked folders are not entered, and a
    symlinked file is read only when its target lies inside the corpus root, so a scan
    never reads outside the corpus; both are problems (never a silent deletion). So is a
    symlink to a file listed under another name (its own, or an earlier link's): read once. A folder
    that cannot be listed, a FIFO, device or
    socket with a document's name, a symlink loop and a name that is not UTF-8 are
    problems: the documents they may hold are never taken for deleted.
    """
    root = Path(root)
    walk = _Walk(root)
    folders = [root / DOCUMENTS]
    while folders:  # the order of the walk does not matter: everything is sorted at the end
        folders += walk.folder(folders.pop())
    linked = walk.second_names()
    found = sorted((item for item in walk.found if item[0] not in linked), key=lambda item: item[0])
    return Listing(
        [path for _, path, _, _ in found],
        sorted(walk.files_bad, key=lambda p: p.source),
        sorted(walk.folders_bad, key=lambda p: p.source),
        [source for source, _, _, _ in found],
    )


class _Walk:
    """One walk of ``documents/`` with ``os.scandir``: a folder's entries say which are folders,
    symbolic links or regular files without a system call per file (what ``os.walk`` and an
    ``lstat`` per file cost a no-op run more than hashing the files' bytes)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = root.resolve()
        # (source, path, the file it reads, via a link); a plain file's identity is asked for only
        # when the folder holds a link to a file (see second_names)
        self.found: list[tuple[str, Path, Identity | None, bool]] = []
        self.files_bad: list[DocumentProblems] = []
        self.folders_bad: list[DocumentProblems] = []

    def folder(self, folder: Path) -> list[Path]:
        """Lists one folder: its files kept or named as problems; returns the folders to enter."""
        try:
            with os.scandir(folder) as listed:
                entries = list(listed)
        except OSError as exc:  # as os.walk's onerror: the folder is one problem, its documents kept
            self._unlistable(exc, folder)
            return []
        enter = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                is_folder = entry.is_dir()  # follows a symlink, as os.walk sorts them
            except OSError:
                is_folder = False
            path = folder / name
            if is_folder:
                if _is_symlink(entry):  # not entered: say so, keep its documents
                    where = self._relative(path)
                    message = (
                        f"{shown(where)}: symbolic link to a folder: not entered (its files are not read); documents "
                        "stored from this path by an earlier run, if any, are kept"
                    )
                    self.folders_bad.append(DocumentProblems(where, None, (message,)))
                else:
                    enter.append(path)
            elif _suffix(name).lower() in SUFFIXES:
                self._file(entry, path)
        return enter

    def _file(self, entry: os.DirEntry[str], path: Path) -> None:
        relative = relative_source(path, self.root)
        try:  # a regular file with a plain name: nothing more to ask (the usual case, no system call)
            plain = relative.isascii() and entry.is_file(follow_symlinks=False)
        except OSError:
            plain = False
        why = None if plain else _why_unreadable(path, relative, self.real_root)
        if why is None:
            self.found.append((relative, path, None, False))
        elif not isinstance(why, str):
            self.found.append((relative, path, *why))
        else:
            source = self._relative(path)
            self.files_bad.append(DocumentProblems(source, None, (f"{shown(source)}: {why}",)))

    def second_names(self) -> dict[str, str]:
        """Symbolic links to a file listed under another name (see ``_second_names``), each a problem
        naming that file: link source -> the name the file is read from."""
        if not any(link for _, _, _, link in self.found):
            return {}  # the usual folder: no identity asked for
        known = []
        for source, path, identity, link in self.found:
            if identity is None:
                try:
                    found = os.stat(path)
                except OSError:
                    continue  # gone since the walk: it is read (and found missing) as any other file
                identity = (found.st_dev, found.st_ino)
            known.append((source, path, identity, link))
        linked = _second_names(known)
        for source, path, _, _ in known:
            if source in linked:
                target = linked[source]
                message = (
                    f"symbolic link to {shown(target)}, which is listed itself: not read a second time "
                    f"(the document is read from {shown(target)}); remove the link"
                )
                self.files_bad.append(DocumentProblems(self._relative(path), None, (f"{shown(source)}: {message}",)))
        return linked

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _unlistable(self, exc: OSError, folder: Path) -> None:
        # A problem's `source` is the exact path (a name that is not UTF-8 keeps its bytes as
        # surrogates, so os.fsencode gives them back); its message shows it escaped.
        where = Path(exc.filename or folder).relative_to(self.root).as_posix()
        kept = "the documents stored from it are kept unless inventory.yaml narrows them"
        self.folders_bad.append(
            DocumentProblems(where, None, (f"{shown(where)}: unreadable folder: {exc.strerror or exc}; {kept}",))
        )


def _is_symlink(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _suffix(name: str) -> str:
    """``Path(name).suffix`` of a bare file name, without making a Path."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def discover(root: Path) -> list[Path]:
    """Every readable supported file under ``root/documents`` (see ``list_documents``)."""
    return list_documents(root).paths


def read_document(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file, read safely: never more than ``limit`` + 1 bytes, never
    blocking on a FIFO swapped in after listing, never a file that changed while read.

    Raises UnreadableFile (too large, not a regular file, changed while read) or OSError.
    """
    # O_NONBLOCK: opening a FIFO does not wait for a writer; fstat then refuses it.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise UnreadableFile(f"{_kind(before.st_mode)}, not a regular file; not read")
        if before.st_size > limit:
            raise FileTooLarge(f"file too large ({before.st_size} bytes; limit {limit})")
        chunks, total = [], 0
        while total <= limit:
            piece = os.read(fd, min(1 << 20, limit + 1 - total))
            if not piece:
                break
            chunks.append(piece)
            total += len(piece)
        if total > limit:
            raise FileTooLarge(f"file too large (over {limit} bytes while reading; limit {limit})")
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns) or total != before.st_size:
        raise UnreadableFile("the file changed while it was being read; run again when it is complete")
    return b"".join(chunks)
