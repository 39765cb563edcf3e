"""A usable matplotlib configuration folder, chosen before matplotlib is imported.

matplotlib keeps its font cache in `$MPLCONFIGDIR`, else `$XDG_CONFIG_HOME/matplotlib` or
`~/.config/matplotlib`. When that folder cannot be created or written (an unusable HOME, a
read-only MPLCONFIGDIR, a container without a home), it prints warnings around a correct
result and rebuilds its font cache in a new temporary folder on every run. `use_usable_dir`
points MPLCONFIGDIR at a private folder under the system's temporary directory instead,
reused across runs (the font cache is built once), before any figure code runs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ENV = "MPLCONFIGDIR"


def _usable(folder: Path) -> bool:
    """Whether `folder` exists or can be created, and files can be written in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=folder, prefix=".fpgasim-probe-")
        probe.close()
    except OSError:
        return False
    return True


def default_dir() -> Path:
    """The folder matplotlib would use: $MPLCONFIGDIR, else the XDG config folder's."""
    given = os.environ.get(ENV)
    if given:
        return Path(given)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path(os.path.expanduser("~")) / ".config") / "matplotlib"


def use_usable_dir() -> Path:
    """Keep matplotlib's folder when usable; else set MPLCONFIGDIR to a private one. The folder."""
    folder = default_dir()
    if _usable(folder):
        return folder
    fallback = Path(tempfile.gettempdir()) / f"fpgasim-matplotlib-{os.getuid()}"
    try:
        fallback.mkdir(mode=0o700, exist_ok=True)
        private = fallback.stat().st_uid == os.getuid() and not fallback.is_symlink()
    except OSError:
        private = False
    if not (private and _usable(fallback)):
        fallback = Path(tempfile.mkdtemp(prefix="fpgasim-matplotlib-"))
    os.environ[ENV] = str(fallback)
    return fallback
