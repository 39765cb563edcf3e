"""Options shared by several commands, defined once, and the checks of their values.

Each factory returns a fresh `typer.Option` that keeps the flag, its short name, its range
and (where commands agree) its help the same in every command; arguments carry what
differs between commands, usually the help text. The output-format enums live here too:
their member order is the order `--help` lists the choices in.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from fpgasim.config.board_loader import BoardBase
from fpgasim.config.cluster import DEFAULT_HOP_LATENCY_S, MAX_MICRO_BATCHES, Cluster
from fpgasim.config.loader import load_model
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import check_ports
from fpgasim.dataflow.lowerings.registry import check_cluster
from fpgasim.engine import DEFAULT_ENGINE
from fpgasim.errors import InputError
from fpgasim.fileio import check_output_path
from fpgasim.lists import split_items

#: Largest context length L an argument accepts.
MAX_CONTEXT = 10_000_000


# ---------------------------------------------------------------- output formats


class TableJsonCsv(StrEnum):
    """--format table|json|csv: every command that prints a result takes these three."""

    table = "table"
    json = "json"
    csv = "csv"


#: The one name of the three formats every result-printing command takes.
OutputFormat = TableJsonCsv


class JsonTableMarkdown(StrEnum):
    """--format table|json|csv|markdown (`tree calibrate`: also docs/trees.md's blocks)."""

    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


class TableMdCsv(StrEnum):
    """--format table|json|csv|md (`reproduce`: also Markdown)."""

    table = "table"
    json = "json"
    csv = "csv"
    md = "md"


def format_option(default: StrEnum, help_text: str) -> Any:
    """--format/-f: one of the enums above, `default` when not given."""
    return typer.Option(default, "--format", "-f", help=help_text)


def json_option(help_text: str = "Same as --format json (kept for scripts that use it).") -> Any:
    """--json: the older spelling of `--format json` (hidden from --help; `output_format`
    resolves the two)."""
    return typer.Option(False, "--json", help=help_text, hidden=True)


def resolve_format(chosen: StrEnum, as_json: bool) -> StrEnum:
    """The format a command prints: `--format`, or json for the older `--json` (refused
    beside another --format than the default table)."""
    if not as_json:
        return chosen
    if chosen.value not in ("table", "json"):
        raise InputError("--json", True, f"not with --format {chosen.value} (--json is --format "
                         "json)")
    return type(chosen)("json")


# ---------------------------------------------------------------- lists

#: Most values one range item (e.g. 1-100000) may expand to.
MAX_LIST = 100_000


def parse_int_list(text: str, argument: str, minimum: int = 1, maximum: int = 10**7) -> list[int]:
    """'1-5,8,16' -> [1, 2, 3, 4, 5, 8, 16] (sorted, unique), each within [minimum, maximum].

    Items come from `split_items`, so empty items (`1,,2`, `128,`) are errors.
    """
    values: set[int] = set()
    example = "e.g. 128,256 or 1-85"
    for part in split_items(text, argument, "128,256 or 1-85"):
        part = part.replace(" ", "")
        try:
            if "-" in part[1:]:
                cut = part.index("-", 1)
                lo, hi = int(part[:cut]), int(part[cut + 1 :])
                if hi < lo:
                    raise InputError(argument, text, f"ranges go low-high, e.g. {hi}-{lo}")
                if hi - lo > MAX_LIST:
                    raise InputError(argument, text, f"at most {MAX_LIST} values per range")
                values.update(range(lo, hi + 1))
                if len(values) > MAX_LIST:
                    raise InputError(argument, text, f"at most {MAX_LIST} values in all")
            else:
                values.add(int(part))
        except ValueError:
            raise InputError(argument, text, f"whole numbers and ranges, {example}") from None
    bad = [v for v in values if v < minimum or v > maximum]
    if bad:
        raise InputError(
            argument,
            min(bad) if min(bad) < minimum else max(bad),
            f"every value between {minimum} and {maximum}",
        )
    return sorted(values)


def parse_name_list(text: str, argument: str = "--board") -> list[str]:
    """'u280,v80' -> ['u280', 'v80'] (order and duplicates kept); empty items are errors."""
    return split_items(text, argument, "u280,v80")


def parse_float_list(
    text: str, argument: str, minimum: float, maximum: float, unit: str
) -> list[float]:
    """'77,460' -> [77.0, 460.0] (sorted, unique), each finite and within [minimum, maximum]."""
    out = set()
    for part in split_items(text, argument, "77,460,819"):
        try:
            value = float(part)
        except ValueError:
            raise InputError(argument, text, f"numbers in {unit}, e.g. 77,460,819") from None
        if not minimum <= value <= maximum:  # also refuses nan
            raise InputError(argument, value, f"each between {minimum:g} and {maximum:g} {unit}")
        out.add(value)
    return sorted(out)


# ---------------------------------------------------------------- inputs


def board_option(
    help_text: str = "Board: a named FPGA + design pair (see `fpgasim boards`) or YAML path; "
    "or give --fpga and --design.",
) -> Any:
    """--board/-b: a named pair (or --fpga with --design: `board_from`)."""
    return typer.Option(None, "--board", "-b", help=help_text)


def fpga_option() -> Any:
    """--fpga: an FPGA data sheet (fpgas/), with --design instead of --board."""
    return typer.Option(None, "--fpga", help="FPGA data sheet name (see `fpgasim boards`) or "
                        "YAML path; with --design, instead of --board.")


def design_option() -> Any:
    """--design: an accelerator design (designs/), with --fpga instead of --board."""
    return typer.Option(None, "--design", help="Accelerator design name (see `fpgasim boards`) "
                        "or YAML path, fitted to --fpga; instead of --board.")


def vary_option(help_text: str) -> Any:
    """--vary PATH=V1,V2 (repeatable): fields of the FPGA or design file to vary."""
    return typer.Option([], "--vary", help=help_text)


def board_from(board: str | None, fpga: str | None, design: str | None,
               changes: Sequence[tuple[str, object]] = ()):
    """The board the arguments name: --board NAME, or --fpga F --design D (fitted), on the
    cluster of the command's --cards/--parallel/--hop-latency-us (`cluster_options`)."""
    built = BoardBase(board, fpga, design).build(changes)
    cluster = _CLUSTER.get()
    if cluster is None or cluster.is_single:
        return built  # one card: the board as it always was, to the last digit
    check_ports(built.fpga, cluster)
    clustered = built.with_cluster(cluster)
    model = _CLUSTER_MODEL.get()
    if model is not None:  # the command's --model, split by the board's own lowering
        check_cluster(clustered, load_model(model))
    return clustered


#: the cluster the running command's --cards/--parallel/--hop-latency-us name
_CLUSTER: ContextVar[Cluster | None] = ContextVar("fpgasim_cli_cluster", default=None)
#: the running command's --model (a name or path), split over that cluster by `board_from`
_CLUSTER_MODEL: ContextVar[str | None] = ContextVar("fpgasim_cli_cluster_model", default=None)
#: the choices of --parallel (docs/multi-fpga.md, "Collectives")
PARALLEL_CHOICES = ("tp", "pp", "tp-pp")


def cluster_axes(vary: Sequence[str]) -> list[str]:
    """`vary` with the command's --cards/--parallel/--hop-latency-us as one-value `cluster.`
    axes (sweep, explore: every board on that cluster); refused beside a `--vary cluster.*`
    (one way to say the cluster)."""
    cluster = _CLUSTER.get()
    if cluster is None or cluster.is_single:
        return list(vary)
    if any(item.strip().startswith("cluster.") for item in vary):
        raise InputError("--cards", cluster.cards, "not with --vary cluster.* (vary the "
                         "cluster there, e.g. cluster.cards=1,2,4)")
    fixed = [f"cluster.cards={cluster.cards}", f"cluster.parallel={cluster.parallel}",
             f"cluster.hop_latency_s={cluster.hop_latency_s!r}"]
    if cluster.tp is not None:
        fixed.append(f"cluster.tp={cluster.tp}")
    if cluster.micro_batches is not None:
        fixed.append(f"cluster.micro_batches={cluster.micro_batches}")
    return [*vary, *fixed]


def refuse_cluster(reason: str) -> None:
    """Refuse --cards > 1 on a command (or mode) a cluster does not apply to: one line."""
    cluster = _CLUSTER.get()
    if cluster is not None and not cluster.is_single:
        raise InputError("--cards", cluster.cards, f"1 {reason}")


def cluster_from(cards: int, parallel: str, hop_latency_us: float, tp_cards: int | None = None,
                 micro_batches: int | None = None) -> Cluster:
    """The cluster the options name, each checked (one line naming the flag, its value and
    what is allowed)."""
    if not 1 <= cards <= 64:
        raise InputError("--cards", cards, "between 1 and 64 cards")
    if parallel not in PARALLEL_CHOICES:
        raise InputError("--parallel", parallel, f"one of {', '.join(PARALLEL_CHOICES)}")
    if not 0.0 <= hop_latency_us <= 100.0:  # also refuses nan
        raise InputError("--hop-latency-us", hop_latency_us, "between 0 and 100 us "
                         "(docs/multi-fpga.md argues 0.15 to 2)")
    if parallel == "tp-pp" and tp_cards is None:
        raise InputError("--parallel", parallel, "tp or pp, or tp-pp with --tp-cards N (the "
                         f"cards per pipeline stage, a divisor of --cards {cards})")
    if tp_cards is not None:
        if parallel != "tp-pp":
            raise InputError("--tp-cards", tp_cards, "only with --parallel tp-pp (tp splits "
                             "every layer over all the cards, pp none)")
        divisors = [d for d in range(1, cards + 1) if cards % d == 0]
        if tp_cards not in divisors:
            raise InputError("--tp-cards", tp_cards, f"a divisor of --cards {cards}: "
                             f"{', '.join(map(str, divisors))}")
    cluster = Cluster(cards=cards, parallel=parallel, tp=tp_cards,
                      hop_latency_s=hop_latency_us * 1e-6)
    if micro_batches is not None:
        if not 1 <= micro_batches <= MAX_MICRO_BATCHES:
            raise InputError("--micro-batches", micro_batches,
                             f"between 1 and the batch (at most {MAX_MICRO_BATCHES})")
        if cluster.pp_stages == 1 and micro_batches > 1:
            raise InputError("--micro-batches", micro_batches, "1 without pipeline stages "
                             "(--parallel pp or tp-pp over more than one stage)")
        if cluster.pp_stages > 1:
            cluster = cluster.model_copy(update={"micro_batches": micro_batches})
    return cluster


def check_micro_batches_flag(cluster: Cluster, batch: object) -> None:
    """Refuse --micro-batches above the command's --batch, the largest of a list (a
    micro-batch holds at least one request; a pass of fewer requests takes one each)."""
    m = cluster.micro_batches
    if isinstance(batch, str):  # solve's --batch 1,2,4: its own refusals come later
        try:
            batch = max(parse_int_list(batch, "--batch"))
        except InputError:
            return
    if m is not None and isinstance(batch, int) and m > batch:
        raise InputError("--micro-batches", m, f"between 1 and --batch {batch} (a "
                         "micro-batch holds at least one request)")


def cluster_options(command: Callable) -> Callable:
    """Give a command that takes a board --cards, --parallel, --tp-cards, --micro-batches
    and --hop-latency-us (defined here once); `board_from` builds its board on that cluster
    and refuses a --model the board's lowering cannot split over it
    (`registry.check_cluster`), before any work."""
    extra = {
        "cards": (int, typer.Option(1, "--cards", help="Cards of the board's part running the "
                                    "model (1: one card, as always; docs/multi-fpga.md).")),
        "parallel": (str, typer.Option("tp", "--parallel", help="How the model splits over "
                                       "the cards: tp (heads and FFN columns), pp (layers), "
                                       "tp-pp (--tp-cards per stage).")),
        "tp_cards": (int | None, typer.Option(
            None, "--tp-cards", show_default=False,
            help="With --parallel tp-pp: cards per pipeline stage, each layer split over them "
            "(a divisor of --cards; the stages are --cards / --tp-cards).")),
        "micro_batches": (int | None, typer.Option(
            None, "--micro-batches", show_default=False,
            help="With pipeline stages: micro-batches each pass's batch is cut into, 1 to "
            "--batch (default: as many as stages, at most one per request; "
            "docs/multi-fpga.md).")),
        "hop_latency_us": (float, typer.Option(
            DEFAULT_HOP_LATENCY_S * 1e6, "--hop-latency-us",
            help="One link hop's latency, us (direct Aurora cables 0.15-2; docs/multi-fpga.md).")),
    }
    signature = inspect.signature(command)
    params = list(signature.parameters.values()) + [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option,
                          annotation=_annotation(kind))
        for name, (kind, option) in extra.items()]

    @functools.wraps(command)
    def run(*args: Any, cards: int = 1, parallel: str = "tp", tp_cards: int | None = None,
            micro_batches: int | None = None,
            hop_latency_us: float = DEFAULT_HOP_LATENCY_S * 1e6, **kwargs: Any) -> Any:
        cluster = cluster_from(cards, parallel, hop_latency_us, tp_cards, micro_batches)
        check_micro_batches_flag(cluster, kwargs.get("batch", 1))
        model = kwargs.get("model", kwargs.get("model_name"))
        if not cluster.is_single and isinstance(model, str):
            load_model(model)  # a bad --model is named before the board's split rule
        token = _CLUSTER.set(cluster)
        named = _CLUSTER_MODEL.set(model if isinstance(model, str) else None)
        try:
            return command(*args, **kwargs)
        finally:
            _CLUSTER_MODEL.reset(named)
            _CLUSTER.reset(token)

    run.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    run.__annotations__ = {**command.__annotations__,
                           **{name: _annotation(kind) for name, (kind, _) in extra.items()}}
    return run


def _annotation(kind: object) -> str:
    """A flag's type as the string annotation typer reads (`int | None` for optional ints)."""
    return getattr(kind, "__name__", None) or str(kind)


def model_option(example: str | None = None) -> Any:
    """--model/-m (required): a target model name, e.g. `example`, or YAML path."""
    shown = f" (e.g. {example})" if example else ""
    return typer.Option(..., "--model", "-m", help=f"Target model name{shown} or YAML path.")


def algorithm_option(default: Any, help_text: str) -> Any:
    """--algorithm/-a: required when `default` is `...`, else optional (None)."""
    return typer.Option(default, "--algorithm", "-a", help=help_text)


def contexts_option(help_text: str) -> Any:
    """--contexts (required): a list of context lengths; read it with `parse_contexts`."""
    return typer.Option(..., "--contexts", help=help_text)


def parse_contexts(text: str) -> list[int]:
    """The value of --contexts: sorted unique context lengths, each in [1, MAX_CONTEXT]."""
    return parse_int_list(text, "--contexts", 1, MAX_CONTEXT)


def context_option(default: Any, help_text: str, maximum: int | None = MAX_CONTEXT) -> Any:
    """--context/-L: one context length, at least 1 and at most `maximum` (None: no bound)."""
    return typer.Option(default, "--context", "-L", min=1, max=maximum, help=help_text)


def prompt_len_option(default: Any, help_text: str) -> Any:
    """--prompt-len/-P: prompt tokens of a prefill, 1 to MAX_CONTEXT."""
    return typer.Option(default, "--prompt-len", "-P", min=1, max=MAX_CONTEXT, help=help_text)


def accepted_option(help_text: str) -> Any:
    """--accepted: tokens accepted in the last iteration (floor(AAT)), 1 to 4096."""
    return typer.Option(1, "--accepted", min=1, max=4096, help=help_text)


def engine_option(
    help_text: str = "Engine: analytic, event or fast.", default: str = DEFAULT_ENGINE
) -> Any:
    """--engine/-e: a registered engine, `default` (the default engine) when not given."""
    return typer.Option(default, "--engine", "-e", help=help_text)


def aat_dir_option(help_text: str) -> Any:
    """--aat-dir: measured AAT tables (default None: the embedded acceptance model)."""
    return typer.Option(None, "--aat-dir", help=help_text)


# ---------------------------------------------------------------- outputs


def out_option(default: Any, help_text: str) -> Any:
    """--out/-o: where results are written."""
    return typer.Option(default, "--out", "-o", help=help_text)


def check_writable(out: Path, argument: str = "--out") -> None:
    """Fail before any work when `out` cannot receive a file (`fileio.check_output_path`)."""
    check_output_path(out, argument)


def plot_option(help_text: str) -> Any:
    """--plot: a PNG figure to write (default None: no figure); check it with `check_png`."""
    return typer.Option(None, "--plot", help=help_text)


def check_png(path: Path | None, argument: str = "--plot") -> None:
    """The --plot file, when given, must end in .png and be writable (before any work)."""
    if path is None:
        return
    if path.suffix.lower() != ".png":
        raise InputError(argument, str(path), "a file ending in .png")
    check_output_path(path, argument)


# ---------------------------------------------------------------- workers


def workers_option() -> Any:
    """--workers: worker processes, 1 to 4096 (default: all cores)."""
    return typer.Option(
        None, "--workers", min=1, max=4096, help="Worker processes (default: all cores)."
    )
