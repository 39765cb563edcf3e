"""The one-line messages of issue 30: a misspelt key named by every command as `validate`
names it, a file of the wrong kind recognised, --verify-len against --tree, and the one
tree notation (spaces) in input and output alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpgasim.config import load_board, load_model, resolve
from fpgasim.config.board_loader import load_fpga
from fpgasim.errors import ConfigError, InputError
from fpgasim.tree.shapes import parse_shape
from tests.cli_helpers import run_cli

MODEL_FILE = resolve("model", "llama-3.1-8b")
BOARD_FILE = resolve("board", "u280")
FPGA_FILE = resolve("fpga", "u280")
ALGORITHM_FILE = resolve("algorithm", "longspec")


@pytest.fixture()
def misspelt(tmp_path: Path) -> Path:
    """U280's data sheet with its bandwidth key misspelt."""
    path = tmp_path / "typo.yaml"
    text = FPGA_FILE.read_text()
    assert "  bandwidth_gb_s:" in text
    path.write_text(text.replace("  bandwidth_gb_s:", "  bandwith_gb_s:"))
    return path


def one_line(res) -> str:
    assert res.code == 2, res.out[-300:]
    lines = res.err.splitlines()
    assert len(lines) == 1 and "Traceback" not in res.err, res.err
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", "-m", "llama-3.1-8b", "-L", "512"],
        ["solve", "-m", "llama-3.1-8b", "-a", "longspec", "--contexts", "512"],
        ["generate", "-m", "llama-3.1-8b", "-P", "16", "-D", "4"],
        ["sweep", "-m", "llama-3.1-8b", "--contexts", "512", "--verify-lens", "1", "--out",
         "never.csv"],
    ],
    ids=lambda a: a[0],
)
def test_every_command_names_the_misspelt_key(capsys, misspelt: Path, args) -> None:
    """Before: 'memory.bandwidth_gb_s = None: required field is missing' under every
    command but validate, which named the key typed."""
    line = one_line(run_cli(capsys, args[0], "--fpga", str(misspelt), "--design", "study",
                            *args[1:]))
    assert f"{misspelt}: memory.bandwith_gb_s = 460: unknown field" in line
    assert "did you mean 'bandwidth_gb_s' (required, missing)?" in line


def test_a_misspelt_override_is_named_by_the_board_file(capsys, tmp_path: Path) -> None:
    """A board file's override of a field that does not exist: the file and the path, with
    the fields there are (not as if it came from --vary)."""
    path = tmp_path / "typo-board.yaml"
    path.write_text(BOARD_FILE.read_text() + "overrides:\n  fpga.memory.bandwith_gb_s: 460\n")
    line = one_line(run_cli(capsys, "simulate", "-b", str(path), "-m", "llama-3.1-8b", "-L",
                            "512"))
    assert line.startswith(f"fpgasim: error: {path}: fpga.memory.bandwith_gb_s = 460: "), line
    assert "a field of fpga: " in line and " bandwidth_gb_s," in line and "--vary" not in line


def test_validate_names_it_the_same_way(capsys, misspelt: Path) -> None:
    res = run_cli(capsys, "validate", str(misspelt))
    assert res.code == 2
    assert ("memory.bandwith_gb_s = 460: unknown field (check the spelling; unknown fields "
            "are not allowed); did you mean 'bandwidth_gb_s' (required, missing)?") in res.err
    with pytest.raises(ConfigError, match="bandwith_gb_s = 460: unknown field"):
        load_fpga(str(misspelt))


def test_an_unknown_key_without_a_near_missing_field_is_named_alone(tmp_path: Path) -> None:
    path = tmp_path / "extra.yaml"
    path.write_text(BOARD_FILE.read_text() + "colour: blue\n")
    with pytest.raises(ConfigError) as caught:
        load_board(str(path))
    assert "colour = 'blue': unknown field" in str(caught.value)
    assert "did you mean" not in str(caught.value)


@pytest.mark.parametrize(
    ("flag", "path", "other", "own"),
    [
        ("--board", MODEL_FILE, "model", "board"),
        ("--model", BOARD_FILE, "board", "model"),
        ("--algorithm", BOARD_FILE, "board", "algorithm"),
        ("--board", ALGORITHM_FILE, "algorithm", "board"),
    ],
)
def test_a_file_of_another_kind_is_recognised(capsys, flag, path, other, own) -> None:
    """Before: a model file given as a board said 'name = None: required field is missing'."""
    args = {"--board": "u280", "--model": "llama-3.1-8b", "--algorithm": "longspec"}
    args[flag] = str(path)
    line = one_line(run_cli(capsys, "simulate", "-L", "512", *[x for kv in args.items()
                                                                for x in kv]))
    def an(kind: str) -> str:
        return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"

    assert line.startswith(f"fpgasim: error: {flag}: {path}: (fields)")
    assert f"this is {an(other)} file, not {an(own)} file: give it as --{other}" in line


def test_a_broken_file_of_the_right_kind_keeps_its_own_error(tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(MODEL_FILE.read_text().replace("layers: 32", "layers: -1"))
    with pytest.raises(ConfigError, match="layers = -1"):
        load_model(str(path))


def test_verify_len_against_the_tree_says_what_x_must_be(capsys) -> None:
    """Before: 'argument --verify-len = 10: 21: --tree (4 16) has 20 draft nodes + the
    root; ...'."""
    line = one_line(run_cli(capsys, "simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L",
                            "512", "-a", "longspec", "--tree", "4 16", "--verify-len", "10"))
    assert line == (
        "fpgasim: error: argument --verify-len = 10: must be 21 = the 20 draft nodes of "
        "--tree '4 16' + the root; for x = 10 give a --tree of 9 draft nodes, or leave "
        "--verify-len out"
    )


@pytest.mark.parametrize("text", ["4,16,16", "4, 16", "4;16", "4 x"])
def test_a_tree_is_written_with_spaces_only(capsys, tmp_path: Path, text: str) -> None:
    """Before: '4,16,16' was accepted while the message asked for spaces."""
    with pytest.raises(InputError, match="separated by spaces"):
        parse_shape(text)
    line = one_line(run_cli(capsys, "simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L",
                            "512", "-a", "longspec", "--tree", text, "--engine", "analytic"))
    assert line == (f"fpgasim: error: argument --tree = {text!r}: draft nodes per level "
                    "below the root, whole numbers separated by spaces, e.g. '4 16 16'")
    assert parse_shape("4 16 16") == (4, 16, 16) and parse_shape(" 1  0 ") == (1, 0)
    traces = tmp_path / "traces.csv"
    traces.write_text("ranks\n0 0\n1\n")
    res = run_cli(capsys, "tree", "search", "--traces", str(traces), "--max-tree", text,
                  "--out", str(tmp_path / "never.csv"))
    assert one_line(res).startswith(f"fpgasim: error: argument --max-tree = {text!r}: draft")
