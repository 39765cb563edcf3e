"""The lowerings: how a pass becomes instructions, one subpackage per lowering, as peers.

`study/` is the study's tiling, `flightllm/` FlightLLM's compiler; `registry.py` maps
`board.lowering` to one of them and says what each does (docs/architecture.md, "Lowerings
are peers"). This file imports nothing, so a drafter plug-in can use a lowering's types
without loading every lowering.
"""
