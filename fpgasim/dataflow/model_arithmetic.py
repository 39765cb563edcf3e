"""The target model's arithmetic, derived once from its op graph (`passes.target_pass`):
weights by part and KV elements per token.

Its readers: `simulate.memory_bytes` (the off-chip bytes of a point), `fpgasim models`
(the parameter count beside the published one) and the heterogeneous GPU+FPGA model. The
`analytic` engine keeps the study's closed forms (docs/accounting.md): they are its
accounting, and the tests hold them against these counts.

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
from fpgasim.config.schema import TargetModel, model_source
from fpgasim.dataflow.passes import target_pass
from fpgasim.errors import ConfigError


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

    def stored_bytes(self, recipe: Recipe, model_bias: bool) -> float:
        """Off-chip bytes of the target's weights under the recipe (the one weight size):
        the streamed weights (`streamed_bytes`), each projection's bias where the recipe or
        the architecture (`model_bias`: Qwen2's q/k/v) has one, at `bias_bits`, and the
        embedding table unless tied to the LM head, at the recipe's width (looked up, never
        streamed). Norm gains are left out (`weight_count`)."""
        biased = {"q", "k", "v"} if model_bias else set()
        if self.norms_counted:  # GPT-2: every projection has its bias
            biased = {name for name, _, _ in self.layer_projections}
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


@memoised("model.arithmetic", owner="fpgasim.dataflow.model_arithmetic",
          keys="target model", budget=64,
          why="read off the model's one-token pass (0.40 ms for Llama-3.1-8B's), and "
          "`memory_bytes` asks on every result row and every x of a solve; a hit costs 2.3 us")
def target_arithmetic(model: TargetModel) -> TargetArithmetic:
    """The model's arithmetic, read off its one-token pass over a one-token cache (GPT-2's
    from its architecture: `gpt2_arithmetic`)."""
    if model.architecture == "gpt2":
        return gpt2_arithmetic(model)
    if model.moe is not None and model.moe.dense_layers:
        raise ConfigError(model_source(model), model.key_of("mlp_only_layers"),
                          list(model.moe.dense_layers),
                          "no dense layers (mlp_only_layers [] and decoder_sparse_step 1): "
                          "MoE models with dense layers between sparse ones are not lowered yet")
    ops = target_pass(model, 1, 1, None)
    layer, tail = ops.layer, ops.tail
    linear = sum(op.in_dim * op.out_dim for op in layer if op.kind == "linear")
    norms = sum(op.act_elems for op in layer if op.kind == "norm")  # one row: its width
    qkv = sum(op.out_dim for op in layer if op.kind == "linear" and op.name in ("q", "k", "v"))
    head = sum(op.in_dim * op.out_dim for op in tail if op.kind == "lm_head")
    projections = tuple((op.name.removeprefix("mlp."), op.in_dim, op.out_dim)
                        for op in layer if op.kind == "linear")
    return TargetArithmetic(
        layers=ops.layers,
        layer_linear_weights=linear,
        layer_norm_weights=norms,
        layer_bias_weights=qkv if model.attention_bias else 0,
        final_norm_weights=sum(op.act_elems for op in tail if op.kind == "norm"),
        lm_head_weights=head,
        embedding_weights=head,
        layer_kv_per_token=sum(op.kv_elems for op in layer),  # at one cached position
        tied_embeddings=model.tied_embeddings,
        layer_projections=projections,
    )


def gpt2_arithmetic(model: TargetModel) -> TargetArithmetic:
    """GPT-2's arithmetic from its architecture (docs/models.md, "GPT-2"): per layer q, k, v,
    o (h x h each, biased) and the non-gated MLP's fc (h x i) and proj (i x h), both biased;
    two LayerNorms with gain and bias; a final LayerNorm; learned positions; the LM head tied
    to the token table. The op graph (`passes.target_pass`) is Llama's, so it is not read."""
    h, i = model.hidden, model.intermediate
    projections = (("q", h, h), ("k", h, h), ("v", h, h), ("o", h, h), ("up", h, i),
                   ("down", i, h))
    return TargetArithmetic(
        layers=model.layers,
        layer_linear_weights=sum(k * n for _, k, n in projections),
        layer_norm_weights=2 * 2 * h,  # ln_1, ln_2: gain and bias each
        layer_bias_weights=sum(n for _, _, n in projections),
        final_norm_weights=2 * h,
        lm_head_weights=h * model.vocab,
        embedding_weights=h * model.vocab,
        layer_kv_per_token=2 * model.kv_heads * model.head_dim,
        tied_embeddings=True,
        layer_projections=projections,
        position_weights=model.window_tokens * h,
        norms_counted=True,
    )
