"""Output that never crashes on the terminal's encoding (an ASCII locale such as LC_ALL=C).

The CLI's texts use a few non-ASCII symbols (`·`, `²`, `µ`, `×`, `≤`, dashes). Where
stdout or stderr cannot encode them, `safe_streams` re-opens both streams with an error
handler that writes an ASCII spelling of those symbols and `?` for anything else, so every
command, its help and its errors print in any locale. Files are unaffected (they are
written as UTF-8 explicitly).
"""

from __future__ import annotations

import codecs
import sys

#: ASCII spellings of the symbols fpgasim prints; anything else becomes "?".
ASCII_SPELLINGS = {
    "·": ".", "²": "^2", "³": "^3", "µ": "u", "×": "x", "≤": "<=", "≥": ">=", "≈": "~",
    "–": "-", "—": "-", "−": "-", "→": "->", "←": "<-", "…": "...", "±": "+/-", "°": "deg",
    "‘": "'", "’": "'", "“": '"', "”": '"', "•": "*", "✓": "ok", "✗": "x", "─": "-",
    "│": "|", "━": "-", "┃": "|", "╭": "+", "╮": "+", "╰": "+", "╯": "+",
}
ERROR_HANDLER = "fpgasim-ascii"


def _ascii_spelling(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: the ASCII spelling of the characters that cannot be encoded."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(ASCII_SPELLINGS.get(ch, "?") for ch in text), error.end


codecs.register_error(ERROR_HANDLER, _ascii_spelling)


def _lossless(encoding: str | None) -> bool:
    """Whether an encoding can write every character (a UTF codec)."""
    if not encoding:
        return False
    return codecs.lookup(encoding).name.startswith("utf")


def safe_streams() -> None:
    """Make sys.stdout and sys.stderr spell unencodable characters in ASCII (see module)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and not _lossless(getattr(stream, "encoding", None)):
            reconfigure(errors=ERROR_HANDLER)
