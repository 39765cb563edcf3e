"""Hostile battery: bad arguments and files across every command fail cleanly, writing nothing.

Every case runs the real CLI in this process, in a scratch folder, and asserts: exit 2,
exactly one line on stderr starting `fpgasim: error:` (naming the culprit where the case
says which), no traceback, and no file created or changed anywhere under the folder
(outputs, temporary files, default outputs such as results/ or explore.csv).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
BOARD_TEXT = (REPO / "boards/u280.yaml").read_text()
DESIGN_TEXT = (REPO / "designs/study.yaml").read_text()
LONG = "a" * 100_000
SIM = ["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "256"]
SWEEP = ["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128",
         "--verify-lens", "1-2", "--no-cache", "--executor", "inprocess"]
EXPLORE = ["explore", "--board", "v80", "--vary", "design.mm_cols=48", "--vary",
           "fpga.memory.bandwidth_gb_s=460", "-m", "llama-3.1-8b", "-a", "longspec",
           "--contexts", "1024", "--no-cache", "--executor", "inprocess"]
MM_COLS, BANDWIDTH = EXPLORE.index("design.mm_cols=48"), EXPLORE.index(
    "fpga.memory.bandwidth_gb_s=460")
SOLVE = ["solve", "-b", "v80", "-m", "llama-3.1-8b", "-a", "longspec", "--contexts", "1024"]
COMPARE = ["compare-algorithms", "-b", "v80", "-m", "vicuna-7b-v1.5", "--contexts", "512"]
HETERO = ["hetero", "solve", "-p", "rtx4090", "-m", "llama2-chat-7b"]
TREE_CMP = ["tree", "compare", "-a", "longspec", "--sizes", "2-4", "--iterations", "10"]


def sim_board(name: str) -> list[str]:
    """`simulate` on the board file `name` of the scratch folder's inputs."""
    return ["simulate", "-b", "{w}/in/" + name, *SIM[3:]]


def with_value(base: list[str], option: str, value: str) -> list[str]:
    """`base` with the value after `option` replaced."""
    i = base.index(option)
    return [*base[: i + 1], value, *base[i + 2 :]]


def board_file(name: str, text: str | None = None, **overrides: object) -> tuple[str, str]:
    """(file name, YAML text) of a u280 pair with `overrides` ('design.x' / 'fpga.y' ->
    value) or raw `text`."""
    if text is not None:
        return name, text
    data = yaml.safe_load(BOARD_TEXT)
    data["overrides"] = dict(overrides)
    return name, yaml.safe_dump(data)


def explore_with(index: int, value: str) -> list[str]:
    """EXPLORE with its --vary value at `index` replaced."""
    return [*EXPLORE[:index], value, *EXPLORE[index + 1 :]]


DUP_A = "  a: 4096\n  a: 8\n"  # buffers.a twice, in a design file
INPUTS = dict(
    [
        board_file("dup.yaml", BOARD_TEXT + "design: flightllm\n"),
        board_file("dup_nested.yaml", DESIGN_TEXT.replace("  a: 4096\n", DUP_A)),
        board_file("dup_override.yaml", BOARD_TEXT + "overrides:\n  design.clock_mhz: 200\n"
                   "  design.clock_mhz: 300\n"),
        board_file("bool_clock.yaml", **{"design.clock_mhz": True}),
        board_file("bool_rows.yaml", **{"design.mm_rows": True}),
        board_file("bool_eff.yaml", **{"design.memory.same_channel_efficiency": False}),
        board_file("tiny_clock.yaml", **{"design.clock_mhz": 5e-324}),
        board_file("tiny_bw.yaml", **{"fpga.memory.bandwidth_gb_s": 1e-300}),
        board_file("huge_bw.yaml", **{"fpga.memory.bandwidth_gb_s": 1e300}),
        board_file("str_clock.yaml", **{"design.clock_mhz": "225"}),
        board_file("small_buf.yaml", **{"design.buffers.b": 16}),
    ]
)
BAD_AAT = (
    "algorithm,model,task,context,structure,method,verify_len,tree_shape,aat\n"
    "longspec,llama-3.1-8b,gov_report,1024,tree,prior_score,3,4 16,2.1\n"
)
NO_DEFAULT_TREE = (REPO / "workloads/algorithms/longspec.yaml").read_text().replace(
    "default_tree:", "default_tree:\n  shape: [0, 4]\nold_default_tree:"
)

# (args, words the error line must contain); {w} is the scratch folder
CASES: list[tuple[list[str], list[str]]] = [
    # ---- output paths: under a regular file, a folder, unwritable, too long
    ([*SWEEP, "--out", "{w}/plain/x.csv"], ["--out", "is a file"]),
    ([*SWEEP, "--out", "{w}/plain/deeper/x.csv"], ["--out"]),
    ([*SWEEP, "--out", "{w}/folder.csv"], ["--out", "folder"]),
    ([*SWEEP, "--out", "/proc/x.csv"], ["--out"]),
    ([*SWEEP, "--out", "/sys/x.csv"], ["--out"]),
    ([*SWEEP, "--out", "{w}/" + "n" * 300 + ".csv"], ["--out", "255"]),
    ([*SWEEP, "--out", "{w}/x.xlsx"], ["--out", ".csv"]),
    ([*SWEEP, "--out", "{w}/fifo.csv"], ["--out", "special file"]),
    ([*SIM, "-e", "event", "--trace", "{w}/fifo.csv"], ["--trace", "special file"]),
    ([*EXPLORE, "--out", "{w}/plain/e.csv"], ["--out"]),
    ([*EXPLORE, "--out", "{w}/e.csv", "--plot", "{w}/plain/e.png"], ["--plot"]),
    ([*EXPLORE, "--out", "{w}/e.csv", "--plot", "/proc/e.png"], ["--plot"]),
    ([*EXPLORE, "--out", "{w}/e.csv", "--plot", "{w}/folder.csv"], ["--plot"]),
    ([*SIM, "-e", "event", "--trace", "{w}/plain/t.json"], ["--trace"]),
    ([*SIM, "-e", "event", "--trace", "/sys/t.json"], ["--trace"]),
    ([*SIM, "-e", "event", "--trace", "{w}/folder.csv"], ["--trace"]),
    ([*SOLVE, "--plot", "{w}/plain/p.png"], ["--plot"]),
    ([*SOLVE, "--schedule-out", "{w}/plain/s.yaml"], ["--schedule-out"]),
    ([*SOLVE, "--schedule-out", "/proc/s.yaml"], ["--schedule-out"]),
    ([*COMPARE, "--plot", "{w}/plain/c.png"], ["--plot"]),
    ([*TREE_CMP, "--out", "{w}/plain/c.csv"], ["--out"]),
    ([*TREE_CMP, "--plot", "{w}/plain/c.png"], ["--plot"]),
    (["tree", "search", "-t", "{w}/plain", "--out", "{w}/plain/s.csv"], ["--out"]),
    (["reproduce", "table1", "--out", "{w}/plain"], ["--out", "folder"]),
    (["reproduce", "table1", "--out", "{w}/plain/sub"], ["--out"]),
    (["reproduce", "table1", "--out", "/proc/r"], ["--out"]),
    # ---- empty list items, one parser for every list option
    ([*with_value(SWEEP, "--contexts", "1,,2"), "--out", "{w}/o.csv"], ["--contexts", "empty"]),
    ([*with_value(SWEEP, "--contexts", "128,"), "--out", "{w}/o.csv"], ["--contexts", "empty"]),
    ([*with_value(SWEEP, "--contexts", ",128"), "--out", "{w}/o.csv"], ["--contexts", "empty"]),
    ([*with_value(SWEEP, "--contexts", " "), "--out", "{w}/o.csv"], ["--contexts"]),
    (["sweep", "-b", "u280,,v80", *SWEEP[3:], "--out", "{w}/o.csv"], ["--board", "empty"]),
    (["sweep", "-b", "u280,", *SWEEP[3:], "--out", "{w}/o.csv"], ["--board", "empty"]),
    ([*with_value(SWEEP, "--verify-lens", "1,,4"), "--out", "{w}/o.csv"],
     ["--verify-lens", "empty"]),
    (explore_with(MM_COLS, "design.mm_cols=48,,64"), ["--vary", "empty"]),
    (explore_with(BANDWIDTH, "fpga.memory.bandwidth_gb_s=77,,460"), ["--vary", "empty"]),
    ([*COMPARE, "--algorithms", "longspec,,eagle3"], ["--algorithms", "empty"]),
    ([*COMPARE, "--algorithms", ","], ["--algorithms", "empty"]),
    ([*SOLVE, "--task", "a,,b"], ["--task", "empty"]),
    ([*HETERO, "--gammas", "2,,4"], ["--gammas", "empty"]),
    ([*HETERO, "--blocks", "1,"], ["--blocks", "empty"]),
    (with_value(TREE_CMP, "--sizes", "2,,5"), ["--sizes", "empty"]),
    (["tree", "optimal", "-p", ".6,,.1", "-n", "8"], ["--acceptance-vector", "empty"]),
    (["tree", "optimal", "-p", ".6;;.1", "-n", "8"], ["--acceptance-vector"]),
    (["tree", "optimal", "-p", "nan", "-n", "8"], ["--acceptance-vector"]),
    (["reproduce", "table1,,fig4"], ["NAME", "empty"]),
    # ---- numbers: ranges and culprits
    (explore_with(MM_COLS, "design.mm_cols=0"), ["mm_cols = 0"]),
    (explore_with(MM_COLS, "design.mm_cols=99999"), ["mm_cols = 99999"]),
    (explore_with(BANDWIDTH, "fpga.memory.bandwidth_gb_s=1e-300"), ["bandwidth_gb_s"]),
    (explore_with(BANDWIDTH, "fpga.memory.bandwidth_gb_s=nan"), ["bandwidth_gb_s"]),
    (explore_with(BANDWIDTH, "fpga.memory.bandwidth_gb_s=inf"), ["bandwidth_gb_s"]),
    ([*with_value(SWEEP, "--contexts", "99999999999"), "--out", "{w}/o.csv"], ["--contexts"]),
    # ---- board files: duplicate keys, booleans, out-of-range numbers (named by file)
    (sim_board("dup.yaml"), ["dup.yaml", "design", "line", "duplicate"]),
    (["simulate", "--fpga", "u280", "--design", "{w}/in/dup_nested.yaml", *SIM[3:]],
     ["dup_nested.yaml", "a", "duplicate"]),
    (sim_board("dup_override.yaml"), ["dup_override.yaml", "clock_mhz", "duplicate"]),
    (sim_board("bool_clock.yaml"), ["bool_clock.yaml", "clock_mhz"]),
    (sim_board("bool_rows.yaml"), ["bool_rows.yaml", "mm_rows"]),
    (sim_board("bool_eff.yaml"), ["bool_eff.yaml", "same_channel_efficiency"]),
    (sim_board("tiny_clock.yaml"), ["tiny_clock.yaml", "clock_mhz"]),
    (sim_board("tiny_bw.yaml"), ["tiny_bw.yaml", "bandwidth_gb_s"]),
    (sim_board("huge_bw.yaml"), ["huge_bw.yaml", "bandwidth_gb_s"]),
    (sim_board("str_clock.yaml"), ["str_clock.yaml", "clock_mhz"]),
    (["sweep", "-b", "u280,{w}/in/dup.yaml", *SWEEP[3:], "--out", "{w}/o.csv"], ["dup.yaml"]),
    (with_value(EXPLORE, "--board", "{w}/in/bool_clock.yaml"), ["bool_clock.yaml"]),
    # ---- a board that fails at run time names its file, not its `name:`
    (["simulate", "-b", "{w}/in/small_buf.yaml", *SIM[3:], "-x", "64", "-e", "event"],
     ["small_buf.yaml", "buffers.b"]),
    # ---- silent accepts
    ([*SIM, "-a", "longspec", "-x", "86"], ["--verify-len", "longspec.yaml"]),
    ([*SIM, "-a", "longspec", "--tree", "4 16", "-x", "4"], ["--verify-len", "--tree"]),
    ([*SIM, "-a", "longspec", "--tree", "3", "-x", "4", "--accepted", "4000"], ["--accepted"]),
    ([*SIM, "-a", "longspec", "--accepted", "70"], ["--accepted"]),
    ([*SIM, "-a", "eagle3", "--depth", "2", "--top-k", "2", "-x", "40"], ["--verify-len"]),
    ([*SIM, "-a", "{w}/in/no_default_tree.yaml"], ["no_default_tree.yaml", "default_tree"]),
    (["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128", "--verify-lens", "2-3",
      "-a", "longspec", "--accepted", "4", "--no-cache", "--out", "{w}/o.csv"], ["--accepted"]),
    ([*SOLVE, "--aat-dir", "{w}/aat"], ["bad.csv", "tree_shape"]),
    # ---- long names
    (["simulate", "-b", LONG, *SIM[3:]], ["--board"]),
    (["simulate", "-b", "u280", "-m", LONG, "-L", "5"], ["--model"]),
    ([*SIM, "-a", LONG], ["--algorithm"]),
    (["simulate", "-b", "x/" * 3000 + "b.yaml", *SIM[3:]], ["--board"]),
    ([*with_value(SWEEP, "-b", LONG), "--out", "{w}/o.csv"], ["--board"]),
    (with_value(SOLVE, "-b", LONG), ["--board"]),
    (["reproduce", LONG], ["NAME"]),
    (["reproduce", LONG[:5000] + ".yaml"], ["experiment"]),
    (["reproduce", "table1", "--aat-dir", LONG], ["--aat-dir"]),
    ([*SOLVE, "--aat-dir", LONG], ["--aat-dir"]),
    ([*EXPLORE, "--aat-dir", LONG], ["--aat-dir"]),
    (["tree", "calibrate", "-a", "longspec", "--aat-dir", LONG], ["--aat-dir"]),
    (["tree", "search", "-t", LONG + ".csv", "--out", "{w}/s.csv"], ["--traces"]),
    (["validate", LONG + ".yaml"], ["FILE"]),
    (["cache", "info", "--cache-dir", LONG], ["cache", "too long"]),
    ([*SWEEP[:-3], "--cache-dir", LONG[:3000] + "/" + LONG[:300], "--out", "{w}/o.csv"],
     ["cache"]),
    # ---- the cache folder
    (["cache", "info", "--cache-dir", "{w}/plain"], ["plain", "file"]),
    (["cache", "clear", "--cache-dir", "{w}/plain"], ["plain", "file"]),
    (["cache", "info", "--cache-dir", "{w}/plain/sub"], ["plain", "file"]),
    ([*SWEEP[:-3], "--cache-dir", "{w}/plain", "--out", "{w}/o.csv"], ["plain"]),
    # ---- assorted commands
    (["boards", "--format", "xml"], ["--format"]),
    (["hetero", "solve", "-p", LONG, "-m", "llama2-chat-7b"], ["--platform"]),
    (["tree", "optimal", "-a", LONG, "-n", "8"], ["--algorithm"]),
    (["tree", "calibrate", "-a", "longspec", "--aat-dir", "{w}/plain"], ["--aat-dir"]),
    (["validate", "{w}/empty"], ["no YAML"]),
    # ---- options that used to be accepted and ignored
    (["generate", "-b", "u280", "-m", "llama-3.1-8b", "-P", "128", "-D", "8", "-a", "longspec",
      "--aat-source", "embedded", "--task", "gov_report"], ["--aat-source", "--task"]),
    (["simulate", "-b", "u280", "-m", "llama-3.1-8b", "--phase", "prefill", "--prompt-len",
      "128", "--accepted", "3"], ["--accepted", "decode"]),
    (["simulate", "-b", "u280", "-m", "llama-3.1-8b", "--phase", "prefill", "--prompt-len",
      "128", "--depth", "3"], ["--depth", "decode"]),
    ([*SIM, "--dump-graph", "--format", "json"], ["--format", "json", "--dump-graph"]),
    (["simulate", "-b", "{w}/in/dangling_mask.yaml", "-m", "llama2-7b-flightllm", "-L", "256"],
     ["dangling_mask.yaml", "prefill_mask", "no-such-mask"]),
]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    (root / "plain").write_text("a regular file\n")
    (root / "folder.csv").mkdir()
    os.mkfifo(root / "fifo.csv")  # an existing special file is never replaced
    (root / "empty").mkdir()
    (root / "in").mkdir()
    for name, text in INPUTS.items():
        (root / "in" / name).write_text(text)
    (root / "in" / "no_default_tree.yaml").write_text(NO_DEFAULT_TREE)
    dangling = ("name: dangling\nfpga: vhk158\ndesign: flightllm\noverrides:\n"
                "  design.recipe.prefill_mask: no-such-mask\n")
    (root / "in" / "dangling_mask.yaml").write_text(dangling)
    (root / "aat").mkdir()
    (root / "aat" / "bad.csv").write_text(BAD_AAT)
    return root


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


@pytest.mark.parametrize(("args", "words"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_hostile_case(work: Path, capsys, monkeypatch, args: list[str], words: list[str]) -> None:
    monkeypatch.chdir(work)
    monkeypatch.setenv("FPGASIM_CACHE_DIR", str(work / "cache"))
    before = snapshot(work)
    res = run_cli(capsys, *[a.replace("{w}", str(work)) for a in args])
    lines = res.err.splitlines()
    assert res.code == 2, (res.code, res.err[-500:])
    assert len(lines) == 1 and lines[0].startswith("fpgasim: error: "), res.err[-500:]
    assert "Traceback" not in res.err and "internal error" not in res.err
    for word in words:
        assert word in lines[0], (word, lines[0][:400])
    assert snapshot(work) == before  # nothing written: no output, no temporary, no folder


def test_plain_file_untouched(work: Path) -> None:
    assert (work / "plain").read_text() == "a regular file\n"
    assert not os.path.exists(work / "results") and not os.path.exists(work / "explore.csv")
