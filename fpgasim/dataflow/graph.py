"""The dataflow graph: named tensors (shape, dtype, where they live) and the ops between them.

A compiler-style IR. Every op names the tensors it reads and writes; dependencies are derived
from those names, never from op names or positions. A graph is checked when it is built: an
op that reads a tensor nobody produces (and that is not a declared graph input), or a tensor
written twice, is a `GraphError` naming both the op and the tensor. `Graph.dump()` is what
`fpgasim simulate --dump-graph` prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from fpgasim.bounded import BoundedCache, bounded_cache
from fpgasim.errors import FpgasimError

#: Where a tensor lives: streamed weights, the KV cache and other off-chip tensors, or on chip.
Location = Literal["weights", "kv_cache", "hbm", "on_chip"]
LOCATIONS: tuple[str, ...] = ("weights", "kv_cache", "hbm", "on_chip")

#: Storage bits per element of each dtype the graphs use.
DTYPE_BITS: dict[str, int] = {
    "int4": 4,
    "int8": 8,
    "int32": 32,
    "fp16": 16,
    "bf16": 16,
    "fp32": 32,
}


class GraphError(FpgasimError):
    """A malformed graph: unknown tensor, tensor read before it is produced, double writes."""

    def __init__(self, graph: str, op: str, tensor: str, problem: str) -> None:
        self.graph = graph
        self.op = op
        self.tensor = tensor
        self.problem = problem
        super().__init__(f"graph {graph}: op {op!r}, tensor {tensor!r}: {problem}")


@dataclass(frozen=True)
class Tensor:
    """A named tensor: its shape in elements, element type and where it lives."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    location: Location

    def __post_init__(self) -> None:
        if self.dtype not in DTYPE_BITS:
            allowed = sorted(DTYPE_BITS)
            raise GraphError("?", "?", self.name, f"dtype {self.dtype!r} not in {allowed}")
        if self.location not in LOCATIONS:
            raise GraphError("?", "?", self.name, f"location {self.location!r} not in {LOCATIONS}")
        if self.shape and min(self.shape) < 0:
            raise GraphError("?", "?", self.name, f"negative dimension in shape {self.shape}")

    @property
    def elements(self) -> int:
        """Number of elements (product of the shape; 1 for a scalar)."""
        out = 1
        for d in self.shape:
            out *= d
        return out

    @property
    def nbytes(self) -> int:
        """Storage bytes, rounded up to whole bytes."""
        return (self.elements * DTYPE_BITS[self.dtype] + 7) // 8


@dataclass(frozen=True)
class Node:
    """One op of the graph: its kind, the tensors it reads and writes, and its attributes."""

    name: str
    kind: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[tuple[str, object], ...] = ()

    def attr(self, key: str, default: object = None) -> object:
        """Attribute `key`, or `default` when the op does not carry it."""
        for k, v in self.attrs:
            if k == key:
                return v
        return default


#: (producers, ancestors, direct producers) of every op of a graph, by op index
_Dependencies = tuple[
    tuple[tuple[int, ...], ...], tuple[frozenset[int], ...], tuple[tuple[int, ...], ...]
]
#: dependencies per graph structure (each op's input and output tensor names)
_DEPENDENCIES: BoundedCache[_Dependencies] = bounded_cache(
    "graph.dependencies", owner="fpgasim.dataflow.graph",
    keys="a graph's structure (each op's input and output tensor names)", budget=4096,
    why="producers and ancestors of every op, shared by the graphs of one pass at every "
    "context (only tensor shapes differ)")


def _dependencies_of(nodes: tuple[Node, ...], producer: Mapping[str, int]) -> _Dependencies:
    """Producers, ancestors and direct producers of every op (see `Graph.direct_producers`)."""
    producers: list[tuple[int, ...]] = []
    ancestors: list[frozenset[int]] = []
    direct: list[tuple[int, ...]] = []
    for node in nodes:
        found = tuple(sorted({producer[t] for t in node.inputs if t in producer}))
        producers.append(found)
        ancestors.append(frozenset(found).union(*(ancestors[p] for p in found)))
        implied = frozenset().union(*(ancestors[p] for p in found))
        direct.append(tuple(p for p in found if p not in implied))
    return tuple(producers), tuple(ancestors), tuple(direct)


@dataclass(frozen=True)
class Graph:
    """Tensors, the graph's external inputs, and ops in a valid execution order."""

    name: str
    tensors: Mapping[str, Tensor]
    inputs: tuple[str, ...]
    nodes: tuple[Node, ...]
    _producer: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)
    _deps: _Dependencies | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        producer: dict[str, int] = {}
        for t in self.inputs:
            if t not in self.tensors:
                raise GraphError(self.name, "<graph input>", t, "declared as input but not defined")
        seen_nodes: set[str] = set()
        for i, node in enumerate(self.nodes):
            if node.name in seen_nodes:
                raise GraphError(self.name, node.name, "-", "op name used twice")
            seen_nodes.add(node.name)
            for t in node.inputs:
                if t not in self.tensors:
                    raise GraphError(self.name, node.name, t, "reads a tensor that is not defined")
                if t not in producer and t not in self.inputs:
                    raise GraphError(
                        self.name,
                        node.name,
                        t,
                        "reads a tensor that no earlier op produces and that is not a graph input",
                    )
            for t in node.outputs:
                if t not in self.tensors:
                    raise GraphError(self.name, node.name, t, "writes a tensor that is not defined")
                if t in self.inputs:
                    raise GraphError(self.name, node.name, t, "writes a graph input")
                if t in producer:
                    other = self.nodes[producer[t]].name
                    raise GraphError(self.name, node.name, t, f"already written by op {other!r}")
                producer[t] = i
        object.__setattr__(self, "_producer", producer)

    def node(self, name: str) -> Node:
        """The op called `name`."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    def producer(self, tensor: str) -> int | None:
        """Index of the op that writes `tensor`; None for a graph input."""
        return self._producer.get(tensor)

    def producers(self, index: int) -> tuple[int, ...]:
        """Indices of the ops whose outputs op `index` reads (sorted, without repeats)."""
        return self._dependencies()[0][index]

    def ancestors(self, index: int) -> frozenset[int]:
        """Indices of every op that op `index` depends on, directly or through other ops."""
        return self._dependencies()[1][index]

    def direct_producers(self, index: int) -> tuple[int, ...]:
        """`producers(index)` minus those another producer already depends on (sorted).

        Waiting for these is waiting for all producers: the rest are implied (a transitive
        reduction), e.g. a residual input whose producer the attention output depends on.
        """
        return self._dependencies()[2][index]

    def _dependencies(self) -> _Dependencies:
        """Producers, ancestors and direct producers of every op, shared by every graph of
        the same structure (e.g. one pass at many contexts: only tensor shapes differ)."""
        if self._deps is None:
            key = tuple((node.inputs, node.outputs) for node in self.nodes)
            deps = _DEPENDENCIES(key, lambda: _dependencies_of(self.nodes, self._producer))
            object.__setattr__(self, "_deps", deps)
        return self._deps

    def consumers(self, tensor: str) -> tuple[int, ...]:
        """Indices of the ops that read `tensor`."""
        return tuple(i for i, n in enumerate(self.nodes) if tensor in n.inputs)

    def dump(self) -> str:
        """A readable listing: graph inputs, then one line per op with its tensors."""

        def show(name: str) -> str:
            """A tensor as name[shape dtype @location]."""
            t = self.tensors[name]
            dims = "x".join(str(d) for d in t.shape) or "scalar"
            return f"{name}[{dims} {t.dtype} @{t.location}]"

        lines = [f"graph {self.name}: {len(self.nodes)} ops, {len(self.tensors)} tensors"]
        lines.append("inputs:")
        lines += [f"  {show(t)}" for t in self.inputs]
        lines.append("ops:")
        width = max((len(n.name) for n in self.nodes), default=0)
        for node in self.nodes:
            ins = ", ".join(show(t) for t in node.inputs)
            outs = ", ".join(show(t) for t in node.outputs)
            extra = " ".join(f"{k}={v}" for k, v in node.attrs)
            tail = f"  {{{extra}}}" if extra else ""
            lines.append(f"  {node.name:<{width}}  {node.kind:<10} ({ins}) -> ({outs}){tail}")
        return "\n".join(lines)


class GraphBuilder:
    """Builds a `Graph` op by op; `build()` checks it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tensors: dict[str, Tensor] = {}
        self._inputs: list[str] = []
        self._nodes: list[Node] = []

    def tensor(self, name: str, shape: Iterable[int], dtype: str, location: Location) -> str:
        """Define a tensor (names are unique) and return its name."""
        if name in self._tensors:
            raise GraphError(self.name, "<define>", name, "tensor defined twice")
        self._tensors[name] = Tensor(name, tuple(map(int, shape)), dtype, location)
        return name

    def input(self, name: str, shape: Iterable[int], dtype: str, location: Location) -> str:
        """Define a graph input (weights, KV cache, the incoming activations)."""
        self.tensor(name, shape, dtype, location)
        self._inputs.append(name)
        return name

    def op(
        self,
        name: str,
        kind: str,
        inputs: Iterable[str],
        outputs: Iterable[str],
        **attrs: object,
    ) -> Node:
        """Append an op reading `inputs` and writing `outputs` (tensor names)."""
        node = Node(name, kind, tuple(inputs), tuple(outputs), tuple(sorted(attrs.items())))
        self._nodes.append(node)
        return node

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape of a tensor defined so far."""
        return self._tensors[name].shape

    def build(self) -> Graph:
        """The checked graph."""
        return Graph(self.name, dict(self._tensors), tuple(self._inputs), tuple(self._nodes))
