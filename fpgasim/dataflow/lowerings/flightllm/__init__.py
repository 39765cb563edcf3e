"""FlightLLM's compiler, generalised: the lowering of every board (`Board.lowering` is
"flightllm"; results name it `lowering: flightllm`).

`lower` builds FlightLLM's LLaMA graph for the pass (flightllm_graph.py), fuses it into
hardware layers (layers.py), cuts them into barrier-delimited parts (part_plan.py),
compiles each part once (compiler.py, kept in part_store.py) and returns the pass as an
`Executable`: the parts in program order, on FlightLLM's six units with their roles
(flightllm_lowering.py; a pass's checks and alignment in pass_shapes.py). Registered as
"flightllm" in `fpgasim.dataflow.lowerings.registry`. See docs/validation.md,
"FlightLLM". This face only re-exports.
"""

from __future__ import annotations

from fpgasim.dataflow.lowerings.flightllm.compiler import (
    TICKS_PER_CYCLE,
    UNIT_NAMES,
    Rates,
)
from fpgasim.dataflow.lowerings.flightllm.drafts import BLOCKS
from fpgasim.dataflow.lowerings.flightllm.flightllm_lowering import (
    FLOOR_SLACK,
    draft_layers_of,
    fixed_floor_cycles,
    hardware_layers_of,
    lower,
    lower_fixed,
    pass_layers,
)
from fpgasim.dataflow.lowerings.flightllm.pass_shapes import (
    fixed_shape,
    pass_shape,
    prefill_chunk_tokens,
    prefill_mask_used,
    prefill_masks,
)

__all__ = [
    "BLOCKS", "FLOOR_SLACK", "TICKS_PER_CYCLE", "UNIT_NAMES", "Rates", "draft_layers_of",
    "fixed_floor_cycles", "fixed_shape", "hardware_layers_of", "lower", "lower_fixed",
    "pass_layers", "pass_shape", "prefill_chunk_tokens", "prefill_mask_used",
    "prefill_masks",
]
