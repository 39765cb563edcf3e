"""Memory bounded by design: grids, token masks and programs are checked against stated
budgets (sweep.grid.MAX_POINTS, engine.cycle.MAX_MASK_BYTES, dataflow.emitter.
MAX_PROGRAM_ROWS) before the work that would outgrow them, each refusal one line naming
the input, the size and the limit. The worst documented inputs run under a 4 GiB address
space."""

from __future__ import annotations

import copy
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
GIB = 1 << 30
LONGEST_TREE = " ".join(["4096"] * 15)  # 61,440 draft nodes (widths are at most 4096)


def four_gib() -> None:
    """`preexec_fn`: at most 4 GiB of address space."""
    resource.setrlimit(resource.RLIMIT_AS, (4 * GIB, 4 * GIB))


def slow_board(path: Path) -> str:
    """The slowest board the schema accepts, with u280's buffers (small: many instructions)."""
    data = yaml.safe_load((REPO / "boards/u280.yaml").read_text())
    data.update(name="slow", clock_mhz=5000, pe_array={"rows": 1, "cols": 1},
                mv_macs_per_cycle=1,
                precision={"weight_bits": 32, "activation_bits": 32, "kv_bits": 32})
    data["memory"]["bandwidth_gb_s"] = 1
    path.write_text(yaml.safe_dump(data))
    return str(path)


def largest_model(path: Path) -> str:
    """Every dimension of the model schema at its bound."""
    data = copy.deepcopy(yaml.safe_load((REPO / "workloads/models/llama-3.1-8b.yaml")
                                        .read_text()))
    data.update(id="huge", hidden=1 << 17, intermediate=1 << 19, layers=1024, heads=1024,
                kv_heads=1024, head_dim=128, vocab=1 << 22)
    path.write_text(yaml.safe_dump(data))
    return str(path)


CASES = {
    # a 6.5-billion-point grid: no size check, MemoryError
    "sweep grid": (["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "1-100000",
                    "--verify-lens", "1-65536", "--out", "{tmp}/s.csv"],
                   "--contexts/--verify-lens", "at most 1000000 points"),
    "explore grid": (["explore", "--base-board", "v80", "--pe-arrays", "64x48,128x64",
                      "--bandwidths", "77,460", "-m", "llama-3.1-8b", "-a", "longspec",
                      "--contexts", "1-100000", "--out", "{tmp}/e.csv"],
                     "--pe-arrays/--bandwidths/--contexts", "at most 1000000 points"),
    "design space": (["explore", "--base-board", "flightllm-vhk158", "-m",
                      "llama2-7b-flightllm", "--mv-lanes", "1-4096", "--mv-widths", "1-1000",
                      "--contexts", "256", "--out", "{tmp}/e.csv"],
                     "--mv-lanes/", "at most 1000000 points"),
    "solve grid": (["solve", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec",
                    "--contexts", "1-100000", "-e", "analytic"],
                   "--contexts", "at most 1000000 points"),
    "sweep trees": (["sweep", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec",
                     "--contexts", "128", "--verify-lens", "1-65536", "-e", "fast",
                     "--out", "{tmp}/s.csv"],
                    "--verify-lens", "at most 32768 tokens under a token mask"),
    # a 61,440-node tree: 3.5 GiB of mask (twice: a padded copy), MemoryError
    "longest tree": (["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec",
                      "--tree", LONGEST_TREE, "-L", "1024", "-e", "fast"],
                     "--tree", "3.5 GiB against a budget of 1 GiB"),
    # a 90.9 TiB and a 9.3 GiB prefill mask, MemoryError
    "prefill 10M": (["simulate", "--phase", "prefill", "-b", "u280", "-m", "llama-3.1-8b",
                     "-P", "10000000", "-e", "event"],
                    "--prompt-len", "93132.3 GiB against a budget of 1 GiB"),
    "prefill 100k": (["simulate", "--phase", "prefill", "-b", "u280", "-m", "llama-3.1-8b",
                      "-P", "100000", "-e", "fast"],
                     "--prompt-len", "9.3 GiB against a budget of 1 GiB"),
    "generate 100k": (["generate", "-b", "u280", "-m", "llama-3.1-8b", "-P", "100000", "-D",
                       "4", "--out", "{tmp}/g.csv"],
                      "--prompt-len", "9.3 GiB against a budget of 1 GiB"),
    # 48 million instructions for the largest model at 10 million tokens on small buffers
    # (15 GiB, two minutes of lowering)
    "program rows": (["simulate", "-b", "{slow}", "-m", "{huge}", "-L", "10000000", "-e",
                      "fast"],
                     "--context", "at most 4000000 instructions in one program"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_worst_documented_inputs_are_one_line_within_4_gib(tmp_path: Path,
                                                               case: str) -> None:
    args, flag, limit = CASES[case]
    fill = {"tmp": str(tmp_path), "slow": "", "huge": ""}
    if case == "program rows":
        fill |= {"slow": slow_board(tmp_path / "slow.yaml"),
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
    assert not any(p.name.endswith(".csv") for p in tmp_path.iterdir())


def test_the_largest_valid_tree_still_runs() -> None:
    """The budget refuses what would not fit, not what does: 32,767 draft nodes (x = 32,768,
    a 1 GiB mask) run on the cycle engines."""
    from fpgasim.config import load_board
    from fpgasim.engine.cycle import MAX_MASK_BYTES, check_mask_tokens
    from fpgasim.errors import InputError

    board = load_board("u280")
    check_mask_tokens(32768, board, "verify_len", 32768)
    assert 32768 * 32768 == MAX_MASK_BYTES
    with pytest.raises(InputError, match="at most 32768 tokens"):
        check_mask_tokens(32769, board, "verify_len", 32769)
    check_mask_tokens(10**6, load_board("flightllm-vhk158"), "verify_len", 10**6)  # no mask
