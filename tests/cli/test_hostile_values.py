"""Hostile battery, round 4: every value a schema accepts is one the arithmetic can take, and
limits are checked before the work (issue 43, Deliver 2 and 5).

Each case runs the real CLI in this process and asserts exit 2 and one error line naming the
key as the user wrote it and the file or flag it came from: never an internal error (exit 1)
from a division, a conversion or an allocation, never an internal field's name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
U280 = yaml.safe_load((REPO / "fpgas/u280.yaml").read_text())
ENERGY_KEYS = ("static_w", "mac_pj", "sram_pj_per_bit", "sfu_pj", "clock_pj_per_dsp_cycle")
SOLVE_ENERGY = ["-m", "llama-3.1-8b", "-a", "longspec", "--contexts", "1024", "-e", "analytic",
                "--objective", "energy"]


def fpga_file(folder: Path, power: dict, memory: dict | None = None) -> Path:
    """fpgas/u280.yaml with `power` (and `memory`) fields replaced."""
    data = json.loads(json.dumps(U280))
    data["power"] = {**data["power"], **power}
    data["memory"] = {**data["memory"], **(memory or {})}
    path = folder / "part.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def one_line(res) -> str:
    """The one error line of a refused run."""
    assert res.code == 2, (res.code, res.err)
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fpgasim: error: "), res.err
    assert "internal error" not in res.err
    return lines[0]


# --------------------------------------------------------------------------- energy


@pytest.mark.parametrize("command", ["simulate", "solve", "solve-json", "explore"])
def test_every_energy_constant_zero_is_refused_by_the_file(tmp_path: Path, capsys,
                                                           command: str) -> None:
    """Every constant 0: a pass cost 0 J and solve --objective energy divided by it
    (ZeroDivisionError), simulate reported `tokens_per_j = inf`."""
    path = fpga_file(tmp_path, dict.fromkeys(ENERGY_KEYS, 0), {"pj_per_bit": 0})
    pair = ["--fpga", str(path), "--design", "study"]
    args = {
        "simulate": ["simulate", *pair, "-m", "llama-3.1-8b", "-L", "1024", "-e", "analytic"],
        "solve": ["solve", *pair, *SOLVE_ENERGY],
        "solve-json": ["solve", *pair, *SOLVE_ENERGY, "--format", "json"],
        "explore": ["explore", "--fpga", str(path), "--design", "study", "--vary",
                    "design.clock_mhz=200,225", "-m", "llama-3.1-8b", "-a", "longspec",
                    "--contexts", "1024", "-e", "analytic", "--no-cache",
                    "--out", str(tmp_path / "e.csv")],
    }[command]
    line = one_line(run_cli(capsys, *args))
    assert str(path) in line or "study@" in line, line
    assert "static_w" in line and "0 J" in line, line
    assert not (tmp_path / "e.csv").exists()


def test_every_energy_constant_zero_through_vary(tmp_path: Path, capsys) -> None:
    varies = [a for k in ENERGY_KEYS for a in ("--vary", f"fpga.power.{k}=0")]
    line = one_line(run_cli(capsys, "explore", "--fpga", "u280", "--design", "study", *varies,
                            "--vary", "fpga.memory.pj_per_bit=0", "-m", "llama-3.1-8b", "-a",
                            "longspec", "--contexts", "1024", "-e", "analytic", "--no-cache",
                            "--out", str(tmp_path / "e.csv")))
    assert "static_w" in line, line


@pytest.mark.parametrize(("field", "value"), [
    ("regulator_efficiency", 5e-324),  # dynamic energy / 5e-324 = inf, then 0 / 0
    ("regulator_efficiency", 1e-300),
    ("regulator_efficiency", 0.0),
    ("static_w", 5e-324),  # every pass's energy underflowed to 0 J
    ("mac_pj", 5e-324),
    ("sram_pj_per_bit", 1e-300),
    ("sfu_pj", 5e-324),
    ("clock_pj_per_dsp_cycle", 5e-324),
])
def test_denormal_power_constants_are_refused(tmp_path: Path, capsys, field: str,
                                              value: float) -> None:
    others = {k: 0 for k in ENERGY_KEYS if k != field and field != "regulator_efficiency"}
    path = fpga_file(tmp_path, {**others, field: value}, {"pj_per_bit": 0})
    line = one_line(run_cli(capsys, "solve", "--fpga", str(path), "--design", "study",
                            *SOLVE_ENERGY))
    assert f"{path}: power.{field} = " in line, line


def test_denormal_memory_energy_is_refused(tmp_path: Path, capsys) -> None:
    path = fpga_file(tmp_path, dict.fromkeys(ENERGY_KEYS, 0), {"pj_per_bit": 5e-324})
    line = one_line(run_cli(capsys, "simulate", "--fpga", str(path), "--design", "study",
                            "-m", "llama-3.1-8b", "-L", "1024", "-e", "analytic"))
    assert f"{path}: memory.pj_per_bit = 5e-324" in line, line


@pytest.mark.slow
def test_zero_constants_with_one_counted_still_run(tmp_path: Path, capsys) -> None:
    """0 is "not counted", a valid study: with the idle draw alone the answer is finite."""
    path = fpga_file(tmp_path, {**dict.fromkeys(ENERGY_KEYS, 0), "static_w": 20.0},
                     {"pj_per_bit": 0})
    res = run_cli(capsys, "solve", "--fpga", str(path), "--design", "study", *SOLVE_ENERGY,
                  "--format", "json")
    assert res.code == 0, res.err
    summary = json.loads(res.out)["summary"][0]
    assert summary["best_tokens_per_j"] > 0


# --------------------------------------------------------------------------- conversions


def test_a_huge_rope_factor_is_refused_before_int(tmp_path: Path, capsys) -> None:
    """max_position_embeddings x 1e308 reached int(): OverflowError, exit 1."""
    data = json.loads((REPO / "workloads/models/hf/longchat-7b-v1.5-32k.json").read_text())
    data["rope_scaling"]["factor"] = 1e308
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    for args in (["models", str(path)],
                 ["simulate", "-b", "u280", "-m", str(path), "-L", "128", "-e", "analytic"]):
        line = one_line(run_cli(capsys, *args))
        assert f"{path}: rope_scaling.factor = 1e+308" in line, line


def test_a_list_where_a_string_was_expected(tmp_path: Path, capsys) -> None:
    """`architectures: [["LlamaForCausalLM"]]` raised TypeError (unhashable list)."""
    data = json.loads((REPO / "workloads/models/hf/Llama-2-7b-hf.json").read_text())
    for value in ([["LlamaForCausalLM"]], [{"a": 1}], {"a": 1}):
        path = tmp_path / "config.json"
        path.write_text(json.dumps({**data, "architectures": value}))
        line = one_line(run_cli(capsys, "models", str(path)))
        assert f"{path}: architectures = " in line, line


# --------------------------------------------------------------------------- limits


def test_a_tree_past_the_node_limit_names_the_flag(capsys) -> None:
    """The limit error said `argument tree_shape` (an internal field) for `--tree`."""
    tree = " ".join(["4096"] * 20)
    line = one_line(run_cli(capsys, "simulate", "-b", "u280", "-m", "llama-3.1-8b", "-a",
                            "longspec", "-L", "256", "-e", "analytic", "--tree", tree))
    assert "argument --tree = '4096 4096" in line and "65535 nodes" in line, line
    assert "tree_shape" not in line


def test_a_max_tree_past_the_limit_names_its_flag(tmp_path: Path, capsys) -> None:
    traces = tmp_path / "t.csv"
    traces.write_text("ranks\n0 0\n1\n")
    line = one_line(run_cli(capsys, "tree", "search", "-t", str(traces), "--max-tree",
                            " ".join(["4096"] * 20), "--out", str(tmp_path / "s.csv")))
    assert "--max-tree" in line and "tree_shape" not in line, line


@pytest.fixture
def counted_builds(monkeypatch):
    """Count every board a variation builds (`BoardBase.build`)."""
    from fpgasim.config.board_loader import BoardBase

    built = []
    real = BoardBase.build

    def build(self, changes=()):
        built.append(changes)
        return real(self, changes)

    monkeypatch.setattr(BoardBase, "build", build)
    return built


VARIANTS = ",".join(str(100 + i) for i in range(4096))


def test_a_sweep_grid_is_refused_before_its_boards_are_built(tmp_path: Path, capsys,
                                                             counted_builds) -> None:
    """4,096 boards x 300 contexts: refused after building every board (a minute)."""
    line = one_line(run_cli(capsys, "sweep", "-b", "u280", "-m", "llama-3.1-8b", "--vary",
                            f"design.clock_mhz={VARIANTS}", "--contexts", "1-300",
                            "--verify-lens", "1", "-e", "analytic", "--no-cache",
                            "--out", str(tmp_path / "s.csv")))
    assert "1000000 points" in line and "4096 board(s)" in line, line
    assert "--contexts/--verify-lens/--batch" in line, line  # `batches` was an internal name
    assert counted_builds == []


def test_an_explore_grid_is_refused_before_its_boards_are_built(tmp_path: Path, capsys,
                                                                counted_builds) -> None:
    line = one_line(run_cli(capsys, "explore", "--board", "u280", "-m", "llama-3.1-8b", "-a",
                            "longspec", "--vary", f"design.clock_mhz={VARIANTS}", "--contexts",
                            "1-300", "-e", "analytic", "--no-cache",
                            "--out", str(tmp_path / "e.csv")))
    assert "1000000 points" in line and "4096 board(s)" in line, line
    assert len(counted_builds) <= 1  # the base alone (its drafter is checked first)


@pytest.mark.parametrize("command", ["sweep", "explore"])
@pytest.mark.parametrize(("vary", "shown"), [
    ("fpga.dsps=0", "fpga.dsps = 0"),
    ("design.clock_mhz=yes", "design.clock_mhz = 'yes'"),
    ("fpga.power.static_w=5e-324", "fpga.power.static_w = 5e-324"),
])
def test_a_vary_value_is_blamed_not_the_shipped_file(tmp_path: Path, capsys, command: str,
                                                     vary: str, shown: str) -> None:
    """`--vary fpga.dsps=0` said `boards/u280.yaml: dsps = 0`: the shipped file, for the
    user's value."""
    args = {"sweep": ["sweep", "-b", "u280", "--verify-lens", "1"],
            "explore": ["explore", "--board", "u280", "-a", "longspec"]}[command]
    line = one_line(run_cli(capsys, *args, "--vary", vary, "-m", "llama-3.1-8b",
                            "--contexts", "1024", "-e", "analytic", "--no-cache",
                            "--out", str(tmp_path / "o.csv")))
    assert line.startswith("fpgasim: error: --vary: u280: ") and shown in line, line
    assert "boards/u280.yaml" not in line, line


@pytest.mark.parametrize(("changes", "key"), [
    ({"hidden_size": 2112, "num_attention_heads": 33, "num_key_value_heads": 33},
     "hidden_size = 2112"),
    ({"intermediate_size": 11000}, "intermediate_size = 11000"),
    ({"vocab_size": 32001}, "vocab_size = 32001"),
])
def test_the_compiler_names_a_configs_key_and_file(tmp_path: Path, capsys, changes: dict,
                                                   key: str) -> None:
    """FlightLLM's compiler refused `model c: hidden = 2112` (the internal field and the
    model's id) for a config.json that writes hidden_size."""
    data = json.loads((REPO / "workloads/models/hf/Llama-2-7b-hf.json").read_text())
    path = tmp_path / "c.json"
    path.write_text(json.dumps({**data, **changes}))
    line = one_line(run_cli(capsys, "simulate", "-b", "flightllm-u280", "-m", str(path),
                            "-L", "256", "-e", "fast"))
    assert f"{path}: {key}: a multiple of" in line, line


def test_an_explore_grid_of_batches_is_refused_before_its_boards(tmp_path: Path, capsys,
                                                                 counted_builds) -> None:
    """The first check left out the batches: 4,096 boards were built before the second."""
    line = one_line(run_cli(capsys, "explore", "--board", "u280", "-m", "llama-3.1-8b", "-a",
                            "longspec", "--vary", f"design.clock_mhz={VARIANTS}", "--contexts",
                            "1024", "--batch", "1-64", "-e", "analytic", "--no-cache",
                            "--out", str(tmp_path / "e.csv")))
    assert "1000000 points" in line and "64 batches" in line and "--batch" in line, line
    assert len(counted_builds) <= 1
