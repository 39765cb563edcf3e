"""Print the prediction tables of docs/validation.md ("FlightLLM on U280: prediction").

LLaMA2-7B on boards/flightllm-u280.yaml (FlightLLM's compiler, `fast` engine): decode at
T = 128 and 512 (`--context 127` and `511`, one token), prefill of 128 tokens and
`generate` P = 128, D = 512; first with the board as derived, then with each divisor
hypothesis (the fit's effective pipelines replaced) and each HBM-efficiency reading (design
fields changed and the board re-fitted). Markdown on stdout, about 30 s.

The tables are the round-1 prediction, a record: the board as derived then, with FlightLLM's
constant transfer efficiencies (`ROUND1`); the round-2 model (the U280's measured HBM access
model) is benchmarks/flightllm_u280_round2.py.

Usage: python benchmarks/flightllm_u280.py
"""

from __future__ import annotations

from fpgasim.config import load_board, load_model
from fpgasim.config.board import Board
from fpgasim.engine import get_engine
from fpgasim.simulate import prefill_timing, verify_timing
from fpgasim.studies.generation import generate

#: the divisor hypotheses of docs/validation.md and the value each gives on the U280
DIVISORS = (
    ("pipelines = min(SLRs, channels / 10) (the board)", 3.0),
    ("one pipeline (SLR0 only, layers not split)", 1.0),
    ("HBM pin rate, Gb/s (1.8 on U280)", 1.8),
    ("a constant of FlightLLM's model, carried over", 3.2),
)
#: the other channel reading: one pipeline whose 8 logical channels each stripe over 4
#: pseudo-channels (460 / 8 GB/s per channel, all 32 in use), divisor 1: the design with one
#: pipeline (its MM array as fitted per SLR) and the memory split into 8 ports, all of them
#: the A channels
WIDE_CHANNELS = ("one pipeline, 8 channels of 4 pseudo-channels", (
    ("design.pipelines", "one"), ("design.mm_cols", 32), ("design.memory.ports", 8),
    ("design.memory.shared_channels", 0), ("design.memory.instruction_channels", 0)))
#: same-channel efficiency readings (cross-channel = half, FlightLLM's ratio)
EFFICIENCIES = (0.5, 0.6, 0.7, 0.8, 0.9)
BOARD = "flightllm-u280"
#: the board as round 1 derived it: FlightLLM's constant efficiencies (0.7 / 0.35)
ROUND1 = (("design.memory.transfer_model", "design_constants"),)


def variant(changes: tuple = (), divisor: float | None = None) -> Board:
    """The board with design fields changed (re-fitted), and its duration divisor (the fit's
    effective pipelines) replaced when `divisor` is given."""
    board = load_board(BOARD, (*ROUND1, *changes))
    if divisor is None:
        return board
    fit = board.fit.model_copy(update={"pipelines": divisor})
    return Board(name=f"{board.name} divisor={divisor:g}", description=board.description,
                 fpga=board.fpga, design=board.design, fit=fit)


def predict(board: Board) -> dict:
    """ms/token and tokens/s at T = 128 and 512, prefill 128 (ms), generate 128 + 512."""
    engine = get_engine("fast")
    model = load_model("llama2-7b-flightllm")
    out = {}
    for t in (128, 512):
        s = verify_timing(engine, board, model, 1, t - 1).seconds
        out[f"T={t} ms"] = 1e3 * s
        out[f"T={t} tok/s"] = 1 / s
    out["prefill 128 ms"] = 1e3 * prefill_timing(engine, board, model, 128).seconds
    gen = generate(engine, board, model, 128, 512).summary
    out["generate total s"] = gen["total_s"]
    out["generate decode tok/s"] = gen["decode_tokens_per_s"]
    return out


def table(rows: list[tuple[str, dict]]) -> str:
    keys = list(rows[0][1])
    lines = ["| variant | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
    for name, r in rows:
        lines.append(f"| {name} | " + " | ".join(f"{r[k]:.2f}" for k in keys) + " |")
    return "\n".join(lines)


def main() -> None:
    rows = [(name, predict(variant(divisor=d))) for name, d in DIVISORS]
    name, changes = WIDE_CHANNELS
    board = variant(changes)
    assert board.duration_divisor == 1.0 and board.fit.port_bytes_per_s == 460e9 / 8
    rows.append((name, predict(board)))
    print(table(rows))
    print()
    rows = [(f"e_same {e} / e_cross {e / 2}", predict(variant((
        ("design.memory.same_channel_efficiency", e),
        ("design.memory.cross_channel_efficiency", e / 2)))))
            for e in EFFICIENCIES]
    rows.append(("460 read as GiB/s (+7.4%)",
                 predict(variant((("design.memory.bandwidth_reading", "gib"),)))))
    print(table(rows))


if __name__ == "__main__":
    main()
