"""One behaviour per option across output modes (issue 43, item 3): every column
docs/formats.md lists for a command ("Every command's columns, in every output mode", the
tables marked `<!-- columns: NAME -->`) is in that command's JSON and CSV, with and without
`--batch`. The test is generated from the documentation's lists: a column documented and
missing in one mode fails here (the batch JSON and the prefill rows did)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
FORMATS = (REPO / "docs" / "formats.md").read_text()


def documented() -> dict[str, list[str]]:
    """NAME -> the columns of the table after each `<!-- columns: NAME -->` marker."""
    out = {}
    for match in re.finditer(r"<!-- columns: (.+?) -->\n((?:\|.*\n)+)", FORMATS):
        names: list[str] = []
        for row in match.group(2).splitlines()[2:]:  # after the header and its rule
            cell = row.split("|")[1]
            for quoted in re.findall(r"`([^`]+)`", cell):
                names += [n.strip() for n in quoted.split(",") if n.strip()]
        out[match.group(1)] = names
    return out


DOCUMENTED = documented()
SIMULATE = ["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "256", "-e", "analytic"]
SOLVE = ["solve", "-b", "v80", "-m", "llama-3.1-8b", "-a", "longspec", "--contexts", "1024",
         "--task", "gov_report"]
#: documented list -> (arguments, where the rows are in the JSON, also these lists' columns)
COMMANDS = {
    "simulate": (SIMULATE, None, ()),
    "simulate --algorithm": (SIMULATE + ["-a", "longspec"], None, ("simulate",)),
    "simulate --model MoE": (["simulate", "-b", "v80", "-m",
                              str(REPO / "workloads/models/hf/Qwen3-30B-A3B.json"), "-L", "256",
                              "--verify-len", "4"], None, ("simulate",)),
    "simulate --phase prefill": (["simulate", "-b", "u280", "-m", "llama-3.1-8b", "--phase",
                                  "prefill", "--prompt-len", "128", "-e", "analytic"], None,
                                 ()),
    "solve": (SOLVE + ["-e", "analytic"], "summary", ()),
    "solve --batch": (SOLVE + ["--batch", "1,2"], "summary", ("solve",)),
    "tree optimal --objective throughput": (
        ["tree", "optimal", "--objective", "throughput", "-b", "v80", "-a", "longspec",
         "--context", "1024"], None, ()),
    "generate": (["generate", "-b", "flightllm-vhk158", "-m", "llama2-7b-flightllm", "-P",
                  "128", "-D", "16", "-a", "longspec", "-e", "analytic", "--workers", "1"],
                 "summary", ()),
    "explore": (["explore", "--board", "v80", "-m", "llama-3.1-8b", "--vary",
                 "design.mv_lanes=1,2", "--contexts",
                 "256", "--algorithms", "longspec", "-e", "analytic", "--executor",
                 "inprocess", "--no-cache"], "summary", ()),
}


def test_every_documented_list_is_checked() -> None:
    assert set(DOCUMENTED) == set(COMMANDS)
    assert all(len(columns) >= 4 for columns in DOCUMENTED.values())


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_documented_columns_in_every_mode(name: str, fmt: str, capsys, tmp_path) -> None:
    args, key, inherited = COMMANDS[name]
    if args[0] == "explore":
        args = [*args, "--out", str(tmp_path / "e.csv")]
    res = run_cli(capsys, *args, "--format", fmt)
    assert res.code == 0, res.err
    if fmt == "json":
        data = json.loads(res.out)
        rows = data[key] if key else [data]
        if isinstance(rows, dict):
            rows = [rows]
        have = set().union(*(set(r) for r in rows))
    else:
        have = set(pd.read_csv(io.StringIO(res.out)).columns)
    wanted = [c for n in (*inherited, name) for c in DOCUMENTED[n]]
    missing = [c for c in wanted if c not in have]
    assert not missing, (name, fmt, missing)
    if name in ("solve", "solve --batch", "tree optimal --objective throughput"):
        undocumented = sorted(have - set(wanted))
        assert not undocumented, (name, fmt, undocumented)
