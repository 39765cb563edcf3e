"""The study's element-count reader of a target's description: the target's forward pass
as ops carrying docs/accounting.md's element counts, and its dataflow graph (`PassOps`),
built by visiting `describe_target(model)` (docs/architecture.md, "One model description
and its readers").

The study's conventions are named options (`StudyConventions`, default `STUDY`), not
baked into the nodes: the residual add is charged to the projection that feeds it (its
n x width load and one SFU pass), SwiGLU's SiLU(gate) x up to `up` (the n x i gate
elements in its loads and two SFU passes), RoPE is not charged (no op), norms stream no
weights, weights are reread every 128 input tokens of a pass, and a mixture of experts
streams every expert's weights as three linears E experts wide. The `analytic` engine's
closed form (`engine/analytic.target_counts`) is held against this reader
(tests/engine/test_analytic.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from fpgasim.config.board import Board
from fpgasim.config.schema import TargetModel, model_source
from fpgasim.dataflow.description import ModelGraph, Reader, describe_target
from fpgasim.dataflow.description.nodes import (
    Activation,
    Attention,
    Linear,
    LmHead,
    Node,
    Norm,
    Residual,
    Rope,
    RoutedExperts,
    Router,
    SharedExperts,
)
from fpgasim.dataflow.ops import PassOps
from fpgasim.dataflow.passes import WEIGHT_REUSE_TOKENS, Net, weight_reads
from fpgasim.errors import ConfigError


@dataclass(frozen=True)
class StudyConventions:
    """The study's accounting rules for a description (docs/accounting.md), each a field.

    weight_reuse_tokens    a pass streams its weights once per this many input tokens
    residual_loads         a residual add's skip operand is loaded by the projection that
                           feeds the add (n x width elements)
    residual_sfu_passes    SFU passes charged to that (dense) projection for the add
    glu_gate_loads         SwiGLU's gate output is loaded by `up` (n x i elements)
    glu_sfu_passes         SFU passes charged to `up` for SiLU(gate) x up
    """

    weight_reuse_tokens: int = WEIGHT_REUSE_TOKENS
    residual_loads: bool = True
    residual_sfu_passes: int = 1
    glu_gate_loads: bool = True
    glu_sfu_passes: int = 2


#: the study's own conventions (docs/accounting.md): the published cells
STUDY = StudyConventions()


class StudyReader(Reader):
    """Visits a description's nodes into `Net`'s ops and graph, one method per node kind;
    `tensors` maps each description activation to the graph tensors standing for it."""

    what = "the study's accounting"

    def __init__(self, net: Net, model: TargetModel, context: int,
                 conventions: StudyConventions = STUDY) -> None:
        self.net, self.model, self.context, self.c = net, model, context, conventions
        self.n = net.n
        self.tensors: dict[str, tuple[str, ...]] = {}
        #: a branch's activation -> the skip a residual adds onto it
        self.skip_of: dict[str, str] = {}
        #: SwiGLU's `up` output -> the gated activation it multiplies
        self.gated_of: dict[str, Activation] = {}

    def block(self, nodes: tuple[Node, ...], source: str, x: str) -> str:
        """Visit `nodes`, whose input activation `source` is the graph tensor `x`; the
        tensor of the last node's output (`x` if there are none or it writes none)."""
        self.tensors = {source: (x,)}
        self.skip_of = {n.inputs[0]: n.inputs[1] for n in nodes if n.kind == "residual"}
        self.gated_of = {n.inputs[1]: n for n in nodes
                         if n.kind == "activation" and n.gated}
        for node in nodes:
            self.visit(node)
        last = self.tensors.get(nodes[-1].output) if nodes else None
        return last[0] if last else x

    def one(self, name: str) -> str:
        """The one graph tensor of activation `name`."""
        (tensor,) = self.tensors[name]
        return tensor

    def norm(self, node: Norm) -> None:
        """A norm: n x width loaded and stored, the board's norm passes on the SFU."""
        self.tensors[node.output] = (self.net.norm(node.name, self.one(node.inputs[0]),
                                                   node.width),)

    def linear(self, node: Linear) -> None:
        """A projection, charged the SwiGLU product when it is `up` and the residual add
        when its output feeds one."""
        n, c = self.n, self.c
        inputs = list(self.tensors[node.inputs[0]])
        act, sfu = n * node.d_in, 0
        gated = self.gated_of.get(node.output)
        if gated is not None:
            act += n * gated.width if c.glu_gate_loads else 0
            sfu += c.glu_sfu_passes * n * gated.width
        skip = self.skip_of.get(node.output)
        if skip is not None:
            inputs.append(self.one(skip))
            act += n * node.d_out if c.residual_loads else 0
            sfu += c.residual_sfu_passes * n * node.d_out
        self.tensors[node.output] = (self.net.linear(node.name, inputs, node.d_in, node.d_out,
                                                     act_elems=act, sfu_elems=sfu),)

    def rope(self, node: Rope) -> None:
        """Not charged: the rotated rows stand for the projection's output."""
        self.tensors[node.output] = self.tensors[node.inputs[0]]

    def attention(self, node: Attention) -> None:
        """QK^T, softmax and PV over the n new and the `context` cached keys."""
        q, k, v = (self.one(name) for name in node.inputs)
        self.tensors[node.output] = (self.net.attention(
            node.name, q, k, v, self.n + self.context, self.context),)

    def activation(self, node: Activation) -> None:
        """SwiGLU's product is charged to `up` (`linear`); its readers load gate and up."""
        if not node.gated:
            raise ConfigError(model_source(self.model), "architecture",
                              self.model.architecture, "a gated MLP (the study's "
                              "accounting has no rule for a plain activation)")
        self.tensors[node.output] = self.tensors[node.inputs[0]] + self.tensors[node.inputs[1]]

    def residual(self, node: Residual) -> None:
        """Charged to the projection that feeds it: the sum is that projection's output."""
        self.tensors[node.output] = self.tensors[node.inputs[0]]

    def lm_head(self, node: LmHead) -> None:
        """The LM head over the n rows."""
        self.net.lm_head(self.one(node.inputs[0]), self.n, node.vocab)

    def router(self, node: Router) -> None:
        """The router as a linear h -> E."""
        h = node.weight.shape[0]
        self.tensors[node.output] = (self.net.linear(
            node.name, [self.one(node.inputs[0])], h, node.experts, act_elems=self.n * h),)

    def routed_experts(self, node: RoutedExperts) -> None:
        """All E experts' gate, up and down as three linears E experts wide (every
        expert's weights streamed: docs/moe-sd.md); down loads the residual's skip."""
        n, h, width = self.n, node.d_in, node.experts * node.d_ff
        x = self.one(node.inputs[0])
        gate = self.net.linear(f"{node.name}.gate", [x], h, width, act_elems=n * h)
        up = self.net.linear(f"{node.name}.up", [x], h, width, act_elems=n * h)
        self.tensors[node.output] = (self.net.linear(
            f"{node.name}.down", [gate, up, self.one(self.skip_of[node.output])], width, h,
            act_elems=n * width + n * h),)

    def shared_experts(self, node: SharedExperts) -> None:
        """The shared expert's gate (h -> 1), gate, up and down; down loads the skip."""
        n, h, s = self.n, node.d_in, node.d_ff
        x = self.one(node.inputs[0])
        if node.gate is not None:
            self.net.linear(f"{node.name}.router", [x], h, 1, act_elems=n * h)
        gate = self.net.linear(f"{node.name}.gate", [x], h, s, act_elems=n * h)
        up = self.net.linear(f"{node.name}.up", [x], h, s, act_elems=n * h)
        self.tensors[node.output] = (self.net.linear(
            f"{node.name}.down", [gate, up, self.one(self.skip_of[node.output])], s, h,
            act_elems=n * s + n * h),)


def read_pass(graph: ModelGraph, model: TargetModel, n: int, context: int,
              board: Board | None, conventions: StudyConventions = STUDY) -> PassOps:
    """A description's pass over n tokens at context L as the study's ops and graph."""
    net = Net(f"target n={n} L={context}", model, n, board)
    net.reads = weight_reads(n, conventions.weight_reuse_tokens)
    reader = StudyReader(net, model, context, conventions)
    reader.check(graph, model)
    layer_in = graph.head[-1].output if graph.head else graph.input
    x = net.act_input(graph.input, n, graph.input_width)
    return net.build(
        "target", context, graph.layers,
        lambda x: reader.block(graph.head, graph.input, x),
        lambda x: reader.block(graph.layer, layer_in, x),
        lambda x: reader.block(graph.tail, graph.layer[-1].output, x),
        x)


def target_pass(m: TargetModel, n: int, context: int, board: Board | None,
                conventions: StudyConventions = STUDY) -> PassOps:
    """Target forward pass over n tree tokens at context L (n = 1 is AD), read off the
    model's description; `board` None: its elements only (see `Net`)."""
    return read_pass(describe_target(m), m, n, context, board, conventions)
