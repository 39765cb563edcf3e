"""The `fpgasim` command line: thin commands over the library; errors are one line, exit 2."""

from __future__ import annotations

import sys

import typer

try:  # typer >= 0.22 vendors click
    from typer._click import exceptions as click_exc
except ImportError:  # pragma: no cover - older typer uses click itself
    from click import exceptions as click_exc

from fpgasim.cli.boards_cmd import boards
from fpgasim.cli.cache_cmd import cache_app
from fpgasim.cli.compare_cmd import compare_algorithms
from fpgasim.cli.explore_cmd import explore_cmd
from fpgasim.cli.flags import field_flags
from fpgasim.cli.generate_cmd import generate_cmd
from fpgasim.cli.hetero_cmd import hetero_app
from fpgasim.cli.mpl_config import use_usable_dir
from fpgasim.cli.reproduce_cmd import reproduce
from fpgasim.cli.simulate_cmd import simulate
from fpgasim.cli.solve_cmd import solve
from fpgasim.cli.sweep_cmd import sweep
from fpgasim.cli.terminal import safe_streams
from fpgasim.cli.tree_cmd import tree_app
from fpgasim.cli.validate_cmd import validate
from fpgasim.errors import FpgasimError
from fpgasim.fileio import output_transaction

#: Under every results command's --help: where the symbols of its output are defined.
GLOSSARY_EPILOG = (
    "Symbols in the output (AAT, AR, P_eff, T_v, T_d, x_R, ridge_tokens, alpha, regime, "
    "Ori/Naive/Best, speedup, decision, engine, lowering): docs/glossary.md. Which answer "
    "to trust: the simulator (default engine) to decide, the study's accounting "
    "(--engine analytic) to reproduce the paper (docs/analysis.md)."
)

app = typer.Typer(
    epilog=GLOSSARY_EPILOG,
    name="fpgasim",
    help=(
        "Simulate and solve tree-based speculative decoding (SD) of LLMs on FPGA accelerators.\n\n"
        "Boards (boards/*.yaml), target models (workloads/models) and SD algorithms "
        "(workloads/algorithms) are given by name or by YAML path. Engines: analytic "
        "(the study's closed-form accounting), event (discrete-event simulator), fast (numba)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command(epilog=GLOSSARY_EPILOG)(simulate)
app.command(name="generate", epilog=GLOSSARY_EPILOG)(generate_cmd)
app.command(epilog=GLOSSARY_EPILOG)(sweep)
app.command(name="explore", epilog=GLOSSARY_EPILOG)(explore_cmd)
app.command(epilog=GLOSSARY_EPILOG)(boards)
app.command(epilog=GLOSSARY_EPILOG)(solve)
app.command()(validate)
app.command(epilog=GLOSSARY_EPILOG)(reproduce)
app.command(name="compare-algorithms", epilog=GLOSSARY_EPILOG)(compare_algorithms)
app.add_typer(cache_app, name="cache")
app.add_typer(hetero_app, name="hetero")
app.add_typer(tree_app, name="tree")

DEBUG_ENV = "FPGASIM_DEBUG"


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app; user errors print one line to stderr and exit 2."""
    import os

    safe_streams()  # any locale: never a UnicodeEncodeError on output
    use_usable_dir()  # matplotlib's folder, before any figure code imports matplotlib
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get(DEBUG_ENV) == "1"
    args = [a for a in args if a != "--debug"]
    try:
        # every file the command writes is staged and written only when it succeeds
        with output_transaction() as outputs:
            # typer turns Ctrl-C and `typer.Exit` into a returned exit code (not standalone)
            code = app(args=args, prog_name="fpgasim", standalone_mode=False)
            failed = isinstance(code, int) and not isinstance(code, bool) and code != 0
            if failed:
                outputs.discard()
        if failed:
            if code == 130:
                print("fpgasim: interrupted", file=sys.stderr)
            sys.exit(code)
    except FpgasimError as exc:
        if debug:
            raise
        message = exc.render(field_flags(app))  # the fields as the flags the user typed
        print(f"fpgasim: error: {' '.join(message.split())}", file=sys.stderr)  # one line
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except click_exc.ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # help was printed
            sys.exit(0)
        if debug:
            raise
        message = " ".join(exc.format_message().split())
        print(f"fpgasim: error: {message} (see --help)", file=sys.stderr)
        sys.exit(2)
    except typer.Abort:
        print("fpgasim: interrupted", file=sys.stderr)
        sys.exit(130)
    except KeyboardInterrupt:
        print("fpgasim: interrupted", file=sys.stderr)
        sys.exit(130)
    except OSError as exc:  # a path the OS refuses (too long, a loop, no permission, ...)
        if debug:
            raise
        where = f"{str(exc.filename)[:80]}: " if exc.filename else ""
        reason = exc.strerror or type(exc).__name__
        print(f"fpgasim: error: {where}{reason} (check the paths given)", file=sys.stderr)
        sys.exit(2)
    except Exception as exc:  # last resort: never show a traceback to a user
        if debug:
            raise
        print(
            f"fpgasim: internal error: {type(exc).__name__}: {exc} "
            f"(rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        sys.exit(1)
