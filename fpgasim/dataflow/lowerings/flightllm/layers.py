"""Fusion: FlightLLM's graph -> hardware layers (docs/flightllm-model.md §4.1).

Decided from tensors only: an attention QK^T whose output the next op (a softmax) reads
absorbs it; a linear whose output the next op reads absorbs a SiLU, or a run of eltwise ops
that each read the linear's output or an absorbed op's output (length 1, or 3 for the RoPE
triple). The eltwise operands produced outside the fused group are loaded per output group
(one LD set each). Everything else stands alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fpgasim.dataflow.graph import Graph, GraphError


@dataclass(frozen=True)
class HwLayer:
    """One hardware layer: the compiler's unit between two SYS barriers.

    kind     linear | attention_qk | attention_pv | concat | norm | eltwise | silu
    rows     M (query rows; 1 in decode)
    k, n     reduction and output width (attention: per head; concat: cached positions, -)
    misc     fused MISC ops in order (e.g. ("eltwise",) * 3 for RoPE, ("silu",), ("softmax",))
    operand_sets  external eltwise operands (one LD set each per output group)
    heads         attention: K/V streams (KV heads in decode and verify passes)
    group         attention: query rows per token of a K/V stream (query heads per KV head
                  in decode and verify passes; rows are token-major)
    past          attention: keys of the layer before its first row's token (the rest of a
                  row's keys end at its own token; = k or n when every row sees every key)
    mask_layer    prefill attention: which layer's mask (-1: none)
    prefill       a layer of a prefill pass (compiled by FlightLLM's published rules only)
    """

    kind: str
    name: str
    rows: int
    k: int
    n: int
    sparse_ratio: float = 1.0
    bias: bool = False
    misc: tuple[str, ...] = ()
    operand_sets: int = 0
    heads: int = 1
    group: int = 1
    past: int = -1
    mask_layer: int = -1
    prefill: bool = False

    def key(self) -> tuple:
        """Everything but the name: identical keys compile to identical instructions."""
        key = (self.kind, self.rows, self.k, self.n, self.sparse_ratio, self.bias, self.misc,
               self.operand_sets, self.heads, self.mask_layer, self.prefill)
        if self.group != 1 or self.past >= 0:  # grouped or key-tiled attention
            key += (self.group, self.past)
        return key

    @property
    def tokens(self) -> int:
        """Query tokens of an attention layer (rows / group)."""
        return self.rows // self.group

    @property
    def keys(self) -> int:
        """Keys of an attention layer (QK^T: n, PV: k)."""
        return self.n if self.kind == "attention_qk" else self.k

    @property
    def keys_before(self) -> int:
        """Keys before the first row's token: `past`, or keys - tokens when not tiled."""
        return self.past if self.past >= 0 else self.keys - self.tokens


def hardware_layers(graph: Graph, prefill: bool) -> list[HwLayer]:
    """The graph's ops (between its inputs and outputs) fused into hardware layers."""
    nodes = graph.nodes
    readers: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        for t in node.inputs:
            readers.setdefault(t, []).append(i)
    out: list[HwLayer] = []
    i = 0
    while i < len(nodes):
        node = nodes[i]
        nxt = nodes[i + 1] if i + 1 < len(nodes) else None
        reads_me = nxt is not None and any(t in nxt.inputs for t in node.outputs)
        shape_in = graph.tensors[node.inputs[0]].shape
        if node.kind == "linear":
            w = graph.tensors[node.inputs[1]].shape
            base = dict(kind="linear", name=node.name, rows=shape_in[0], k=w[0], n=w[1],
                        sparse_ratio=float(node.attr("sparse_ratio", 1.0)),
                        bias=bool(node.attr("bias", False)))
            if reads_me and nxt.kind == "silu":
                out.append(HwLayer(**base, misc=("silu",)))
                i += 2
                continue
            if reads_me and nxt.kind == "eltwise":
                made = set(node.outputs)
                run = []
                j = i + 1
                while j < len(nodes) and nodes[j].kind == "eltwise" and made & set(nodes[j].inputs):
                    run.append(nodes[j])
                    made |= set(nodes[j].outputs)
                    j += 1
                if len(run) not in (1, 3):
                    raise GraphError(graph.name, node.name, node.outputs[0],
                                     f"fused eltwise run of {len(run)} ops; FlightLLM fuses 1 or 3")
                external = []
                for e in run:
                    external += [t for t in e.inputs if t not in made and t not in external]
                out.append(HwLayer(**base, misc=("eltwise",) * len(run),
                                   operand_sets=len(external)))
                i = j
                continue
            out.append(HwLayer(**base))
            i += 1
            continue
        if node.kind == "attention_qk":
            q = graph.tensors[node.inputs[0]].shape
            heads, rows, keys = graph.tensors[node.outputs[0]].shape
            group = int(node.attr("group", 1))
            hd = q[1] * int(node.attr("requests", 1)) // (heads * group)
            if not (reads_me and nxt.kind == "softmax"):
                raise GraphError(graph.name, node.name, node.outputs[0],
                                 "QK^T without a fused softmax is not supported")
            out.append(HwLayer("attention_qk", node.name, rows, hd, keys, misc=("softmax",),
                               heads=heads, group=group, past=_past(node, keys, rows, group),
                               mask_layer=int(node.attr("layer")) if prefill else -1))
            i += 2
            continue
        if node.kind == "attention_pv":
            heads, rows, keys = graph.tensors[node.inputs[0]].shape
            group = int(node.attr("group", 1))
            hd = (graph.tensors[node.outputs[0]].shape[1] * int(node.attr("requests", 1))
                  // (heads * group))
            out.append(HwLayer("attention_pv", node.name, rows, keys, hd, heads=heads,
                               group=group, past=_past(node, keys, rows, group),
                               mask_layer=int(node.attr("layer")) if prefill else -1))
            i += 1
            continue
        if node.kind == "concat":
            cache = graph.tensors[node.inputs[0]].shape
            new = graph.tensors[node.inputs[1]].shape
            # FlightLLM asserts one new token; more (a verify pass) read the cache the same way
            out.append(HwLayer("concat", node.name, new[0], cache[1], cache[2], heads=cache[0]))
            i += 1
            continue
        if node.kind == "rmsnorm":
            width = graph.tensors[node.outputs[0]].shape[1]
            out.append(HwLayer("norm", node.name, shape_in[0], width, width,
                               misc=("norm",)))
            i += 1
            continue
        if node.kind in ("eltwise", "silu"):
            out.append(HwLayer(node.kind, node.name, shape_in[0], shape_in[1], shape_in[1],
                               misc=(node.kind,)))
            i += 1
            continue
        raise GraphError(graph.name, node.name, "-", f"kind {node.kind!r} has no FlightLLM layer")
    return [replace(x, prefill=True) for x in out] if prefill else out


def _past(node, keys: int, rows: int, group: int) -> int:
    """The layer's `past`: -1 (implicit) for an untiled layer whose keys end at its last row,
    else the op's `past` (keys of the tile before the first row, at most the tile's keys)."""
    past = node.attr("past")
    if past is None or past == keys - rows // group:
        return -1
    return int(past)
