"""Norms and other element-wise ops: an operand load (if any), SFU work, a store (if any)."""

from __future__ import annotations

from fpgasim.dataflow.lowerings.study.machine import Machine, nbytes_of
from fpgasim.dataflow.lowerings.study.plan import Plan, Step
from fpgasim.dataflow.ops import Op


def plan_elementwise(m: Machine, op: Op, index: int) -> Plan:
    """The plan of an op without weights, cached keys or MACs (norm, softmax, silu_mul)."""
    if op.weight_elems or op.kv_elems or op.macs:
        raise ValueError(f"no instruction lowering for op {op.name!r} of kind {op.kind!r}")
    plan = Plan(op, index, operand_bytes=nbytes_of(op.act_elems, m.act_bits))
    plan.steps.append(
        Step(
            sfu_elements=op.sfu_elems,
            store_bytes=nbytes_of(op.store_elems, m.act_bits),
            needs_operand=op.act_elems > 0,
        )
    )
    return plan
