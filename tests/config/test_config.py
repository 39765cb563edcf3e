"""FPGA data sheets, accelerator designs and boards (pairs): shipped files load, bad files give
one line naming the file, the field and the value, designs extend designs, boards override
fields, `--vary`-style changes re-fit, retired names say what replaced them, and the docs
describe every field, every DSP rule and every fit (docs/formats.md, docs/hardware.md)."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from fpgasim.config import (
    available,
    board_of,
    load_algorithm,
    load_board,
    load_design,
    load_fpga,
    load_model,
)
from fpgasim.config.board import BoardFile
from fpgasim.config.board_loader import RETIRED_BOARDS, fit_matrix
from fpgasim.config.design import Design
from fpgasim.config.fit import dsp_rule, precision_of
from fpgasim.config.fpga import Fpga
from fpgasim.config.schema import TargetModel
from fpgasim.engine.analytic import study_bandwidth_bytes_per_s
from fpgasim.errors import ConfigError
from tests.cli_helpers import run_cli

GIB = 1.024**3  # GB/s read as GiB/s (the study's and FlightLLM's reading)

# ---------------------------------------------------------------------------- shipped files


def test_every_shipped_file_validates() -> None:
    assert available("board") == ["flightllm-u280", "flightllm-vhk158", "u250", "u280", "v80",
                                  "vhk158"]
    assert available("fpga") == ["u250", "u280", "u50", "u55c", "v80", "vck190", "vhk158"]
    assert available("design") == ["dfx", "flightllm", "flightllm-mv4", "study"]
    assert len(available("model")) >= 8
    for name in available("board"):
        assert load_board(name).name == name
    for name in available("fpga"):
        assert load_fpga(name).name == name
    for name in available("design"):
        assert load_design(name).name == name
    for name in available("model"):
        load_model(name)
    for name in available("algorithm"):
        load_algorithm(name)


@pytest.mark.parametrize(("name", "rows", "cols", "gb_s"), [
    # the study's board table: R x C fp16 MAC/cycle; the simulator reads each part's bandwidth
    # as its data sheet states it (the study's GiB/s reading is its accounting's, `analytic`)
    ("u280", 64, 48, 460), ("vhk158", 128, 64, 819.2), ("v80", 128, 128, 819.2),
    ("u250", 128, 128, 77),
])
def test_study_boards_are_the_study_table(name: str, rows: int, cols: int, gb_s: float) -> None:
    board = load_board(name)
    assert (board.fpga.name, board.design.name, board.recipe.name) == (name, "study", "fp16")
    assert board.clock_mhz == 225 and board.duration_divisor == 1
    assert (board.fit.mm_rows, board.fit.mm_cols) == (rows, cols)
    assert board.mm_macs_per_cycle == board.peak_macs_per_cycle == rows * cols
    # one-lane MV array at a quarter of the MM array (FlightLLM's 1024 of 4096)
    assert board.mv_macs_per_cycle == rows * cols // 4
    assert board.fpga.memory.bandwidth_gb_s == gb_s
    assert board.bandwidth_bytes_per_s == pytest.approx(gb_s * 1e9, rel=1e-12)
    assert study_bandwidth_bytes_per_s(board) == pytest.approx(gb_s * GIB * 1e9, rel=1e-12)
    assert board.lowering == "flightllm"


@pytest.mark.parametrize(("name", "divisor", "gb_s"), [
    # min(4 SLRs, 32 channels / 10 per pipeline) = 3.2; U280: 3 SLRs bind; GiB/s is FlightLLM's
    # VHK158 configuration's reading, every other pair reads the data sheet's decimal GB/s
    ("flightllm-vhk158", 3.2, 819.2 * GIB), ("flightllm-u280", 3.0, 460.0),
])
def test_flightllm_boards(name: str, divisor: float, gb_s: float) -> None:
    board = load_board(name)
    assert board.design.name == "flightllm" and board.recipe.name == "flightllm"
    assert board.duration_divisor == divisor
    assert board.fit.pipelines_built == board.fpga.slrs
    assert (board.fit.mm_rows, board.fit.mm_cols, board.mv_macs_per_cycle) == (128, 32, 1024)
    assert (board.fit.ports_per_pipeline, board.fit.channels_a) == (10, 8)
    assert board.bandwidth_bytes_per_s == pytest.approx(gb_s * 1e9, rel=1e-12)


def test_board_rows_name_the_part_and_the_design() -> None:
    cols = load_board("flightllm-u280").columns()
    assert cols == {"fpga": "u280", "design": "flightllm", "pipelines": 3.0, "dsps_used": 6144,
                    "dsps_available": 9024, "fits_dsps": True}


# ---------------------------------------------------------------------------- bad files


def _shipped(repo: Path, kind: str, name: str) -> dict:
    return yaml.safe_load((repo / kind / f"{name}.yaml").read_text())


def _write(tmp_path: Path, data, name: str = "f.yaml") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


def _one_line_error(loader, path: Path, field: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        loader(str(path))
    text = str(info.value)
    assert "\n" not in text
    assert str(path) in text, text
    assert info.value.field == field, text
    assert f"{field} = " in text, text
    return info.value


@pytest.mark.parametrize(("mutate", "field", "allowed"), [
    (lambda d: d["memory"].update(bandwidth_gb_s=-5), "memory.bandwidth_gb_s",
     "greater than or equal to 1"),
    (lambda d: d["memory"].update(bandwidth_gb_s=float("nan")), "memory.bandwidth_gb_s",
     "finite"),
    (lambda d: d["memory"].update(channels=0), "memory.channels", "greater than 0"),
    (lambda d: d.update(dsps=0), "dsps", "greater than 0"),
    (lambda d: d.update(dsp_kind="DSP48E1"), "dsp_kind", "'DSP48E2' or 'DSP58'"),
    (lambda d: d.update(slrs=40), "slrs", "less than or equal to 16"),
    (lambda d: d.update(family="Virtex"), "family", "UltraScale+"),
    (lambda d: d.pop("part"), "part", "missing"),
    (lambda d: d.update(dsps="9024"), "dsps", "valid integer"),
    # a design's field in a data sheet is an unknown field, not silently ignored
    (lambda d: d.update(clock_mhz=225), "clock_mhz", "unknown field"),
])
def test_bad_fpga_file_names_the_field(tmp_path: Path, repo: Path, mutate, field: str,
                                       allowed: str) -> None:
    data = _shipped(repo, "fpgas", "u280")
    mutate(data)
    err = _one_line_error(load_fpga, _write(tmp_path, data), field)
    assert allowed in str(err)


@pytest.mark.parametrize(("mutate", "field", "allowed"), [
    (lambda d: d.update(clock_mhz=0.5), "clock_mhz", "greater than or equal to 1"),
    (lambda d: d.update(clock_mhz="fast"), "clock_mhz", "valid number"),
    (lambda d: d.update(mv_lanes=0), "mv_lanes", "greater than 0"),
    (lambda d: d.update(pipelines="per_die"), "pipelines", "'per_slr' or 'one'"),
    (lambda d: d["memory"].update(same_channel_efficiency=1.5), "memory.same_channel_efficiency",
     "less than or equal to 1"),
    (lambda d: d["buffers"].update({"global": 0}), "buffers.global", "greater than 0"),
    (lambda d: d["recipe"].update(kv_bits=2), "recipe.kv_bits", "4, 8 or 16"),
    (lambda d: d["recipe"]["q"].update(sparse_ratio=0), "recipe.q.sparse_ratio", "greater than 0"),
    (lambda d: d.pop("recipe"), "recipe", "missing"),
    # a data sheet's field in a design
    (lambda d: d.update(dsps=9024), "dsps", "unknown field"),
])
def test_bad_design_file_names_the_field(tmp_path: Path, repo: Path, mutate, field: str,
                                         allowed: str) -> None:
    data = _shipped(repo, "designs", "flightllm")
    mutate(data)
    err = _one_line_error(load_design, _write(tmp_path, data), field)
    assert allowed in str(err)


@pytest.mark.parametrize(("mutate", "says"), [
    (lambda d: d["recipe"].update(kv_bits=4), "recipe.kv_bits = 4 has no path in this design; "
     "datapath.kv_bits allows 8"),
    (lambda d: d.update(mm_cols=40), "mm_cols = 40 is not a multiple of block = 16"),
    (lambda d: d["recipe"].update(weight_timed_bits=4),
     "weight_timed_bits was retired: weight_bits is the width weights are stored and moved at"),
    (lambda d: d.update(mm_rows=96), "MM array rows = 96 are not a multiple of "
     "compiler.mask_block = 64"),
])
def test_cross_field_rules_name_fields_and_values(tmp_path: Path, repo: Path, mutate,
                                                   says: str) -> None:
    data = _shipped(repo, "designs", "flightllm")
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_design(str(path))
    assert says in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_unknown_prefill_mask_table_is_refused_when_fitted(tmp_path: Path) -> None:
    """Checked when a board is built (not only when a prefill first needs the table)."""
    path = _write(tmp_path, "extends: flightllm\nname: x\nrecipe: {prefill_mask: nosuch}\n")
    with pytest.raises(ConfigError, match="'causal' or one of") as info:
        board_of("u280", str(path))
    assert info.value.field == "recipe.prefill_mask" and str(path) in str(info.value)


@pytest.mark.parametrize(("text", "field"), [
    ("name: b\nfpga: u280\ndesign: flightllm\npe_array: {rows: 64}\n", "pe_array"),
    ("name: b\nfpga: u280\ndesign: flightllm\nlowering: flightllm\n", "lowering"),
    ("name: b\nfpga: u280\n", "design"),
    ("name: b\nfpga: u280\ndesign: flightllm\noverrides: {design.clock_mhz: -3}\n",
     "design.clock_mhz"),  # the override as the file writes it
])
def test_bad_board_file_names_the_field(tmp_path: Path, text: str, field: str) -> None:
    _one_line_error(load_board, _write(tmp_path, text, "b.yaml"), field)


def test_bad_override_path_lists_the_fields(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: b\nfpga: u280\ndesign: flightllm\n"
                  "overrides: {design.clck_mhz: 300}\n", "b.yaml")
    with pytest.raises(ConfigError) as info:
        load_board(str(path))
    assert info.value.field == "design.clck_mhz" and str(path) in str(info.value)
    assert "clock_mhz" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("loader", [load_board, load_fpga, load_design])
@pytest.mark.parametrize("text", ["", "- 1\n- 2\n", "a: [1, 2\n", "\x00\x01\xff\xfe"])
def test_malformed_files(tmp_path: Path, loader, text: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ConfigError) as info:
        loader(str(path))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("loader", "kind", "choices"), [
    (load_board, "board", "flightllm-u280, flightllm-vhk158, u250, u280, v80, vhk158"),
    (load_fpga, "fpga", "u250, u280, u50, u55c, v80, vck190, vhk158"),
    (load_design, "design", "dfx, flightllm, flightllm-mv4, study"),
])
def test_unknown_name_lists_choices(loader, kind: str, choices: str) -> None:
    with pytest.raises(ConfigError, match=f"unknown {kind}; choose one of: {choices}$"):
        loader("no-such-name")


@pytest.mark.parametrize(("loader", "path", "says"), [
    (load_fpga, "designs/study.yaml", "this is a design file, not an fpga file"),
    (load_design, "fpgas/u280.yaml", "this is an fpga file, not a design file"),
    (load_board, "workloads/models/llama-3.1-8b.yaml", "this is a model file, not a board file"),
])
def test_a_file_of_another_kind_says_its_kind(repo: Path, loader, path: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        loader(str(repo / path))


def test_model_shape_rule(tmp_path: Path, repo: Path) -> None:
    data = yaml.safe_load((repo / "workloads/models/llama-3.1-8b.yaml").read_text())
    data["kv_heads"] = 7
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="kv_heads"):
        load_model(str(path))


# ---------------------------------------------------------------------------- extends


def test_a_design_extends_another_and_changes_only_what_differs() -> None:
    base, mv4 = load_design("flightllm"), load_design("flightllm-mv4")
    assert (mv4.mv_lanes, mv4.mv_macs_per_lane) == (4, 1024)
    differ = {k for k in Design.model_fields if getattr(base, k) != getattr(mv4, k)}
    assert differ == {"name", "description", "mv_lanes", "mv_macs_per_lane"}


def test_extends_merges_nested_mappings(tmp_path: Path) -> None:
    path = _write(tmp_path, "extends: flightllm\nname: mine\nrecipe: {kv_bits: 8, "
                  "q: {sparse_ratio: 1.0}}\nclock_mhz: 300\n")
    mine, base = load_design(str(path)), load_design("flightllm")
    assert mine.clock_mhz == 300 and mine.recipe.q.sparse_ratio == 1.0
    # the rest of the recipe (and of q) is the base's
    assert mine.recipe.q.bias == base.recipe.q.bias is True
    assert mine.recipe.model_copy(update={"q": base.recipe.q}) == base.recipe
    assert mine.buffers == base.buffers and mine.compiler == base.compiler


def test_extends_by_path_and_chains(tmp_path: Path) -> None:
    first = _write(tmp_path, "extends: flightllm-mv4\nname: a\nmv_lanes: 2\n", "a.yaml")
    second = _write(tmp_path, f"extends: {first}\nname: b\nclock_mhz: 250\n", "b.yaml")
    b = load_design(str(second))
    assert (b.name, b.clock_mhz, b.mv_lanes, b.mv_macs_per_lane) == ("b", 250, 2, 1024)


@pytest.mark.parametrize("text", ["extends: loop\nname: loop\n", "extends: [flightllm]\nname: x\n"])
def test_bad_extends_is_one_line(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path, text, "loop.yaml")
    if "loop" in text:  # a design that extends itself, by path
        path.write_text(f"extends: {path}\nname: loop\n")
    with pytest.raises(ConfigError) as info:
        load_design(str(path))
    assert info.value.field == "extends" and "at most 8" in str(info.value)
    assert "\n" not in str(info.value)


def test_extends_an_unknown_design(tmp_path: Path) -> None:
    path = _write(tmp_path, "extends: nosuch\nname: x\n")
    with pytest.raises(ConfigError, match="unknown design; choose one of"):
        load_design(str(path))


# ---------------------------------------------------------------------------- overrides, changes


def test_board_override_is_applied() -> None:
    """flightllm-vhk158 keeps FlightLLM's own configuration (its 819.2 read as GiB/s, its two
    constant efficiencies); the plain pair reads the part as its data sheet states it."""
    pair, named = board_of("vhk158", "flightllm"), load_board("flightllm-vhk158")
    assert pair.design.memory.bandwidth_reading == "decimal"
    assert named.design.memory.bandwidth_reading == "gib"
    assert named.design.memory.transfer_model == "design_constants"
    assert named.bandwidth_bytes_per_s == pytest.approx(pair.bandwidth_bytes_per_s * GIB)
    differ = {k for k, v in named.design.model_dump().items() if pair.design.model_dump()[k] != v}
    assert differ == {"memory"}
    assert pair.name == "flightllm@vhk158"


def test_override_in_a_board_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: fast\nfpga: u280\ndesign: flightllm\n"
                  "overrides: {design.clock_mhz: 300, fpga.memory.bandwidth_gb_s: 920}\n",
                  "b.yaml")
    board = load_board(str(path))
    assert board.name == "fast" and board.clock_mhz == 300
    assert board.fpga.memory.bandwidth_gb_s == 920
    assert load_fpga("u280").memory.bandwidth_gb_s == 460  # the shipped file is untouched


def test_changes_equal_the_extending_design() -> None:
    """`--vary`-style changes of flightllm-vhk158 to 4 MV lanes = the flightllm-mv4 design with
    the board's own overrides (FlightLLM's VHK158 configuration: GiB/s, constant efficiencies)."""
    changed = load_board("flightllm-vhk158",
                         [("design.mv_lanes", 4), ("design.mv_macs_per_lane", 1024)])
    own = [("design.memory.bandwidth_reading", "gib"),
           ("design.memory.transfer_model", "design_constants")]
    assert changed.fit == board_of("vhk158", "flightllm-mv4", own).fit
    assert changed.name == "flightllm-vhk158 mv_lanes=4 mv_macs_per_lane=1024"
    assert changed.duration_divisor == 3.2 and changed.mv_macs_per_cycle == 4096


def test_many_changes_name_the_board(capsys) -> None:
    """Each change is named after the pair (a name past 200 characters was an internal
    error: 'String should have at most 200 characters')."""
    changes = [("design.clock_mhz", 300), ("fpga.memory.bandwidth_gb_s", 500),
               ("design.memory.same_channel_efficiency", 0.5),
               ("design.memory.cross_channel_efficiency", 0.3), ("design.mm_rows", 64),
               ("design.mm_cols", 32), ("design.mv_macs_per_lane", 512),
               ("design.recipe.weight_bits", 8), ("design.recipe.bias_bits", 16),
               ("design.recipe.q.sparse_ratio", 0.5),
               ("design.recipe.activation_bits", 8), ("design.recipe.kv_bits", 8)]
    board = board_of("u280", "study", changes)
    assert board.name == "study@u280 " + " ".join(
        f"{p.rsplit('.', 1)[-1]}={v}" for p, v in changes)
    assert len(board.name) > 200 and board.recipe.kv_bits == 8
    args = [a for p, v in changes for a in ("--vary", f"{p}={v}")]
    res = run_cli(capsys, "design", "fit", "--fpga", "u280", "--design", "study", *args,
                  "-f", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["board"] == board.name


def test_doubling_the_dsps_refits_the_array() -> None:
    """docs/hardware.md: --vary fpga.dsps=18048 on U280 gives 128x80 arrays, still 3
    pipelines (the SLRs bind); int8 on DSP48E2 pairs token rows: 64 x 5 x 16 x 16 slices."""
    board = load_board("flightllm-u280", [("fpga.dsps", 18048)])
    f = board.fit
    assert (f.mm_rows, f.mm_cols, f.pipelines, f.binding_resource) == (128, 80, 3.0, "SLRs")
    assert f.mm_dsps == 64 * 80 <= 18048 // 3 < 64 * 96


def test_an_array_change_starts_from_the_parts_table_entry() -> None:
    """The study's U280 array is 64x48: changing its columns keeps its 64 rows."""
    board = load_board("u280", [("design.mm_cols", 96)])
    assert (board.fit.mm_rows, board.fit.mm_cols) == (64, 96)
    assert load_board("vhk158", [("design.mm_cols", 96)]).fit.mm_rows == 128


@pytest.mark.parametrize(("change", "field", "says"), [
    (("design.clck_mhz", 300), "design.clck_mhz", "a field of design: buffers, clock_mhz"),
    (("memory.bandwidth_gb_s", 920), "memory.bandwidth_gb_s", "starting with 'fpga.' or"),
    (("design.mv_lanes.x", 2), "design.mv_lanes.x", "mv_lanes has no fields below it"),
    # a change's value is named by the path given (not the field of the shipped file)
    (("design.mv_lanes", 0), "design.mv_lanes", "greater than 0"),
    (("fpga.memory.bandwidth_gb_s", 0.5), "fpga.memory.bandwidth_gb_s",
     "greater than or equal to 1"),
])
def test_bad_changes_name_the_field(change, field: str, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_board("u280", [change])
    assert info.value.field == field and says in str(info.value)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------- retired names


@pytest.mark.parametrize("name", sorted(RETIRED_BOARDS))
def test_retired_board_names_say_what_replaced_them(name: str) -> None:
    assert name not in available("board")
    part = name.rsplit("-", 1)[0]
    with pytest.raises(ConfigError) as info:
        load_board(name)
    text = str(info.value)
    assert f"board {name} was retired" in text and "\n" not in text
    assert f"{part}" in text.split("retired:", 1)[1]
    if name.endswith("-flightllm"):  # fields as backticked names: the CLI shows its flags
        assert f"`fpga` {part} `design` flightllm" in text


def test_a_retired_name_on_the_command_line(capsys) -> None:
    res = run_cli(capsys, "simulate", "--board", "u280-flc", "--model", "llama2-7b-flightllm",
                  "-L", "127", "--engine", "analytic")
    assert res.code == 2
    assert res.err.count("\n") == 1 and "now u280" in res.err
    res = run_cli(capsys, "simulate", "--board", "vhk158-flightllm", "--model",
                  "llama2-7b-flightllm", "-L", "127", "--engine", "analytic")
    assert res.code == 2 and res.err.count("\n") == 1
    assert "use vhk158 (the study's arrays" in res.err
    assert "or --fpga vhk158 --design flightllm" in res.err


# ---------------------------------------------------------------------------- DSP rules in docs

HARDWARE = Path(__file__).resolve().parents[2] / "docs" / "hardware.md"


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 3)
    return text[start:end if end >= 0 else None]


@pytest.mark.parametrize(("kind", "design", "precision", "macs", "packs"), [
    ("DSP48E2", "flightllm", "int8", 2, "tokens"),
    ("DSP58", "flightllm", "int8", 3, "k"),
    ("DSP58", "study", "fp16", 1, "none"),
    ("DSP48E2", "study", "fp16", 1, "none"),
])
def test_dsp_rules_are_the_cited_rules(kind: str, design: str, precision: str, macs: int,
                                       packs: str) -> None:
    """Each rule of config/fit.py is the bullet of docs/hardware.md for its precision and DSP
    kind: the same MACs per slice, the same documents cited, an assumption marked as one."""
    recipe = load_design(design).recipe
    assert precision_of(recipe) == precision
    rule = dsp_rule(kind, recipe)
    assert (rule.kind, rule.precision, rule.macs_per_slice, rule.packs_along) == (
        kind, precision, macs, packs)
    fitting = _section(HARDWARE.read_text(), "Fitting a design to a part")
    bullet = re.search(rf"   - {precision} on {kind}:(.*?)(?=\n   - |\n   An MM)", fitting,
                       re.S)
    assert bullet, f"docs/hardware.md has no bullet for {precision} on {kind}"
    bullet = " ".join(bullet.group(1).split())
    cited = set(re.findall(r"\b(?:WP|AM|UG|DS|PG)\d{3,4}\b", rule.source))
    assert cited == set(re.findall(r"\b(?:WP|AM|UG|DS|PG)\d{3,4}\b", bullet)), (cited, bullet)
    assert ("assumption" in bullet) == rule.assumption == ("assumption" in rule.source)
    assert {1: "one", 2: "two", 3: "three"}[macs] in bullet


def test_int4_weights_multiply_as_int8() -> None:
    recipe = load_design("flightllm").recipe
    assert recipe.weight_bits == 4 and recipe.operand_bits == 8
    assert precision_of(recipe) == "int8"


# ---------------------------------------------------------------------------- fits matrix


#: how docs/hardware.md names a resource fit_matrix reports short
SHORT = {"dsps": "DSPs", "on-chip RAM": "on-chip RAM"}


def _doc_fits() -> dict[tuple[str, str], str]:
    fitting = _section(HARDWARE.read_text(), "Fitting a design to a part")
    lines = [ln for ln in fitting.splitlines() if ln.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[0] == "design", "the fits table must be the first table of the section"
    cells = {}
    for line in lines[2:]:
        row = [c.strip() for c in line.strip("|").split("|")]
        for fpga, cell in zip(header[1:], row[1:], strict=True):
            cells[row[0], fpga] = cell
    return cells


def test_the_fits_matrix_is_the_documented_one() -> None:
    doc = _doc_fits()
    fpgas, designs = available("fpga"), available("design")
    assert set(doc) == {(d, f) for d in designs for f in fpgas}
    for row in fit_matrix(fpgas, designs):
        cell = doc[row["design"], row["fpga"]]
        if row["pipelines"] is None:  # refused: the doc names what is short
            assert row["fits"] is False and cell == f"no: {SHORT[row['short_of']]} unknown"
            continue
        verdict = {True: "yes", None: "?", False: f"no: {SHORT.get(row['short_of'])}"}[row["fits"]]
        assert cell == f"{verdict} ({row['pipelines']:g})", (row, cell)


def test_fits_matrix_facts() -> None:
    """Independent of the doc: the study's fp16 arrays at one slice per MAC exceed the
    VHK158 (8,192 > 7,392), V80 (16,384 > 10,848) and U250 (16,384 > 12,288); the U50's DSP
    count is unpublished, so a design fitted to its DSPs is refused."""
    rows = {(r["design"], r["fpga"]): r for r in fit_matrix(available("fpga"),
                                                             available("design"))}
    for fpga in ("vhk158", "v80", "u250"):
        assert rows["study", fpga]["fits"] is False and rows["study", fpga]["short_of"] == "dsps"
    for fpga in ("u280", "u55c"):
        assert rows["study", fpga]["fits"] is True
    assert rows["flightllm", "u50"]["pipelines"] is None
    assert "dsps" in rows["flightllm", "u50"]["reason"]
    assert rows["flightllm", "vhk158"]["pipelines"] == 3.2
    assert rows["flightllm", "vhk158"]["fits"] is None  # its BRAM/URAM are not in the sources


# ---------------------------------------------------------------------------- field docs


def _field_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        subs = [c for c in [info.annotation, *typing.get_args(info.annotation)]
                if isinstance(c, type) and issubclass(c, BaseModel)]
        out += _field_paths(subs[0], f"{prefix}{key}.") if subs else [f"{prefix}{key}"]
    return out


@pytest.mark.parametrize(("schema", "section"), [
    (Fpga, "### FPGA data sheet"), (Design, "### Accelerator design"), (BoardFile, "### Board"),
    (TargetModel, "## Target models"),
])
def test_docs_describe_every_field(repo: Path, schema: type[BaseModel], section: str) -> None:
    """docs/formats.md holds the field tables: every field of each file kind has a row in its
    own section, and no row names a field the schema does not have."""
    text = (repo / "docs" / "formats.md").read_text()
    start = text.index(section)
    end = min(i for i in (text.find("\n## ", start + 3), text.find("\n### ", start + 4), len(text))
              if i >= 0)
    block = text[start:end]
    rows = re.findall(r"^\| `([^`]+)` \|", block, re.M)
    assert sorted(rows) == sorted(_field_paths(schema)), f"docs/formats.md, {section}"


def test_a_hashed_board_equals_a_fresh_copy() -> None:
    """Equality reads the fields alone: hashing a board (which caches its hash in a private
    attribute) does not make it unequal to a fresh copy of itself."""
    a, b = load_board("u280"), load_board("u280")
    hash(a)
    assert a == b and b == a and not a != b
    assert a != load_board("v80") and a in [b]
