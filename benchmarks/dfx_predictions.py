"""DFX predicted blind (issue 39 item 3): text generation of 64 input + 64 output tokens
on DFX's lowering (docs/dfx.md), and the sensitivity of each "not stated" choice.

Throughput = output tokens / total latency, prefill included: one prefill pass over the
64-token prompt (a batched window, docs/dfx.md "Not stated"; it yields the first output
token), then 63 generation passes of one token at contexts 64..126. Sync share = the
ROUTER's busy time over the total (every sync is on the critical path: the next matrix
instruction waits for the gathered vector). Board power per card = fpgasim's energy model
(docs/energy.md) over the same passes, with the U280's sourced idle power
(fpgas/u280.yaml `power.static_w`). Run: `python benchmarks/dfx_predictions.py`.

The batched rows are `fpgasim generate`'s own run (`studies.generation.generate`, what
`fpgasim generate --fpga u280 --design dfx --cards N --parallel tp --model M --prompt-len 64
--decode-len 63` prints: D = 63 decode steps after the prefill's first token), so the CLI
and these predictions are one path (tests/cli/test_dfx_cli.py checks it); the per-pass loop
below adds the ROUTER's share and the power over the same passes, and the token-serial case.
"""

from __future__ import annotations

import math
import sys

from fpgasim.config import load_model
from fpgasim.config.board_loader import board_of
from fpgasim.config.cluster import Cluster
from fpgasim.dataflow.lowerings import dfx
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import get_engine
from fpgasim.engine.energy import energy_constants, pass_energy
from fpgasim.studies.generation import generate

PROMPT, OUTPUT = 64, 64
CASES = (("gpt2-345m", 1), ("gpt2-345m", 2), ("gpt2-345m", 4), ("gpt2-774m", 2),
         ("gpt2-1.5b", 4))
#: DFX's DSPs: 39.15 % of the U280's 9,024 (its implementation; docs/dfx.md), against the
#: fit's one DSP per FP16 MAC (1,024): the energy model's clock term counts DSPs clocked
DFX_DSPS = round(0.3915 * 9024)
#: docs/multi-fpga.md, "One hop's latency": 0.25 us default, 0.15 to 2 us argued
HOPS_S = (0.15e-6, 0.25e-6, 0.5e-6, 1e-6, 2e-6)


def generation(model_name: str, cards: int, hop_s: float = 0.25e-6,
               token_serial: bool = False, engine: str = "fast") -> dict:
    """One request's prediction: tokens/s, prefill and per-token times, sync share, power."""
    board = board_of("u280", "dfx").with_cluster(Cluster(cards=cards, hop_latency_s=hop_s))
    model = load_model(model_name)
    run = get_engine(engine)
    if token_serial:  # the prompt one token at a time, each a pass over the cache so far
        prefill = [PassSpec("target", 1, c) for c in range(PROMPT)]
    else:
        prefill = [PassSpec("target", PROMPT, 0, phase="prefill")]
    decode = [PassSpec("target", 1, PROMPT + i) for i in range(OUTPUT - 1)]
    # a token-serial prompt's passes each end in the LM head (the lowering's tail); only the
    # last prompt token's logits are used, so the serial tail of the other 63 (final
    # LayerNorm, the head's tiles and drain, the argmax gather) is also reported removed
    h, n = load_model(model_name).hidden, cards
    tail_cycles = (dfx.NORM_PASSES * math.ceil(h / 64) + dfx.NORM_LATENCY
                   + math.ceil(h / 64) * math.ceil(math.ceil(load_model(model_name).vocab / n)
                                                    / 16) + dfx.MPU_DRAIN_CYCLES)
    seconds = {"prefill": 0.0, "decode": 0.0}
    router = total = 0.0
    energy = None
    for phase, specs in (("prefill", prefill), ("decode", decode)):
        for spec in specs:
            t = run.run_pass(spec, board, model)
            seconds[phase] += t.seconds
            router += t.unit_busy_cycles.get("ROUTER", 0) / board.clock_hz
            total += t.seconds
            e = pass_energy(t, board, engine)
            energy = e if energy is None else energy + e
    if not token_serial:  # the CLI's generation: the same passes, its sums
        summary = generate(run, board, model, PROMPT, OUTPUT - 1).summary
        if not math.isclose(summary["total_s"], total, rel_tol=1e-12):
            raise AssertionError(f"generate's {summary['total_s']} s != the passes' {total} s")
        seconds = {"prefill": summary["ttft_s"], "decode": summary["decode_s"]}
        total = summary["total_s"]
    spare_s = (PROMPT - 1) * tail_cycles / board.clock_hz if token_serial else 0.0
    c = energy_constants(board)
    dsp_w = ((DFX_DSPS - board.fit.dsps_used) * board.clock_hz
             * c.clock_pj_per_dsp_cycle.value * 1e-12 / c.regulator_efficiency.value)
    return {
        "model": model_name, "cards": cards, "hop_us": hop_s * 1e6,
        "prefill": "token-serial" if token_serial else "batched",
        "tokens_per_s": summary["tokens_per_s"] if not token_serial else OUTPUT / total,
        "prefill_ms": seconds["prefill"] * 1e3,
        "decode_ms_per_token": seconds["decode"] * 1e3 / (OUTPUT - 1),
        "total_ms": total * 1e3,
        "sync_share": router / total,
        "tokens_per_s_no_prompt_heads": OUTPUT / (total - spare_s),
        "power_w_per_card": energy.power_w,
        "power_w_dfx_dsps": energy.power_w + dsp_w,
        "static_w": energy.static_w,
    }


def run() -> list[dict]:
    """The predictions and the sensitivity rows."""
    rows = [generation(m, n) for m, n in CASES]
    for m, n in CASES:
        rows += [generation(m, n, hop) for hop in HOPS_S if hop != 0.25e-6 and n > 1]
        rows.append(generation(m, n, token_serial=True))
    return rows


def main() -> None:
    """Print the rows as a Markdown table."""
    cols = ("model", "cards", "hop_us", "prefill", "tokens_per_s", "prefill_ms",
            "decode_ms_per_token", "sync_share", "power_w_per_card", "power_w_dfx_dsps",
            "tokens_per_s_no_prompt_heads")
    print("| " + " | ".join(cols) + " |")
    print("|" + " --- |" * len(cols))
    for r in run():
        cells = [r["model"], r["cards"], f"{r['hop_us']:g}", r["prefill"],
                 f"{r['tokens_per_s']:.1f}", f"{r['prefill_ms']:.2f}",
                 f"{r['decode_ms_per_token']:.3f}", f"{r['sync_share']:.1%}",
                 f"{r['power_w_per_card']:.1f}", f"{r['power_w_dfx_dsps']:.1f}",
                 f"{r['tokens_per_s_no_prompt_heads']:.1f}"]
        print("| " + " | ".join(map(str, cells)) + " |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
