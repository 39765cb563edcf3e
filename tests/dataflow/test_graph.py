"""The graph IR: dependencies come from tensor names; malformed graphs name op and tensor."""

from __future__ import annotations

import pytest

from fpgasim.dataflow.graph import GraphBuilder, GraphError


def _mlp() -> GraphBuilder:
    g = GraphBuilder("toy")
    g.input("x", (1, 8), "int8", "hbm")
    g.input("w_up", (8, 16), "int8", "weights")
    g.input("w_down", (16, 8), "int8", "weights")
    g.tensor("h", (1, 16), "int8", "on_chip")
    g.tensor("y", (1, 8), "int8", "hbm")
    g.op("up", "linear", ["x", "w_up"], ["h"])
    g.op("down", "linear", ["h", "w_down"], ["y"], sparse_ratio=0.7)
    return g


def test_dependencies_come_from_tensors() -> None:
    graph = _mlp().build()
    assert graph.producers(0) == ()
    assert graph.producers(1) == (0,)
    assert graph.producer("h") == 0 and graph.producer("x") is None
    assert graph.consumers("h") == (1,)
    assert graph.node("down").attr("sparse_ratio") == 0.7
    assert graph.tensors["w_up"].nbytes == 128


def test_unproduced_tensor_names_op_and_tensor() -> None:
    g = _mlp()
    g.tensor("ghost", (1, 8), "int8", "on_chip")
    g.tensor("z", (1, 8), "int8", "on_chip")
    g.op("reader", "norm", ["ghost"], ["z"])
    with pytest.raises(GraphError, match="op 'reader', tensor 'ghost'"):
        g.build()


def test_double_write_and_undefined_tensor() -> None:
    g = _mlp()
    g.op("again", "linear", ["x", "w_up"], ["h"])
    with pytest.raises(GraphError, match="already written by op 'up'"):
        g.build()
    g = _mlp()
    g.op("bad", "linear", ["nope"], ["y2"])
    with pytest.raises(GraphError, match="not defined"):
        g.build()


def test_int4_bytes_round_up_and_dump_lists_every_op() -> None:
    g = _mlp()
    g.input("w4", (3,), "int4", "weights")
    graph = g.build()
    assert graph.tensors["w4"].nbytes == 2
    text = graph.dump()
    assert "graph toy: 2 ops" in text and "down" in text and "sparse_ratio=0.7" in text
