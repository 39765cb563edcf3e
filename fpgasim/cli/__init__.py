"""The `fpgasim` command line: thin commands over the library; errors are one line, exit 2."""

from __future__ import annotations

import errno
import sys
from typing import Any

import typer
from typer.core import TyperOption

import fpgasim

try:  # typer >= 0.22 vendors click
    from typer._click import exceptions as click_exc
except ImportError:  # pragma: no cover - older typer uses click itself
    from click import exceptions as click_exc

from fpgasim.cli.flags import field_flags
from fpgasim.cli.lazy import GLOSSARY_EPILOG, LazyGroup
from fpgasim.cli.mpl_config import use_usable_dir
from fpgasim.cli.terminal import (
    OutputFailed,
    guarded_stdout,
    safe_streams,
    silence_stdout,
    take_after_output,
)
from fpgasim.errors import FpgasimError, printable
from fpgasim.fileio import output_transaction


def _flag_shows_no_type(option_class: type) -> None:
    """A flag takes no value, so rich help shows no `<bool>` type beside it.

    typer's plain help already skips the type of a flag (`TyperOption.get_help_record`); its
    rich help asks `display_type_rich`, which answers `<bool>`, and prints nothing for None.
    """
    shown = option_class.display_type_rich

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        """No type for a flag, typer's own answer for any other option."""
        return None if self.is_flag else shown(self, ctx)

    option_class.display_type_rich = display_type_rich


_flag_shows_no_type(TyperOption)


app = typer.Typer(
    epilog=GLOSSARY_EPILOG,
    name="fpgasim",
    cls=LazyGroup,  # imports a command's module only when it runs or shows its help
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


def installed_version() -> str:
    """fpgasim's version from the installed package's metadata (a bare checkout: __version__)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fpgasim")
    except PackageNotFoundError:  # run from a checkout on PYTHONPATH, never installed
        return fpgasim.__version__


def _print_version(value: bool) -> None:
    if value:
        print(f"fpgasim {installed_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version, help="Print the version and exit."
    ),
) -> None:
    """Simulate and solve tree-based speculative decoding (SD) of LLMs on FPGA accelerators."""


DEBUG_ENV = "FPGASIM_DEBUG"


def say(line: str) -> None:
    """Print one line to stderr: whitespace runs as one space, control characters escaped
    (a file name in an error cannot drive the terminal)."""
    print(printable(" ".join(line.split())), file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app; user errors print one line to stderr and exit 2."""
    import os

    safe_streams()  # any locale: never a UnicodeEncodeError on output
    use_usable_dir()  # matplotlib's folder, before any figure code imports matplotlib
    if argv is None:  # the program itself: its own collector settings
        _collect_old_objects_rarely()
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get(DEBUG_ENV) == "1"
    args = [a for a in args if a != "--debug"]
    with guarded_stdout():  # a closed, full or broken stdout: OutputFailed, not a crash
        code = _run(args, debug)
    if argv is None:  # the program itself (not a caller's in-process run)
        _outcome_decided()
        _no_collection_at_exit()
    if code:
        sys.exit(code)


#: the collector's thresholds for the program (`gc.set_threshold`): Python's defaults
#: (700, 10, 10) but a full collection ten times rarer
GC_THRESHOLDS = (700, 10, 100)


def _collect_old_objects_rarely() -> None:
    """Collect the oldest generation ten times more rarely than Python does by default. A
    run holds a large heap of long-lived objects (compiled parts, pass results, tables)
    and each full collection walks all of it: `reproduce all` spent about a tenth of its
    CPU there (docs/benchmarks.md, "Where the time went"). Young garbage is collected as
    before; forked pool workers inherit the setting. Only the program itself: a caller's
    in-process `main(argv)` keeps its own collector."""
    import gc

    gc.set_threshold(*GC_THRESHOLDS)


def _no_collection_at_exit() -> None:
    """Spare the interpreter's shutdown its collections of everything the run built
    (`gc.freeze`: the objects alive now are never examined again). CPython collects before
    it frees the modules; after `reproduce all`, whose heap of compiled parts and results
    is about 1 GB, that took 0.4 of the 0.5 s the program spent ending (docs/benchmarks.md,
    "Where the time went"). Exit handlers, stream flushes and the exit status are as
    before."""
    import gc

    gc.freeze()


def _outcome_decided() -> None:
    """Ignore Ctrl-C from here to the exit: the outputs are written (or discarded) and the
    status reported. Python gives SIGINT back its default action while it shuts down, and a
    Ctrl-C landing then killed the finished process (status -2, its outputs written).
    Ignored, not blocked: a signal for the process goes to any thread that does not block it
    (numpy's BLAS threads, pyarrow's allocator thread), and Python leaves an ignored signal
    ignored when it shuts down.

    And a Ctrl-C already handled must not kill it at the exit: CPython 3.11 notes in a flag
    (`_Py_UnhandledKeyboardInterrupt`) every KeyboardInterrupt that passes through an
    `exec` of a string (dataclasses and numba generate code that way, so an early Ctrl-C
    often lands there) and, when a `python -m` run ends with that flag set, kills itself
    with SIGINT even though the interrupt was caught (status -2 instead of 130). Every
    `exec` of a string clears the flag as it starts, so one that finishes leaves it clear."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    exec("None")  # clears CPython's flag (see above)


def _run(args: list[str], debug: bool) -> int:
    """Run the app with `args`; the exit status (every error reported as one line)."""
    import warnings

    take_after_output()  # nothing held from an earlier in-process run
    # a library's warning (numpy, matplotlib) is held too, so a refusal is the only line
    with warnings.catch_warnings(record=True) as caught:
        try:
            code = _run_command(args, debug)
        finally:
            held = take_after_output()
    if code == 0:  # files written and stdout flushed: the warnings and summaries now
        shown = [f"fpgasim: warning: {w.category.__name__}: {w.message}" for w in caught]
        for line in [*held, *dict.fromkeys(shown)]:
            say(line)
    return code


def _run_command(args: list[str], debug: bool) -> int:
    """`_run`'s work: the exit status, with the lines `after_output` held not yet shown."""
    outputs = None
    try:
        # every file the command writes is staged and written only when it succeeds
        with output_transaction() as outputs:
            # typer turns Ctrl-C and `typer.Exit` into a returned exit code (not standalone)
            code = app(args=args, prog_name="fpgasim", standalone_mode=False)
            failed = isinstance(code, int) and not isinstance(code, bool) and code != 0
            if failed:
                outputs.discard()
            else:
                sys.stdout.flush()  # stdout failing now: no file is written either
        if failed:
            if code == 130:
                say("fpgasim: interrupted")
            return code
        sys.stdout.flush()  # the lines reported once the files were written
        return 0
    except OutputFailed as exc:
        return _stdout_failed(exc, outputs)
    except FpgasimError as exc:
        if debug:
            raise
        message = exc.render(field_flags(app))  # the fields as the flags the user typed
        say(f"fpgasim: error: {message}")
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except click_exc.ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # help was printed
            return 0
        if debug:
            raise
        say(f"fpgasim: error: {exc.format_message()} (see --help)")
        return 2
    except (typer.Abort, KeyboardInterrupt):
        say("fpgasim: interrupted")
        return 130
    except OSError as exc:  # a path the OS refuses (too long, a loop, no permission, ...)
        if debug:
            raise
        where = f"{str(exc.filename)[:80]}: " if exc.filename else ""
        reason = exc.strerror or type(exc).__name__
        say(f"fpgasim: error: {where}{reason} (check the paths given)")
        return 2
    except Exception as exc:  # last resort: never show a traceback to a user
        if _caused_by_interrupt(exc):
            say("fpgasim: interrupted")
            return 130
        if debug:
            raise
        say(f"fpgasim: internal error: {type(exc).__name__}: {exc} "
            "(rerun with --debug for the traceback)")
        return 1


def _stdout_failed(exc: OutputFailed, outputs) -> int:
    """The exit status and line when stdout fails: 0 quietly when the reader left, else one
    line saying whether the files were written."""
    silence_stdout()
    if exc.errno == errno.EPIPE:  # the reader left (`| head`): done, as Unix tools are
        return 0
    if outputs is not None and outputs.written:  # stdout failed after the commit
        files = ", ".join(printable(str(p)) for p in outputs.written[:3])
        say(f"fpgasim: error: stdout: {exc.reason} (the files were written: {files}; "
            "the lines reporting them were not)")
    else:
        say(f"fpgasim: error: stdout: {exc.reason} (the output was not written)")
    return 2


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a Ctrl-C is somewhere in `exc`'s chain of causes. A Ctrl-C landing while a
    pybind11 extension (matplotlib's, scipy's) initialises reaches us as
    `ImportError: initialization failed` raised from the KeyboardInterrupt."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False
