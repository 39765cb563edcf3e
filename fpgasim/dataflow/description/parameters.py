"""The parameter reader of a target's description: weights by part, KV elements per
token, total and active parameters (docs/architecture.md, "One model description and its
readers").

Its readers: `simulate.memory_bytes` (the off-chip bytes of a point), `fpgasim models`
(the parameter count beside the published one) and the heterogeneous GPU+FPGA model
(heterogeneous/costs.py). The `analytic` engine keeps the study's closed forms
(docs/accounting.md); tests/engine/test_analytic.py holds them against the description.

`TargetArithmetic.stored_bytes(recipe)` is the one weight size of a (model, recipe): every
weight at the recipe's `weight_bits` x its projection's sparse ratio (`Recipe.weight_bytes`),
the biases the recipe or the architecture loads at `bias_bits`. The capacity check reads it,
FlightLLM's weight loads move it (their bytes over `Recipe.load_ratio`), the energy counts
what the loads move, and the analytic engine streams `streamed_bytes` per weight read
(docs/hardware.md, "One weight size").
"""

from __future__ import annotations

from dataclasses import dataclass

from fpgasim.bounded import memoised
from fpgasim.config.design import Linear, Recipe
from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.description import ModelGraph, Reader, describe_target
from fpgasim.dataflow.description.nodes import (
    Activation,
    Attention,
    LmHead,
    Norm,
    Positions,
    Residual,
    Rope,
    RoutedExperts,
    Router,
    SharedExperts,
)
from fpgasim.dataflow.description.nodes import Linear as LinearNode


def recipe_projection(name: str) -> str:
    """The recipe projection a layer linear is compressed as: its own name; an MoE
    expert's or shared expert's gate, up and down as the dense MLP's (docs/moe-sd.md);
    a router (`router`, `shared.router`): None's dense stand-in `router`."""
    last = name.rsplit(".", 1)[-1]
    return "router" if last == "router" else last


def projection_linear(recipe: Recipe, name: str) -> Linear:
    """The recipe's Linear of a layer projection (`recipe_projection`); routers are
    dense and unbiased (no recipe compresses them: docs/moe-sd.md)."""
    short = recipe_projection(name)
    return Linear() if short == "router" else recipe.linear(short)


@dataclass(frozen=True)
class TargetArithmetic:
    """One target model's weights and KV cache, in elements.

    layer_linear_weights  q, k, v, o and the MLP's gate, up, down of one decoder layer
    layer_norm_weights    the gains of one layer's norms (the study's accounting, which
                          streams no norm weights, leaves them out)
    layer_bias_weights    q/k/v biases of one layer (Qwen2's `attention_bias`), else 0
    final_norm_weights    the final norm's gains
    lm_head_weights       hidden x vocab
    embedding_weights     the embedding table (looked up, not streamed): the LM head's shape
    layer_kv_per_token    K and V elements one token adds to one layer's cache
    layer_projections     (recipe projection name, inputs, outputs) of each linear of a layer
    """

    layers: int
    layer_linear_weights: int
    layer_norm_weights: int
    layer_bias_weights: int
    final_norm_weights: int
    lm_head_weights: int
    embedding_weights: int
    layer_kv_per_token: int
    tied_embeddings: bool
    layer_projections: tuple[tuple[str, int, int], ...] = ()
    #: GPT-2's learned position table (positions x hidden), 0 for RoPE models
    position_weights: int = 0
    #: count the norms' gains and biases (GPT-2's LayerNorms, as its published count does)
    norms_counted: bool = False
    #: the layer projections the architecture gives a bias (Qwen2's q/k/v, GPT-2's all)
    biased_projections: frozenset[str] = frozenset()

    @property
    def weight_count(self) -> int:
        """Parameters as stored: every projection (with its biases), the LM head and, unless
        tied to it, the embedding table; norms left out (under 0.01 % of Llama-3.1-8B's
        8.03e9, its published count)."""
        layers = self.layers * (self.layer_linear_weights + self.layer_bias_weights)
        tables = 0 if self.tied_embeddings else self.embedding_weights
        norms = (self.layers * self.layer_norm_weights + self.final_norm_weights
                 if self.norms_counted else 0)
        return layers + self.lm_head_weights + tables + self.position_weights + norms

    def active_weight_count(self, model: TargetModel) -> int:
        """Parameters one token uses: `weight_count` with k routed experts per layer in
        place of all E (docs/moe-sd.md, "Parameters, total and active"); a dense model's
        every parameter."""
        moe = model.moe
        if moe is None:
            return self.weight_count
        idle = (moe.experts - moe.experts_per_token) * 3 * model.hidden * moe.expert_intermediate
        return self.weight_count - self.layers * idle

    def streamed_bytes(self, recipe: Recipe) -> float:
        """Bytes one read of every streamed weight moves (each decoder layer's projections
        and the LM head, no biases) at the recipe's width and sparse ratios: the analytic
        engine's weight stream."""
        layer = sum(recipe.weight_bytes(k * n, projection_linear(recipe, name).sparse_ratio)
                    for name, k, n in self.layer_projections)
        head = recipe.weight_bytes(self.lm_head_weights, recipe.lm_head.sparse_ratio)
        return self.layers * layer + head

    def sparse_share(self, recipe: Recipe) -> float:
        """The streamed weights' bytes under the recipe's sparse ratios over their dense
        bytes (exactly 1.0 for a dense recipe)."""
        names = [name for name, _, _ in self.layer_projections] + ["lm_head"]
        if all(projection_linear(recipe, name).sparse_ratio == 1.0 for name in names):
            return 1.0
        dense = (self.layers * sum(k * n for _, k, n in self.layer_projections)
                 + self.lm_head_weights)
        return self.streamed_bytes(recipe) / recipe.weight_bytes(dense)

    def stored_bytes(self, recipe: Recipe) -> float:
        """Off-chip bytes of the target's weights under the recipe (the one weight size):
        the streamed weights (`streamed_bytes`), each projection's bias where the recipe or
        the architecture (`biased_projections`: Qwen2's q/k/v, GPT-2's every one) has one,
        at `bias_bits`, and the embedding table unless tied to the LM head, at the recipe's
        width (looked up, never streamed). Norm gains are left out (`weight_count`)."""
        biased = self.biased_projections
        layer_bias = sum(n for name, _, n in self.layer_projections
                         if projection_linear(recipe, name).bias or name in biased)
        head_bias = self.lm_head_weights // self.hidden if recipe.lm_head.bias else 0
        tables = 0 if self.tied_embeddings else recipe.weight_bytes(self.embedding_weights)
        return (self.streamed_bytes(recipe)
                + (self.layers * layer_bias + head_bias) * recipe.bias_bits / 8 + tables
                + recipe.weight_bytes(self.position_weights))

    @property
    def hidden(self) -> int:
        """The model's hidden size (the LM head's input width)."""
        return self.layer_projections[0][1]

    def kv_elements(self, tokens: int) -> int:
        """K and V elements of `tokens` positions in every layer's cache."""
        return self.layers * self.layer_kv_per_token * tokens


class ParameterReader(Reader):
    """Counts a description's parameters by part (one method per node kind)."""

    what = "the parameter reader"

    def __init__(self) -> None:
        self.part = "layer"
        self.norms = {"head": 0, "layer": 0, "tail": 0}
        self.projections: list[tuple[str, int, int]] = []
        self.biases = 0
        self.biased: set[str] = set()
        self.kv_per_token = 0
        self.lm_head_weights = 0
        self.tied = False
        self.position_weights = 0

    def read(self, graph: ModelGraph) -> ParameterReader:
        """Visit the head, one layer and the tail; the reader, filled."""
        for part, nodes in graph.parts():
            self.part = part
            for node in nodes:
                self.visit(node)
        return self

    def norm(self, node: Norm) -> None:
        """Its gain (and bias): counted by part."""
        self.norms[self.part] += sum(w.elements for w in node.weights())

    def linear(self, node: LinearNode) -> None:
        """A projection (recipe name, d_in, d_out) and its bias."""
        self.projections.append((node.role, node.d_in, node.d_out))
        if node.bias is not None:
            self.biases += node.bias.elements
            self.biased.add(node.role)

    def rope(self, node: Rope) -> None:
        """No parameters (sin and cos are computed, not stored)."""

    def positions(self, node: Positions) -> None:
        """The learned position table."""
        self.position_weights += node.table.elements

    def attention(self, node: Attention) -> None:
        """K and V of one token in this layer's cache."""
        self.kv_per_token += 2 * node.kv_width

    def activation(self, node: Activation) -> None:
        """No parameters."""

    def residual(self, node: Residual) -> None:
        """No parameters."""

    def lm_head(self, node: LmHead) -> None:
        """The LM head, hidden x vocab; tied to the embedding or not."""
        self.lm_head_weights = node.weight.elements
        self.tied = node.tied

    def router(self, node: Router) -> None:
        """The router, a projection h -> E."""
        self.projections.append((node.weight.role, *node.weight.shape))

    def routed_experts(self, node: RoutedExperts) -> None:
        """All E experts' gate, up and down, each as one projection E experts wide."""
        for w in node.weights_per_expert:  # gate and up widen their outputs, down its inputs
            d_in, d_out = w.shape
            wide = (d_in * node.experts, d_out) if w.role.endswith(".down") else (
                d_in, d_out * node.experts)
            self.projections.append((w.role, *wide))

    def shared_experts(self, node: SharedExperts) -> None:
        """The shared expert's gate (h -> 1) where it has one, its gate, up and down."""
        for w in node.weights():
            self.projections.append((w.role, *w.shape))


@memoised("description.parameters", owner="fpgasim.dataflow.description.parameters",
          keys="target model", budget=64,
          why="read off the model's description (27 us for Llama-3.1-8B's), and `memory_bytes` "
          "asks on every result row and every x of a solve; a hit costs 2.3 us")
def target_arithmetic(model: TargetModel) -> TargetArithmetic:
    """The model's parameters, read off its description (`describe_target`)."""
    graph = describe_target(model)
    r = ParameterReader()
    r.check(graph, model)
    r.read(graph)
    return TargetArithmetic(
        layers=graph.layers,
        layer_linear_weights=sum(k * n for _, k, n in r.projections),
        layer_norm_weights=r.norms["layer"],
        layer_bias_weights=r.biases,
        final_norm_weights=r.norms["tail"],
        lm_head_weights=r.lm_head_weights,
        embedding_weights=graph.embedding.elements if graph.embedding is not None else 0,
        layer_kv_per_token=r.kv_per_token,
        tied_embeddings=r.tied,
        layer_projections=tuple(r.projections),
        position_weights=r.position_weights,
        norms_counted=graph.counts_norms,
        biased_projections=frozenset(r.biased),
    )
