"""Property tests of the open-ended hostile classes: comma lists, numeric fields, output paths.

Plus the output guarantees: all or nothing across a command's files, the umask's file mode,
Ctrl-C within 2 s with exit 130 and the cache left consistent.
"""

from __future__ import annotations

import math
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fpgasim.cli.options import parse_float_list, parse_int_list, parse_name_list
from fpgasim.config import load_board
from fpgasim.config.loader import validate_mapping
from fpgasim.engine import get_engine
from fpgasim.errors import ConfigError, FpgasimError, InputError
from fpgasim.fileio import (
    atomic_write_bytes,
    check_output_path,
    output_transaction,
    write_frame,
)
from fpgasim.lists import split_items
from fpgasim.simulate import Point, simulate_point
from fpgasim.sweep import SweepCache
from tests.cli_helpers import default_sigint, run_cli

REPO = Path(__file__).resolve().parents[2]
PROPS = settings(max_examples=120, derandomize=True, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture,
                                        HealthCheck.too_slow])

# --------------------------------------------------------------------------- comma lists

ITEM = st.integers(1, 10_000).map(str)
SPACE = st.sampled_from(["", " ", "  "])


@PROPS
@given(items=st.lists(st.one_of(ITEM, st.just("")), min_size=1, max_size=8), pad=SPACE)
def test_int_lists_refuse_every_empty_item(items: list[str], pad: str) -> None:
    text = ",".join(pad + i + pad for i in items)
    if any(i == "" for i in items):
        with pytest.raises(InputError, match="--contexts"):
            parse_int_list(text, "--contexts")
    else:
        assert parse_int_list(text, "--contexts") == sorted({int(i) for i in items})


@PROPS
@given(items=st.lists(st.one_of(st.from_regex(r"[a-z0-9._-]{1,12}", fullmatch=True),
                                st.just(""), st.just(" ")), min_size=1, max_size=6))
def test_name_and_float_lists_share_the_splitter(items: list[str]) -> None:
    text = ",".join(items)
    empty = any(not i.strip() for i in items)
    for parse in (lambda t: parse_name_list(t, "--board"), lambda t: split_items(t, "--board")):
        if empty:
            with pytest.raises(InputError, match="--board"):
                parse(text)
        else:
            assert parse(text) == [i.strip() for i in items]


@PROPS
@given(values=st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                 st.just(math.nan)), min_size=1, max_size=5))
def test_float_lists_hold_only_finite_in_range(values: list[float]) -> None:
    text = ",".join(repr(v) for v in values)
    try:
        out = parse_float_list(text, "--bandwidths", 1.0, 1e5, "GB/s")
    except InputError as exc:
        assert "--bandwidths" in str(exc)
        assert any(not (1.0 <= v <= 1e5) for v in values)
    else:
        assert all(math.isfinite(v) and 1.0 <= v <= 1e5 for v in out)


# --------------------------------------------------------------------------- numeric fields

#: numeric fields of the data sheet and the design, as a board file's overrides (or
#: --vary) set them: a value refused is one line, one accepted gives finite results
NUMERIC_FIELDS = [
    "fpga.dsps", "fpga.slrs", "fpga.bram36", "fpga.uram", "fpga.memory.capacity_gib",
    "fpga.memory.bandwidth_gb_s", "fpga.memory.channels", "design.clock_mhz",
    "design.mm_rows", "design.mm_cols", "design.mv_lanes", "design.mv_macs_per_lane",
    "design.memory.ports", "design.memory.same_channel_efficiency",
    "design.memory.cross_channel_efficiency", "design.memory.zero_fill_bytes_per_cycle",
    "design.sfu.elements_per_cycle", "design.sfu.softmax_passes", "design.buffers.a",
    "design.padding.decode_multiple", "design.compiler.mask_block",
    "design.recipe.weight_bits", "design.recipe.q.sparse_ratio",
]
HOSTILE_NUMBERS = st.one_of(
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([5e-324, 1e-300, 1e300, -1.0, 0, 0.0, 1e-9, 2**63, "1", None]),
    st.integers(-(2**40), 2**40),
)


@pytest.mark.slow
@PROPS
@given(field=st.sampled_from(NUMERIC_FIELDS), value=HOSTILE_NUMBERS)
def test_numeric_fields_refuse_or_give_finite_results(field: str, value: object) -> None:
    try:
        board = load_board("u280", [(field, value)])
    except ConfigError as exc:
        text = str(exc)
        assert "\n" not in text and " = " in text, text
        # the path as given (a change is named as the user wrote it), a cross-field rule of
        # the design (its message names the fields), or the resource the fit found short
        assert exc.field in (field, "(top level)", "dsps", "bram36/uram"), text
        return
    assert not isinstance(value, bool), f"{field} accepted a boolean"
    row = simulate_point(get_engine("analytic"),
                         Point(board, MODEL, 1024, 8))  # an error here must be one line
    assert all(math.isfinite(v) for v in row.values() if isinstance(v, float)), row


MODEL_BASE = yaml.safe_load((REPO / "workloads/models/llama-3.1-8b.yaml").read_text())
MODEL_FIELDS = ["hidden", "intermediate", "layers", "heads", "kv_heads", "head_dim", "vocab",
                "params_b", "window_tokens"]


@PROPS
@given(field=st.sampled_from(MODEL_FIELDS), value=HOSTILE_NUMBERS)
def test_model_fields_refuse_or_give_finite_results(field: str, value: object) -> None:
    from fpgasim.config.schema import TargetModel

    data = {**MODEL_BASE, field: value}
    try:
        model = validate_mapping(TargetModel, data, "m.yaml")
    except ConfigError as exc:
        assert str(exc).startswith("m.yaml: ")
        return
    assert not isinstance(value, bool), f"{field} accepted a boolean"
    row = simulate_point(get_engine("analytic"), Point(U280, model, 1024, 8))
    assert all(math.isfinite(v) for v in row.values() if isinstance(v, float)), row


def _model():
    from fpgasim.config import load_model

    return load_model("llama-3.1-8b")


MODEL = _model()
U280 = load_board("u280")


# --------------------------------------------------------------------------- output paths

SEGMENT = st.sampled_from(["plain", "dir", "new", "new2", "n" * 256, "x.csv"])


@PROPS
@given(segments=st.lists(SEGMENT, min_size=1, max_size=4))
def test_output_paths_are_checked_then_written_whole(tmp_path: Path, segments: list[str]) -> None:
    import tempfile

    root = Path(tempfile.mkdtemp(dir=tmp_path))
    (root / "plain").write_text("file")
    (root / "dir").mkdir()
    target = root.joinpath(*segments)
    before = sorted(str(p) for p in root.rglob("*"))
    try:
        check_output_path(target, "--out")
    except InputError as exc:
        assert str(exc).startswith("argument --out = ")
        assert sorted(str(p) for p in root.rglob("*")) == before  # the check writes nothing
        if any(len(s) > 255 for s in segments):
            return
        under_file = any(root.joinpath(*segments[:i]).is_file() for i in range(1, len(segments)))
        assert under_file or target.is_dir(), exc
        return
    assert all(len(s) <= 255 for s in segments)
    atomic_write_bytes(target, b"data")
    assert target.read_bytes() == b"data"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~current_umask()


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_transaction_is_all_or_nothing(tmp_path: Path) -> None:
    import pandas as pd

    with pytest.raises(RuntimeError), output_transaction():
        write_frame(pd.DataFrame({"a": [1]}), tmp_path / "one.csv")
        atomic_write_bytes(tmp_path / "sub" / "two.md", b"two")
        raise RuntimeError("the second experiment failed")
    assert list(tmp_path.iterdir()) == []
    with output_transaction():
        write_frame(pd.DataFrame({"a": [1]}), tmp_path / "one.csv")
        atomic_write_bytes(tmp_path / "sub" / "two.md", b"two")
        assert list(tmp_path.iterdir()) == []  # staged, not written yet
    assert (tmp_path / "one.csv").exists() and (tmp_path / "sub" / "two.md").read_bytes() == b"two"
    with pytest.raises(InputError, match="finite"), output_transaction():
        write_frame(pd.DataFrame({"a": [math.inf]}), tmp_path / "inf.csv")
    assert not (tmp_path / "inf.csv").exists()


@pytest.mark.slow
@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_files_follow_the_umask(tmp_path: Path, capsys, mask: int) -> None:
    old = os.umask(mask)
    try:
        out = tmp_path / "s.csv"
        res = run_cli(capsys, "sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128",
                      "--verify-lens", "1", "--no-cache", "--out", str(out))
        trace = tmp_path / "t.json"
        small = tmp_path / "small.yaml"  # two layers of LLaMA2-7B: a short trace
        small.write_text("id: small\nhidden: 4096\nintermediate: 11008\nlayers: 2\n"
                         "heads: 32\nkv_heads: 32\nhead_dim: 128\nvocab: 32000\n"
                         "window_tokens: 4096\n")
        res2 = run_cli(capsys, "simulate", "-b", "v80", "-m", str(small), "-L", "128",
                       "-e", "event", "--trace", str(trace))
    finally:
        os.umask(old)
    assert res.code == 0 and res2.code == 0, res.err + res2.err
    for path in (out, trace):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask


@pytest.mark.slow
def test_reproduce_writes_every_experiment_or_none(tmp_path: Path, capsys, monkeypatch) -> None:
    """`reproduce A B` where B fails after A finished: A's files are not left behind."""
    import fpgasim.reproduce.pool as cmd  # the library runs the experiments

    real = cmd.run_experiment

    def second_fails(exp, **kw):
        if exp.name == "table2":
            raise ConfigError("aat/bad.csv", "line 2, column aat", "x", "a number")
        return real(exp, **kw)

    monkeypatch.setattr(cmd, "run_experiment", second_fails)
    out = tmp_path / "results"
    res = run_cli(capsys, "reproduce", "dovetail1", "table2", "--out", str(out))
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert not out.exists()
    monkeypatch.setattr(cmd, "run_experiment", real)
    res = run_cli(capsys, "reproduce", "dovetail1", "--out", str(out))
    assert res.code == 0 and sorted(p.name for p in out.iterdir()) == [
        "dovetail1.csv", "dovetail1.md"]


#: a small explore: the V80 with one MM array and bandwidth, LongSpec at x of 1, 2 and 4
EXPLORE = ["--board", "v80", "--vary", "design.mm_cols=48", "--vary",
           "fpga.memory.bandwidth_gb_s=460", "-m", "llama-3.1-8b", "-a", "longspec",
           "--contexts", "1024", "--verify-lens", "2,4", "-e", "fast", "--no-cache",
           "--executor", "inprocess"]


@pytest.mark.slow
def test_explore_plot_failure_leaves_no_csv(tmp_path: Path, capsys, monkeypatch) -> None:
    import fpgasim.cli.explore_cmd as cmd

    def broken_plot(result, path):
        raise FpgasimError("cannot draw")

    monkeypatch.setattr(cmd, "plot_explore", broken_plot)
    out = tmp_path / "new" / "e.csv"
    res = run_cli(capsys, "explore", *EXPLORE, "--out", str(out))
    assert res.code == 2 and "cannot draw" in res.err and not (tmp_path / "new").exists()


# --------------------------------------------------------------------------- Ctrl-C


@pytest.mark.slow
def test_ctrl_c_stops_within_2_s_and_keeps_the_cache_consistent(tmp_path: Path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "s.csv"
    env = {**os.environ, "FPGASIM_TEST_SLOWDOWN_S": "0.05"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "fpgasim", "sweep", "-b", "u280,v80", "-m", "llama-3.1-8b",
         "--contexts", "128,256,512", "--verify-lens", "1-40", "--workers", "2",
         "--chunk-size", "4", "--cache-dir", str(cache), "--out", str(out)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=default_sigint,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until some chunks are stored
            if SweepCache(cache).path.exists():
                with SweepCache(cache) as c:
                    if len(c) >= 8:
                        break
            time.sleep(0.1)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        stopped = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and err.strip().splitlines() == ["fpgasim: interrupted"], err
    print(f"Ctrl-C: stopped after {stopped:.2f} s")
    assert stopped < 2.0, stopped
    assert not out.exists() and list(tmp_path.glob(".s.csv*")) == []
    path = SweepCache(cache).path
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with SweepCache(cache) as c:  # every stored row passes its checksum
        keys = [k for (k,) in sqlite3.connect(path).execute("SELECT key FROM points")]
        assert len(c.get_many(keys)) == len(keys) and c.refused == 0


@pytest.mark.slow
def test_explore_plot_into_a_missing_folder_writes_both(tmp_path: Path, capsys) -> None:
    """The missing folder is created when the files are written (not refused, not half)."""
    out, png = tmp_path / "a" / "e.csv", tmp_path / "b" / "c" / "e.png"
    res = run_cli(capsys, "explore", *EXPLORE, "--out", str(out), "--plot", str(png))
    assert res.code == 0, res.err
    assert out.stat().st_size > 0 and png.read_bytes()[:4] == b"\x89PNG"
    assert "fits_memory" in out.read_text().splitlines()[0]
