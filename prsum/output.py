"""Write files atomically, never leaving a half-written file or a temporary one behind."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from prsum.errors import OutputError


def replace_file(path: Path, text: str, private: bool = False) -> None:
    """Write `text` to `path` through a temporary file in the same folder, then rename it.

    A symbolic link is written through (its target is replaced, the link stays); an existing
    file keeps its permission bits, a new one gets the usual ones (0666 less the umask), or
    0600 when `private`.
    Raises OSError; the temporary file is gone whatever happened.
    """
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = 0o600 if private else 0o666 & ~_UMASK
    handle, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _read_umask() -> int:
    # os.umask can only be read by setting it, which races with threads creating files: read
    # it once, at import.
    current = os.umask(0o022)
    os.umask(current)
    return current


_UMASK = _read_umask()


def write_atomically(path: Path, text: str) -> None:
    """`replace_file` for a result the user asked for: a failure is one line, exit 2."""
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a folder")
    try:
        replace_file(path, text)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
