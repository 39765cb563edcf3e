"""Maintenance script: the engines side by side, printed or written into a Markdown file.

    python -m fpgasim.cli.compare_engines --aat-dir builtin \\
        --engines analytic,event --update docs/reproduction.md

The comparison itself is `fpgasim.reproduce.engine_comparison.compare_all`; this module is
its command line (flags live in `cli/`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from fpgasim.reproduce.engine_comparison import compare_all
from fpgasim.reproduce.experiment_loader import experiment_names

BEGIN = "<!-- BEGIN GENERATED: python -m fpgasim.cli.compare_engines -->"
END = "<!-- END GENERATED -->"


def update_doc(path: Path, generated: str) -> None:
    """Replace the text between the BEGIN/END markers of a Markdown file."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path}: no {BEGIN} ... {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n\n{generated}\n{END}{tail}")


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: print the comparison, or write it into a doc between the markers."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="experiments (default: every timed one)")
    parser.add_argument("--aat-dir", type=Path, default=None)
    parser.add_argument("--engines", default="analytic,event")
    parser.add_argument("--update", type=Path, default=None, help="Markdown file to update")
    args = parser.parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",")]
    if len(engines) != 2:
        raise SystemExit("--engines: two engines, e.g. analytic,event")
    text, _ = compare_all(args.names or experiment_names(), engines, args.aat_dir)
    if args.update:
        update_doc(args.update, text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
