"""A drafter's blocks and their readers (docs/architecture.md, "A drafter's blocks and their
readers"): each block kind is named once, a reader's methods are what it reads, a reader
asked for a kind it lacks says so, and each reader's numbers against hand-written oracles
(the own KV cache, FlightLLM's padded keys, the GPU model's streamed weights)."""

from __future__ import annotations

import inspect
from dataclasses import replace

import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.drafters import draft_network, drafter_kv_tokens
from fpgasim.dataflow.drafters import network as net
from fpgasim.dataflow.lowerings import registry
from fpgasim.dataflow.lowerings.flightllm import drafts
from fpgasim.dataflow.network_ops import StudyOps
from fpgasim.dataflow.passes import PassSpec
from fpgasim.errors import InputError
from fpgasim.heterogeneous import costs

BLOCK_CLASSES = [cls for cls in vars(net).values()
                 if inspect.isclass(cls) and issubclass(cls, net._Block) and cls.kind]
EVERY_KIND = frozenset(net.BLOCK_KINDS)
M7 = load_model("llama2-chat-7b")


def test_each_block_class_has_its_own_kind_and_every_kind_is_listed() -> None:
    kinds = [cls.kind for cls in BLOCK_CLASSES]
    assert len(set(kinds)) == len(kinds) == len(net.BLOCK_KINDS)
    assert set(kinds) == EVERY_KIND


def test_a_readers_methods_are_what_it_reads() -> None:
    assert net.block_kinds(StudyOps) == EVERY_KIND - {"gated_fusion"}
    assert net.block_kinds(drafts.FlightLlmBlocks) == EVERY_KIND - {"gated_fusion"}
    assert drafts.BLOCKS == net.block_kinds(drafts.FlightLlmBlocks)
    assert registry.LOWERINGS["flightllm"].block_kinds == drafts.BLOCKS
    assert registry.LOWERINGS["dfx"].block_kinds == frozenset()
    # the readers inside a network's blocks (the LM head aside) read every such kind
    assert net.block_kinds(net._OwnCacheTokens) == EVERY_KIND - {"lm_head"}
    assert net.block_kinds(drafts._PaddedKeys) == EVERY_KIND - {"lm_head", "gated_fusion"}
    assert net.block_kinds(costs.GpuDraftParams) == {"fc", "gated_fusion", "decoder", "lm_head"}


def test_a_reader_asked_for_a_kind_it_lacks_names_the_kind() -> None:
    with pytest.raises(TypeError, match="reads no gated_fusion block"):
        net.read_block(drafts._PaddedKeys(1, 0, load_board("flightllm-vhk158")),
                       net.GatedFusion())
    dovetail = costs.dovetail_drafter(2)
    assert net.missing_blocks(drafts.BLOCKS, dovetail.blocks()) == ["GatedFusion"]
    assert net.missing_blocks(drafts.BLOCKS, costs.EAGLE2.blocks()) == []


def test_a_lowering_without_a_kind_refuses_the_drafter_holding_it(monkeypatch) -> None:
    board, eagle3 = load_board("flightllm-vhk158"), load_algorithm("eagle3")
    registry.check_drafter(board, eagle3)
    flight = registry.LOWERINGS["flightllm"]
    monkeypatch.setitem(registry.LOWERINGS, "flightllm",
                        replace(flight, block_kinds=flight.block_kinds - {"lm_head"}))
    with pytest.raises(InputError, match="without LmHead blocks"):
        registry.check_drafter(board, eagle3)


@pytest.mark.parametrize("context, verify_len", [(0, 1), (100, 4), (509, 3), (4000, 60)])
def test_own_kv_cache_tokens(context: int, verify_len: int) -> None:
    total = context + verify_len
    longspec = load_algorithm("longspec").drafter  # a 512-token window; the target's cache
    assert drafter_kv_tokens(longspec, context, verify_len) == min(512, total)
    for name in ("eagle3", "falcon"):  # one decoder layer over the whole sequence
        assert drafter_kv_tokens(load_algorithm(name).drafter, context, verify_len) == total
    mlp_only = net.DraftNetwork("x", 1, "hidden", 1, (), (net.Mlp("mlp"),), net.LmHead(1))
    assert mlp_only.own_cache_tokens(context, verify_len) == 0


@pytest.mark.parametrize("rows, context", [(1, 0), (4, 17), (16, 500), (30, 4000)])
def test_flightllms_padded_keys(rows: int, context: int) -> None:
    board = load_board("flightllm-vhk158")
    mult = board.padding.decode_multiple

    def up(tokens: int) -> int:
        return -(-tokens // mult) * mult

    longspec = load_algorithm("longspec").drafter
    network = draft_network(PassSpec("longspec", rows, context), longspec)
    keys = drafts.draft_keys(network, context, board)
    assert keys == drafts.DraftKeys(own=0, window=max(up(min(512, rows + context)), up(rows)),
                                    target=max(mult, up(context)))
    eagle3 = load_algorithm("eagle3")
    keys = drafts.draft_keys(draft_network(PassSpec("eagle3", rows, context), eagle3.drafter),
                             context, board)
    assert keys == drafts.DraftKeys(own=up(rows + context))


@pytest.mark.parametrize("blocks", [0, 1, 4, 8])
def test_the_gpu_models_drafter_weights(blocks: int) -> None:
    # the formula the Dovetail drafters were priced by before they became networks: the
    # fusion (fc 2h^2, DGF 4h^2), 1 + M decoder layers of the target's shape, the LM head
    h, layer = M7.hidden, costs.layer_params(M7)
    head = h * M7.vocab
    dovetail = costs.dovetail_drafter(blocks, width=7)
    assert costs.drafter_streamed_params(M7, dovetail) == 4 * h * h + (1 + blocks) * layer + head
    assert dovetail.rows == 7 and dovetail.kind == "dovetail"
    eagle2 = costs.drafter_for("EAGLE-2", blocks, 7)
    assert costs.drafter_streamed_params(M7, eagle2) == 2 * h * h + layer + head
    work = costs.draft_pass_work(M7, dovetail, 10, 512, 2.0)
    q_width = M7.heads * M7.head_dim
    streamed = 4 * h * h + (1 + blocks) * layer + head
    assert work.flops == 2.0 * streamed * 10 + (1 + blocks) * 4.0 * 10 * 522 * q_width
    kv = (1 + blocks) * 2.0 * costs.kv_width(M7) * 522 * 2.0
    assert work.bytes == streamed * 2.0 + 10 * h * 2.0 + kv
