"""Print the event-vs-analytic tables of docs/validation.md (Markdown on stdout).

Also prints the worst ideal-mode deviation from analytic over the whole grid (target,
LongSpec and both EAGLE-3 passes). Usage: python benchmarks/validation_table.py
"""

from __future__ import annotations

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.schema import Buffers, Padding, Sfu
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.analytic import AnalyticEngine
from fpgasim.engine.event import EventEngine

BOARDS = ("u280", "vhk158", "v80", "u250")
CONTEXTS = (128, 1024, 16384)
XS = (1, 2, 4, 8, 16, 32, 64, 85)


def main() -> None:
    model = load_model("llama-3.1-8b")
    longspec = load_algorithm("longspec").drafter
    eagle3 = load_algorithm("eagle3").drafter
    analytic, event, ideal = AnalyticEngine(), EventEngine(), EventEngine()
    print("| board | L | x | analytic tok/s | event tok/s | event/analytic | ideal/analytic cycles "
          "| bound (analytic / event) |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    worst_ideal = 0.0
    for name in BOARDS:
        board = load_board(name)
        board_ideal = board.model_copy(update={"overlap": "ideal"})
        for context in CONTEXTS:
            for x in XS:
                spec = PassSpec("target", x, context)
                a = analytic.run_pass(spec, board, model)
                e = event.run_pass(spec, board, model)
                i = ideal.run_pass(spec, board_ideal, model)
                worst_ideal = max(worst_ideal, abs(i.cycles / a.cycles - 1))
                print(
                    f"| {name} | {context} | {x} | {x / a.seconds:.2f} | {x / e.seconds:.2f} "
                    f"| {a.cycles / e.cycles:.3f} | {i.cycles / a.cycles:.5f} "
                    f"| {a.bound} / {e.bound} |"
                )
    drafts = (
        ("LongSpec", "longspec", longspec, False),
        ("EAGLE-3 first", "eagle3", eagle3, True),
        ("EAGLE-3", "eagle3", eagle3, False),
    )
    for name in BOARDS:
        board_ideal = load_board(name).model_copy(update={"overlap": "ideal"})
        for context in CONTEXTS:
            for _, kind, drafter, first in drafts:
                for x in XS:
                    spec = PassSpec(kind, x, context, first=first)
                    a = analytic.run_pass(spec, board_ideal, model, drafter).cycles
                    i = ideal.run_pass(spec, board_ideal, model, drafter).cycles
                    worst_ideal = max(worst_ideal, abs(i / a - 1))
    print(f"\nworst ideal deviation (all passes): {worst_ideal:.3%}\n")

    print("| board | L | pass | x=1 | x=16 | x=85 |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    for name in BOARDS:
        board = load_board(name)
        for context in CONTEXTS:
            for label, kind, drafter, first in drafts:
                ratios = []
                for x in (1, 16, 85):
                    spec = PassSpec(kind, x, context, first=first)
                    a = analytic.run_pass(spec, board, model, drafter).cycles
                    e = event.run_pass(spec, board, model, drafter).cycles
                    ratios.append(f"{e / a:.3f}")
                print(f"| {name} | {context} | {label} | " + " | ".join(ratios) + " |")

    print("\nablations (V80, target pass, realistic event cycles / analytic cycles)\n")
    v80 = load_board("v80")
    variants = {
        "realistic (v80.yaml)": v80,
        "free SFU (65536 elements/cycle)": v80.model_copy(
            update={"sfu": Sfu(elements_per_cycle=65536, softmax_passes=2, norm_passes=2)}
        ),
        "no token padding (mm_token_multiple 1)": v80.model_copy(
            update={
                "padding": Padding(mm_token_multiple=1, decode_multiple=16, prefill_multiple=128)
            }
        ),
        "MV at the full array (16384)": v80.model_copy(update={"mv_macs_per_cycle": 16384}),
        "prefetch depth 1": v80.model_copy(
            update={"buffers": Buffers(weight_kib=16384, activation_kib=8192, prefetch_depth=1)}
        ),
        "prefetch depth 4": v80.model_copy(
            update={"buffers": Buffers(weight_kib=16384, activation_kib=8192, prefetch_depth=4)}
        ),
        "buffers / 8 (2 MiB weights, 1 MiB act.)": v80.model_copy(
            update={"buffers": Buffers(weight_kib=2048, activation_kib=1024, prefetch_depth=2)}
        ),
    }
    points = [(1, 1024), (4, 1024), (16, 1024), (85, 1024), (1, 16384), (16, 16384), (85, 16384)]
    print("| variant | " + " | ".join(f"x={x} L={c}" for x, c in points) + " |")
    print("| --- | " + " | ".join("---:" for _ in points) + " |")
    for label, board in variants.items():
        cells = []
        for x, context in points:
            spec = PassSpec("target", x, context)
            a = analytic.run_pass(spec, v80, model).cycles
            cells.append(f"{event.run_pass(spec, board, model).cycles / a:.3f}")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
