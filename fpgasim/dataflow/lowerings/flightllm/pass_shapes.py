"""What FlightLLM's lowering checks and aligns before it builds a pass: the model's sizes in
whole blocks, the board's rates, a pass's phase, rows and keys after the board's padding,
the prefill chunk and the prefill masks (docs/flightllm-model.md, docs/models.md)."""

from __future__ import annotations

import math

from fpgasim.config.board import Board
from fpgasim.config.schema import TargetModel, model_source, refuse_architecture
from fpgasim.dataflow.lowerings.flightllm.drafts import decode_keys
from fpgasim.dataflow.lowerings.flightllm.flightllm_emitter import Rates
from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams
from fpgasim.dataflow.lowerings.flightllm.masks import MaskSet, mask_set
from fpgasim.dataflow.lowerings.flightllm.masks import load as load_masks
from fpgasim.dataflow.passes import PassSpec
from fpgasim.errors import ConfigError, InputError


def _check_model(model: TargetModel, block: int) -> None:
    """The model's sizes in whole blocks; an error names the model's file and the key it
    writes (`hidden_size` in a Hugging Face config); a GPT-2 model is refused (FlightLLM's
    graph is Llama's)."""
    refuse_architecture(model, "FlightLLM's lowering", ("llama",))
    source = model_source(model)
    for name in ("hidden", "intermediate", "head_dim", "vocab"):
        value = getattr(model, name)
        if value % block:
            raise ConfigError(source, model.key_of(name), value,
                              f"a multiple of {block} (FlightLLM's blocks)")


def checked_rates(board: Board, model: TargetModel) -> Rates:
    """The board's rates, after checking that the compiler can tile the model."""
    block = board.compiler.block
    _check_model(model, block)
    if board.padding.prefill_multiple % board.fit.mm_rows:
        raise ConfigError(f"board {board.name}", "design.padding.prefill_multiple",
                          board.padding.prefill_multiple,
                          f"a multiple of the MM array's {board.fit.mm_rows} rows")
    # not cached: looking a board up (hashing it) took 35 µs, building its rates 32 µs
    # (docs/scaling.md, "Hit rates, measured")
    return Rates.of(board)


def prefill_chunk_tokens(board: Board) -> int:
    """The longest prefill run as one pass by FlightLLM's published rules (§4.5): the keys
    one attention tile holds (`GraphParams.key_tile`); a longer prompt runs in chunks of it,
    each a causal pass over the chunk's rows (simulate.prefill_specs)."""
    return GraphParams.of(board).key_tile


def pass_shape(spec: PassSpec, board: Board) -> tuple[str, int, int]:
    """(phase, rows, context) of a pass after the board's alignment: decode T, prefill L.

    Decode with T tokens is PassSpec(tokens=1, context=T-1); T is padded to
    padding.decode_multiple. x > 1 new tokens (a verify pass, a prefill chunk) take MV row
    groups or MM tiles over T = context + x keys (an extension: FlightLLM's model decodes one
    token). Prefill over P tokens is PassSpec(tokens=P, context=0, phase="prefill"); P is
    padded to padding.prefill_multiple and at most `prefill_chunk_tokens`.
    """
    if spec.kind != "target":
        raise InputError("pass", spec.kind, "FlightLLM's lowering runs the target model only")
    if spec.phase == "prefill":
        if spec.batch > 1:
            raise InputError("batch", spec.batch, "1 for a prefill pass (a batch's prompts are "
                             "prefilled one after another: simulate.prefill_specs)")
        if spec.context:
            raise InputError("context", spec.context, "0 for a prefill pass")
        mult = board.padding.prefill_multiple
        rows = math.ceil(spec.tokens / mult) * mult
        limit = prefill_chunk_tokens(board)
        if rows > limit:
            raise InputError("prompt_len", spec.tokens,
                             f"at most {limit} tokens in one prefill pass (longer prompts run "
                             "in chunks: simulate.prefill_specs)")
        return "prefill", rows, rows
    return "decode", spec.tokens, decode_keys(spec.tokens, spec.context, board)


def fixed_shape(spec: PassSpec) -> tuple:
    """What `lower_fixed`'s parts depend on: the pass's kind and phase and the rows its
    projections see (tokens x batch), not its context, tree or how its rows split into
    requests (the parts hold no attention)."""
    return (spec.kind, spec.phase, spec.tokens * spec.batch)


def prefill_masks(board: Board, model: TargetModel, tokens: int) -> MaskSet:
    """The recipe's block-sparse prefill masks where its table fits the model and covers the
    prompt (FlightLLM's are LLaMA2-7B's: 32 layers of 32 heads, 2,048 tokens), else the
    dense causal mask (`prefill_mask_used` names which: docs/models.md, "Recipes")."""
    block = board.compiler.mask_block
    return mask_set(prefill_mask_used(board, model, tokens), model.heads, tokens // block, block,
                    board.fit.mm_rows // block)


def prefill_mask_used(board: Board, model: TargetModel, tokens: int) -> str:
    """The name of the prefill mask a prompt of `tokens` (padded) tokens runs with."""
    name = board.recipe.prefill_mask
    if name == "causal":
        return name
    table = load_masks(name)
    block = board.compiler.mask_block
    fits = (table.block_tokens == block and table.heads == model.heads
            and len(table.layers) in (1, model.layers)
            and tokens // block <= table.layers[0].rows()
            and board.fit.mm_rows == 2 * block)  # its V sums are per two mask rows
    return name if fits else "causal"
