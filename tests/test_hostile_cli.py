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

REPO = Path(__file__).resolve().parents[1]
U280 = yaml.safe_load((REPO / "boards/u280.yaml").read_text())
BOARD_TEXT = (REPO / "boards/u280.yaml").read_text()
LONG = "a" * 100_000
SIM = ["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "256"]
SWEEP = ["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128",
         "--verify-lens", "1-2", "--no-cache", "--executor", "inprocess"]
EXPLORE = ["explore", "--base-board", "v80", "--pe-arrays", "64x48", "--bandwidths", "460",
           "-m", "llama-3.1-8b", "-a", "longspec", "--contexts", "1024", "--no-cache",
           "--executor", "inprocess"]
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


def board_file(name: str, text: str | None = None, **changes: object) -> tuple[str, str]:
    """(file name, YAML text) of a u280 copy with `changes` (dotted keys) or raw `text`."""
    if text is not None:
        return name, text
    data = yaml.safe_load(BOARD_TEXT)
    for dotted, value in changes.items():
        node = data
        *path, last = dotted.split(".")
        for part in path:
            node = node[part]
        node[last] = value
    return name, yaml.safe_dump(data)


DUP_ROWS = "  rows: 64\n  rows: 8\n"  # pe_array.rows twice
INPUTS = dict(
    [
        board_file("dup.yaml", BOARD_TEXT + "clock_mhz: 300\n"),
        board_file("dup_nested.yaml", BOARD_TEXT.replace("  rows: 64\n", DUP_ROWS)),
        board_file("bool_clock.yaml", clock_mhz=True),
        board_file("bool_rows.yaml", **{"pe_array.rows": True}),
        board_file("bool_eff.yaml", **{"memory.weight_group.load_efficiency": False}),
        board_file("tiny_clock.yaml", clock_mhz=5e-324),
        board_file("tiny_bw.yaml", **{"memory.bandwidth_gb_s": 1e-300}),
        board_file("huge_bw.yaml", **{"memory.bandwidth_gb_s": 1e300}),
        board_file("str_clock.yaml", clock_mhz="225"),
        board_file("small_buf.yaml", **{"buffers.activation_kib": 16}),
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
    (with_value(EXPLORE, "--pe-arrays", "64x48,,128x64"), ["--pe-arrays", "empty"]),
    (with_value(EXPLORE, "--bandwidths", "77,,460"), ["--bandwidths", "empty"]),
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
    (with_value(EXPLORE, "--pe-arrays", "0x48"), ["--pe-arrays", "pe_array.rows"]),
    (with_value(EXPLORE, "--pe-arrays", "64x99999"), ["--pe-arrays"]),
    (with_value(EXPLORE, "--bandwidths", "1e-300"), ["--bandwidths"]),
    (with_value(EXPLORE, "--bandwidths", "nan"), ["--bandwidths"]),
    (with_value(EXPLORE, "--bandwidths", "inf"), ["--bandwidths"]),
    ([*with_value(SWEEP, "--contexts", "99999999999"), "--out", "{w}/o.csv"], ["--contexts"]),
    # ---- board files: duplicate keys, booleans, out-of-range numbers (named by file)
    (sim_board("dup.yaml"), ["dup.yaml", "clock_mhz", "line", "duplicate"]),
    (sim_board("dup_nested.yaml"), ["dup_nested.yaml", "rows", "duplicate"]),
    (sim_board("bool_clock.yaml"), ["bool_clock.yaml", "clock_mhz"]),
    (sim_board("bool_rows.yaml"), ["bool_rows.yaml", "pe_array.rows"]),
    (sim_board("bool_eff.yaml"), ["bool_eff.yaml", "load_efficiency"]),
    (sim_board("tiny_clock.yaml"), ["tiny_clock.yaml", "clock_mhz"]),
    (sim_board("tiny_bw.yaml"), ["tiny_bw.yaml", "bandwidth_gb_s"]),
    (sim_board("huge_bw.yaml"), ["huge_bw.yaml", "bandwidth_gb_s"]),
    (sim_board("str_clock.yaml"), ["str_clock.yaml", "clock_mhz"]),
    (["sweep", "-b", "u280,{w}/in/dup.yaml", *SWEEP[3:], "--out", "{w}/o.csv"], ["dup.yaml"]),
    (with_value(EXPLORE, "--base-board", "{w}/in/bool_clock.yaml"), ["bool_clock.yaml"]),
    # ---- a board that fails at run time names its file, not its `name:`
    (["simulate", "-b", "{w}/in/small_buf.yaml", *SIM[3:], "-x", "64", "-e", "event"],
     ["small_buf.yaml", "buffers.activation_kib"]),
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
    (with_value(SIM, "-m", "{w}/in/dangling_mask.yaml"), ["prefill_mask", "no-such-mask"]),
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
    flight = (REPO / "workloads/models/llama2-7b-flightllm.yaml").read_text()
    dangling = flight.replace("prefill_mask: flightllm-llama2-7b", "prefill_mask: no-such-mask")
    assert dangling != flight
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
