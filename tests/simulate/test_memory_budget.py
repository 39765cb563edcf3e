"""Memory bounded by design: grids, --vary designs, optimal trees, model windows and programs
are checked against stated limits (sweep.grid.MAX_POINTS, sweep.space.MAX_VARIATION_BOARDS,
tree.optimal.MAX_SIZE, window_tokens, dataflow.emitter.MAX_PROGRAM_ROWS) before the work that
would outgrow them, each refusal one line naming the input, the size and the limit. The
worst documented inputs run, or are refused, under a 4 GiB address space. (FlightLLM's
compiler builds no token mask: trees and prompts are costed count-level, and a long prompt
runs in chunks of one attention tile.)"""

from __future__ import annotations

import copy
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
GIB = 1 << 30
LONGEST_TREE = " ".join(["4096"] * 15)  # 61,440 draft nodes (widths are at most 4096)


def four_gib() -> None:
    """`preexec_fn`: at most 4 GiB of address space."""
    resource.setrlimit(resource.RLIMIT_AS, (4 * GIB, 4 * GIB))


def wide_design(path: Path) -> str:
    """The study's design with a global buffer deep enough for one row of the largest model
    (its other buffers FlightLLM's: small, so many instructions)."""
    design = yaml.safe_load((REPO / "designs/study.yaml").read_text())
    design["name"] = "wide"
    design["buffers"]["global"] = 4096
    path.write_text(yaml.safe_dump(design))
    return str(path)


def largest_model(path: Path) -> str:
    """Every dimension of the model schema at its bound, with a window past 10M tokens."""
    data = copy.deepcopy(yaml.safe_load((REPO / "workloads/models/llama-3.1-8b.yaml")
                                        .read_text()))
    data.update(id="huge", hidden=1 << 17, intermediate=1 << 19, layers=1024, heads=1024,
                kv_heads=1024, head_dim=128, vocab=1 << 22, window_tokens=1 << 24)
    path.write_text(yaml.safe_dump(data))
    return str(path)


CASES = {
    # a 6.5-billion-point grid: no size check, MemoryError
    "sweep grid": (["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "1-100000",
                    "--verify-lens", "1-65536", "--out", "{tmp}/s.csv"],
                   "--contexts/--verify-lens", "at most 1000000 points"),
    # 4 boards x 100,000 contexts x LongSpec's curve: refused before the curves are built
    # (building them first took minutes and grew without bound)
    "explore grid": (["explore", "--board", "v80", "--vary", "design.mm_cols=48,64", "--vary",
                      "fpga.memory.bandwidth_gb_s=77,460", "-m", "llama-3.1-8b", "-a",
                      "longspec", "--contexts", "1-100000", "--out", "{tmp}/e.csv"],
                     "--contexts/--algorithms", "at most 1000000 points"),
    # 65 x 64 = 4,160 designs
    "design space": (["explore", "--board", "flightllm-vhk158", "-m", "llama2-7b-flightllm",
                      "--vary", "design.mv_lanes=" + ",".join(map(str, range(1, 66))),
                      "--vary", "design.mv_macs_per_lane=" + ",".join(
                          map(str, range(16, 1025, 16))),
                      "--contexts", "256", "--out", "{tmp}/e.csv"],
                     "--vary", "at most 4096 boards in all"),
    "solve grid": (["solve", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec",
                    "--contexts", "1-100000", "-e", "analytic"],
                   "--contexts", "at most 1000000 points"),
    # optimal trees past the embedded model's largest: refused before any tree is built
    # (building the 4,095 smaller ones first took 45 s)
    "sweep trees": (["sweep", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec",
                     "--contexts", "128", "--verify-lens", "1-65536", "-e", "fast",
                     "--out", "{tmp}/s.csv"],
                    "--verify-lens", "= 4097: between 1 and 4096"),
    # a 61,440-node tree: its verify pass would need more than a program's instructions
    # (the flag the refusal names is the pass's context; the line names the tree's tokens)
    "longest tree": (["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec",
                      "--tree", LONGEST_TREE, "-L", "1024", "-e", "fast"],
                     "", "verify pass of 61441 tokens at context 1024 on board u280 needs "
                     "more than 4000000 instructions"),
    # LongSpec's default tree (x = 69) on the U280: a verify pass of 1.8 million instructions
    # (21 million while the study design's MM weights took one channel), whose trace events
    # would take GBs (21 million took 22 GB and were killed by the kernel's OOM killer)
    "trace": (["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec", "-L", "1024",
               "-e", "event", "--trace", "{tmp}/t.json"],
              "--trace", "= 1787174: a pass of at most 1000000 instructions to trace"),
    # past the model's window
    "prefill 10M": (["simulate", "--phase", "prefill", "-b", "u280", "-m", "llama-3.1-8b",
                     "-P", "10000000", "-e", "event"],
                    "--prompt-len", "= 10000000: at most 131072: llama-3.1-8b's window"),
    # the largest model at 10 million tokens on small buffers: more instructions in one
    # program than the budget (on the study's design at the U280's speed: the slowest pair
    # of tests/engine/test_exact_numbers.py is refused sooner, a part past the time range)
    "program rows": (["simulate", "--fpga", "u280", "--design", "{wide}", "-m", "{huge}",
                      "-L", "10000000", "-e", "fast"],
                     "--context", "at most 4000000 instructions in one program"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_the_worst_documented_inputs_are_one_line_within_4_gib(tmp_path: Path,
                                                               case: str) -> None:
    args, flag, limit = CASES[case]
    fill = {"tmp": str(tmp_path), "wide": "", "huge": ""}
    if case == "program rows":
        fill |= {"wide": wide_design(tmp_path / "wide.yaml"),
                 "huge": largest_model(tmp_path / "huge.yaml")}
    args = [a.format(**fill) for a in args]
    proc = subprocess.run([sys.executable, "-m", "fpgasim", *args], capture_output=True,
                          text=True, timeout=600, preexec_fn=four_gib,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2, proc.stderr[-800:]
    lines = [line for line in proc.stderr.splitlines() if "warning" not in line]
    (line,) = lines
    assert line.startswith(f"fpgasim: error: argument {flag}"), line
    assert limit in line, line
    assert not any(p.suffix in (".csv", ".json") for p in tmp_path.iterdir())


def test_a_long_prompt_runs_in_bounded_chunks() -> None:
    """A prompt is prefilled in chunks of one attention tile (4,096 rows; no prompt x prompt
    mask on any engine): 100,000 tokens are 25 passes, the longest prompt the window allows
    ends with 4,096 rows over 126,976 cached keys, the largest program a prefill lowers
    (run under 4 GiB below)."""
    from fpgasim.config import load_board
    from fpgasim.simulate import prefill_specs

    board = load_board("u280")
    specs = prefill_specs(board, 100_000)
    assert len(specs) == 25 and max(s.tokens for s in specs) == 4096
    assert [s.context for s in specs] == [4096 * k for k in range(25)]
    assert sum(s.tokens for s in specs) == 100_096  # padded to 128 rows
    assert all(s.tree_parents is None for s in specs)
    last = prefill_specs(board, 131_072)[-1]
    assert (last.tokens, last.context) == (4096, 126_976)


@pytest.mark.parametrize("args", [
    # the last chunk of a 131,072-token prompt (above): 3.3 GB resident at most
    ["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "126976", "-x", "4096", "-e", "fast",
     "-f", "json"],
    # generate's own per-token state at a 100,000-token prompt (the chunks' programs are the
    # case above; a whole 25-chunk prefill on a cycle engine takes two minutes)
    ["generate", "-b", "u280", "-m", "llama-3.1-8b", "-P", "100000", "-D", "4", "-e",
     "analytic", "-f", "json"],
], ids=["largest prefill chunk", "generate 100k"])
@pytest.mark.slow
def test_the_largest_valid_inputs_run_within_4_gib(args: list[str]) -> None:
    """The budgets refuse what would not fit, not what does."""
    proc = subprocess.run([sys.executable, "-m", "fpgasim", *args], capture_output=True,
                          text=True, timeout=600, preexec_fn=four_gib,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-800:]
    assert "error" not in proc.stderr
    assert proc.stdout.strip()
