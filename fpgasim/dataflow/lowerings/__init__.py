"""The lowerings: how a pass becomes instructions, one subpackage per lowering, as peers.

`flightllm/` is FlightLLM's compiler, generalised, the one lowering every board runs (the
study's own tiling, `study/`, was retired: docs/flightllm-sd.md, "One compiler");
`registry.py` maps `board.lowering` to it and says what it does (docs/architecture.md,
"Lowerings are peers"). This file imports nothing, so importing a lowering loads that
lowering only: the drafter plug-ins import FlightLLM's draft types (`flightllm.drafts`,
`flightllm.graph`), which loads FlightLLM's compiler package.
"""
