"""The lowerings: how a pass becomes instructions, one subpackage per lowering, as peers.

`study/` is the study's tiling, `flightllm/` FlightLLM's compiler; `registry.py` maps
`board.lowering` to one of them and says what each does (docs/architecture.md, "Lowerings
are peers"). This file imports nothing, so importing one lowering loads that lowering only:
the drafter plug-ins import FlightLLM's draft types (`flightllm.drafts`, `flightllm.graph`),
which loads FlightLLM's compiler package but not the study lowering.
"""
