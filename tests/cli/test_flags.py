"""Errors below the CLI name fields; the CLI prints them with the flags the user typed."""

from __future__ import annotations

import pickle

from fpgasim.cli import app
from fpgasim.cli.flags import field_flags
from fpgasim.config import load_board, load_model
from fpgasim.errors import ConfigError, InputError
from fpgasim.simulate import Point
from tests.cli_helpers import run_cli


def test_the_table_is_read_from_the_commands() -> None:
    flags = field_flags(app)
    assert flags["verify_len"] == "--verify-len" and flags["aat_dir"] == "--aat-dir"
    assert flags["contexts"] == "--contexts" and flags["context"] == "--context"
    assert "pass" not in flags  # a field no command has stays a field


def test_fields_and_references_are_rendered_as_flags() -> None:
    flags = field_flags(app)
    err = InputError("depth/top_k", (2, 0), "needs `aat_dir`; `fitted` is no field")
    assert str(err) == "argument depth/top_k = (2, 0): needs `aat_dir`; `fitted` is no field"
    assert err.field == "depth/top_k"
    assert err.render(flags) == (
        "argument --depth/--top-k = (2, 0): needs --aat-dir; `fitted` is no field"
    )
    # the attributes survive a process pool, so the parent renders the same line
    assert pickle.loads(pickle.dumps(err)).render(flags) == err.render(flags)
    named = ConfigError("", "name", "nope", "unknown model", argument="model")
    assert str(named) == "model: name = 'nope': unknown model"
    assert named.render(flags) == "--model: name = 'nope': unknown model"
    filed = ConfigError("boards/x.yaml", "clock_mhz", 0, "> 0")
    assert filed.render(flags) == str(filed) == "boards/x.yaml: clock_mhz = 0: > 0"


def test_a_library_error_names_the_field_and_the_cli_the_flag(capsys, tmp_path) -> None:
    try:
        Point(load_board("u280"), load_model("llama-3.1-8b"), context=0, verify_len=1).check()
    except InputError as exc:
        assert exc.field == "context" and "--" not in str(exc)
    else:
        raise AssertionError("context 0 accepted")
    res = run_cli(capsys, "sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128",
                  "--verify-lens", "2-3", "-a", "longspec", "--accepted", "4", "--no-cache",
                  "--out", str(tmp_path / "o.csv"))
    assert res.code == 2 and "argument --accepted = 4" in res.err, res.err
