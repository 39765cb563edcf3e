"""`fpgasim validate FILE...`: check config files and tables; one line per problem, exit 2."""

from __future__ import annotations

import sys

import typer

from fpgasim.cli.validate_files import ValidationFailed, validate_files
from fpgasim.fileio import check_input_path


def validate(
    files: list[str] = typer.Argument(
        ...,
        help="Board/model/algorithm/experiment YAML files, AAT or trace tables (CSV/Parquet), or folders of them.",
        show_default=False,
    ),
) -> None:
    """Check files without running anything: every problem on its own line, then exit 2.

    Each problem line reads FILE: FIELD = VALUE: ALLOWED. A valid file prints one
    "FILE: ok (KIND)" line. When any file has a problem, every line goes to stderr. The
    kind is told by the folder (boards/, models/, algorithms/, experiments/), else by the
    fields or the table columns.

    Example: fpgasim validate boards workloads
    """
    for name in files:
        check_input_path(name, "FILE")
    reports = validate_files(files)
    if not reports:
        raise ValidationFailed("no YAML, JSON config, CSV or Parquet files found in the given folders")
    bad = [r for r in reports if not r.ok]
    for report in reports:  # findings of a failing run are diagnostics: stderr
        for line in report.lines():
            print(line, file=sys.stderr if bad else sys.stdout)
    if bad:
        count = sum(len(r.problems) for r in bad)
        raise ValidationFailed(
            f"{count} problem{'s' * (count != 1)} in {len(bad)} of {len(reports)} "
            f"file{'s' * (len(reports) != 1)}"
        )
