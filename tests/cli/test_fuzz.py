"""Hostile input: mutated YAML/CSV files fed to the CLI never crash it, hang it or leave files.

Every case asserts: exit 0 exactly when the input is valid (the schema is the oracle), else
exit 2 with exactly one line on stderr and no traceback; a time limit per call; `sweep`
leaves an output file only on success and never a temporary file. Examples are
derandomized (the same inputs on every run) and bounded so the file runs in well under 90 s.
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from fpgasim.cli import main
from fpgasim.config.board_loader import load_design, load_fpga
from fpgasim.config.design import Design
from fpgasim.config.fit import fit
from fpgasim.config.fpga import Fpga
from fpgasim.config.loader import MAX_VALUES, count_values
from fpgasim.config.schema import Algorithm, TargetModel

REPO = Path(__file__).resolve().parents[2]
#: the files that carry a board's numbers (an FPGA data sheet and a design; a board file only
#: names the pair, tests/cli/test_hostile.py and tests/config/test_config.py take those), models
#: and algorithms
BASES: dict[str, tuple[type[BaseModel], dict]] = {
    "fpga": (Fpga, yaml.safe_load((REPO / "fpgas/u280.yaml").read_text())),
    "design": (Design, yaml.safe_load((REPO / "designs/study.yaml").read_text())),
    "model": (
        TargetModel,
        yaml.safe_load((REPO / "workloads/models/llama-3.1-8b.yaml").read_text()),
    ),
    "algorithm": (
        Algorithm,
        yaml.safe_load((REPO / "workloads/algorithms/longspec.yaml").read_text()),
    ),
}
FUZZ = settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CALL_LIMIT_S = 20


class Hang(BaseException):
    """Raised by the alarm when one CLI call runs too long (BaseException: main can't eat it)."""


def _alarm(signum, frame):
    raise Hang(f"CLI call still running after {CALL_LIMIT_S} s")


def call(*args: str) -> tuple[int, str, str]:
    """`fpgasim ARGS` in this process: (exit status, stdout, stderr), under a time limit."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CALL_LIMIT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(args))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


def assert_clean_failure(code: int, err: str) -> None:
    assert code == 2, f"exit {code}: {err}"
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("fpgasim: error: "), err
    assert "Traceback" not in err


def assert_validate_failure(code: int, err: str, path: Path) -> None:
    """`validate` lists its findings on stderr (one line each), then the one error line."""
    assert code == 2, f"exit {code}: {err}"
    *findings, last = err.strip("\n").split("\n")
    assert findings and all(line.startswith(str(path)) for line in findings), err
    assert last.startswith("fpgasim: error: ") and "Traceback" not in err


def only_warnings(err: str) -> bool:
    """stderr of a successful run: nothing, or warnings (e.g. the model does not fit)."""
    return all(line.startswith("fpgasim: warning: ") for line in err.splitlines())


# --------------------------------------------------------------------------- strategies


def deep_list(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 10**12, 10**30, 1e308, -1e-300, 4097, 65537]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.text(max_size=12),
    st.sampled_from(["NaN", ".nan", "inf", "1e999", "", "0x10", "12 GB", "\n", "ideal"]),
    st.lists(st.integers(-5, 5), max_size=4),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.integers(1, 60).map(deep_list),
)


@st.composite
def path_into(draw, data: Any) -> list:
    """A path (keys/indices) to some node of a nested document."""
    path, node = [], data
    while isinstance(node, dict | list) and node and draw(st.integers(0, 2)):
        key = draw(
            st.sampled_from(sorted(node, key=str) if isinstance(node, dict) else range(len(node)))
        )
        path.append(key)
        node = node[key]
    if not path:  # always touch at least one top-level field
        path.append(draw(st.sampled_from(sorted(data, key=str))))
    return path


@st.composite
def mutated(draw, kind: str) -> dict:
    """The shipped document of `kind` with 1-3 replaced, deleted or added fields."""
    data = copy.deepcopy(BASES[kind][1])
    for _ in range(draw(st.integers(1, 3))):
        path = draw(path_into(data))
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["replace", "replace", "scale", "scale", "delete", "add"]))
        last = path[-1]
        if op == "scale":  # often still valid: odd but legal hardware and models
            value = parent[last]
            factor = draw(st.sampled_from([0.5, 2, 3, 10, 1000, 10**6]))
            if isinstance(value, bool) or not isinstance(value, int | float):
                parent[last] = draw(st.text(max_size=12)) if isinstance(value, str) else value
            else:
                parent[last] = type(value)(max(1, value * factor)) if value else value
        elif op == "replace":
            parent[last] = draw(HOSTILE)
        elif op == "delete" and isinstance(parent, dict):
            parent.pop(last, None)
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(HOSTILE)
    return data


def laughs(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


RAW = st.one_of(
    st.just(b""),
    st.just(b"\n\n# only a comment\n"),
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    st.sampled_from([3, 200, 3000]).map(lambda n: ("a: " + "[" * n + "]" * n).encode()),
    st.sampled_from([3, 200, 3000]).map(lambda n: ("a: " + "{b: " * n + "1" + "}" * n).encode()),
    st.integers(2, 10).map(lambda n: laughs(n).encode()),
    st.integers(4000, 6000).map(lambda n: f"clock_mhz: 1{'0' * n}\n".encode()),
    st.tuples(st.sampled_from(sorted(BASES)), st.integers(0, 2000)).map(
        lambda t: yaml.safe_dump(BASES[t[0]][1])[: t[1]].encode()
    ),
)


def dump(data: dict) -> bytes:
    return yaml.safe_dump(data, allow_unicode=True).encode()


def duplicate_keys(root: yaml.Node | None) -> bool:
    """Whether a composed YAML document repeats a key in one mapping (YAML requires unique
    keys; fpgasim refuses them instead of keeping the last value)."""
    seen_nodes, stack = set(), [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys = [(k.tag, k.value) for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
            if len(keys) != len(set(keys)):
                return True
            stack.extend(v for pair in node.value for v in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return False


def schema_valid(kind: str, text: bytes) -> BaseModel | None:
    """The file as a valid `kind` per YAML + schema (what `validate` must accept), or None."""
    try:
        if duplicate_keys(yaml.compose(text.decode("utf-8"), Loader=yaml.SafeLoader)):
            return None
        data = yaml.safe_load(text.decode("utf-8"))
        if not isinstance(data, dict) or count_values(data, MAX_VALUES) > MAX_VALUES:
            return None
        return BASES[kind][0].model_validate(data)
    except Exception:  # noqa: BLE001 - any failure means invalid, which is what we test for
        return None


def oracle_valid(kind: str, text: bytes) -> bool:
    """Is the file a valid `kind` per YAML + schema (`validate` must exit 0 exactly then)?"""
    return schema_valid(kind, text) is not None


#: the part and design the other files are fitted with (the shipped u280 board's pair)
PAIR = {"fpga": "u280", "design": "study"}
CONTEXT = 256


def oracle_runs(kind: str, text: bytes) -> bool:
    """Does a run on it succeed (the CLI must exit 0 exactly then)? Schema-valid, and: the
    design fits the part (config/fit.py: DSPs, SLRs, channels are checked against the other
    file) and names an existing prefill mask table; the model's window holds the context and
    the verified token."""
    obj = schema_valid(kind, text)
    if obj is None:
        return False
    if kind == "model":
        return obj.window_tokens >= CONTEXT + 1
    if kind in ("fpga", "design"):
        fpga = obj if kind == "fpga" else load_fpga(PAIR["fpga"])
        design = obj if kind == "design" else load_design(PAIR["design"])
        mask = design.recipe.prefill_mask
        if mask != "causal" and not (REPO / "workloads/masks" / f"{mask}.yaml").is_file():
            return False
        try:
            fit(fpga, design, load_fpga)
        except Exception:  # noqa: BLE001 - the fit refuses it: the run must exit 2
            return False
    return True


#: Inputs are written into these folders, so `validate` knows their kind by the folder.
FOLDERS = {"fpga": "fpgas", "design": "designs", "model": "models", "algorithm": "algorithms"}
OTHERS = {**PAIR, "model": "llama-3.1-8b", "algorithm": "longspec"}


def simulate_args(kind: str, path: Path) -> list[str]:
    names = {**OTHERS, kind: str(path)}
    return [
        "simulate",
        "--fpga",
        names["fpga"],
        "--design",
        names["design"],
        "--model",
        names["model"],
        "--algorithm",
        names["algorithm"],
        "--context",
        str(CONTEXT),
        "--engine",
        "analytic",
        "--format",
        "json",
    ]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A scratch folder; sweeps without --no-cache write their cache inside it."""
    folder = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FPGASIM_CACHE_DIR", str(folder / "cache"))
        yield folder


# --------------------------------------------------------------------------- in-process


def check_simulate_and_validate(work: Path, kind: str, text: bytes) -> None:
    path = work / FOLDERS[kind] / "input.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(text)
    valid, runs = oracle_valid(kind, text), oracle_runs(kind, text)
    event(f"{kind} {'valid' if valid else 'invalid'}{'' if runs == valid else ', refused'}")
    code, out, err = call(*simulate_args(kind, path))
    if runs:
        assert code == 0 and only_warnings(err), err
    else:
        assert_clean_failure(code, err)
    code, out, err = call("validate", str(path))
    if valid:
        assert code == 0 and err == "" and out.strip().endswith(f"ok ({kind})"), out + err
    else:
        assert_validate_failure(code, err, path)
        assert out == ""


@pytest.mark.slow
@FUZZ
@given(kind=st.sampled_from(sorted(BASES)), data=st.data())
def test_mutated_configs(work: Path, kind: str, data: st.DataObject) -> None:
    check_simulate_and_validate(work, kind, dump(data.draw(mutated(kind))))


@pytest.mark.slow
@settings(FUZZ, max_examples=100)
@given(kind=st.sampled_from(sorted(BASES)), text=RAW)
def test_hostile_files(work: Path, kind: str, text: bytes) -> None:
    check_simulate_and_validate(work, kind, text)


@pytest.mark.slow
@settings(FUZZ, max_examples=150)
@given(kind=st.sampled_from(["fpga", "design", "model"]), data=st.data())
def test_sweep_writes_all_or_nothing(work: Path, kind: str, data: st.DataObject) -> None:
    text = dump(data.draw(mutated(kind))) if data.draw(st.booleans()) else data.draw(RAW)
    path = work / f"sweep-{kind}.yaml"
    path.write_bytes(text)
    folder = work / "sweep-out"
    folder.mkdir(exist_ok=True)
    for leftover in folder.iterdir():
        leftover.unlink()
    out = folder / data.draw(st.sampled_from(["s.csv", "s.parquet"]))
    names = {**OTHERS, kind: str(path)}
    code, stdout, err = call(
        "sweep",
        "--fpga",
        names["fpga"],
        "--design",
        names["design"],
        "--model",
        names["model"],
        "--contexts",
        "128,512",
        "--verify-lens",
        "1-3",
        "--engine",
        "analytic",
        "--executor",
        "inprocess",
        "--out",
        str(out),
        *data.draw(st.sampled_from([["--no-cache"], []])),
    )
    if oracle_runs(kind, text) and (kind != "model" or schema_valid(kind, text).window_tokens
                                    >= 512 + 3):
        assert code == 0, err
        assert [p.name for p in folder.iterdir()] == [out.name]
        # the summary line, and the warnings of what does not fit (the marks in the rows)
        lines = [x for x in err.strip().splitlines() if not x.startswith("fpgasim: warning:")]
        assert len(lines) == 1 and "6 points" in err
    else:
        assert_clean_failure(code, err)
        assert list(folder.iterdir()) == []


AAT_HEADER = [
    "algorithm",
    "model",
    "task",
    "context",
    "structure",
    "method",
    "verify_len",
    "tree_shape",
    "aat",
]
AAT_ROW = [
    "longspec",
    "llama-3.1-8b",
    "gov_report",
    "1024",
    "tree",
    "prior_score",
    "5",
    "2 2",
    "2.5",
]
CELL = st.one_of(
    st.sampled_from(
        [
            "",
            "nan",
            "NaN",
            "inf",
            "-1",
            "0",
            "1e308",
            "99999999999999999999",
            "4 16 0 3",
            "tree",
            "x",
            '"',
            "1,2",
            "\x00",
        ]
    ),
    st.text(max_size=8),
    st.integers(-(10**6), 10**6).map(str),
)


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_mutated_aat_tables(work: Path, data: st.DataObject) -> None:
    header = list(AAT_HEADER)
    rows = [list(AAT_ROW) for _ in range(data.draw(st.integers(0, 4)))]
    for r, row in enumerate(rows):
        row[6] = str(r + 2)  # distinct verify_len: no duplicate keys in the seed table
        row[7] = " ".join(["1"] * (r + 1))
    for _ in range(data.draw(st.integers(0, 3))):
        op = data.draw(st.sampled_from(["cell", "cell", "drop", "add", "row"]))
        if op == "cell" and rows:
            row = data.draw(st.sampled_from(rows))
            row[data.draw(st.integers(0, len(row) - 1))] = data.draw(CELL)
        elif op == "drop" and len(header) > 1:
            i = data.draw(st.integers(0, len(header) - 1))
            header.pop(i)
            for row in rows:
                row.pop(i)
        elif op == "add":
            header.append(data.draw(st.text(min_size=1, max_size=6)))
            for row in rows:
                row.append("1")
        elif op == "row" and rows:
            rows.append(list(data.draw(st.sampled_from(rows))))
    text = "\n".join(",".join(cells) for cells in [header, *rows]) + "\n"
    if data.draw(st.integers(0, 9)) == 0:
        text = data.draw(st.binary(max_size=200)).decode("latin-1")
    path = work / "table.csv"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    code, out, err = call("validate", str(path))
    assert code in (0, 2), err
    if code == 2:
        assert_validate_failure(code, err, path)
        assert out == ""
    else:
        assert err == "" and len(out.strip().splitlines()) == 1


# --------------------------------------------------------------------------- subprocesses


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe\x00junk", laughs(10).encode(), ("a: " + "[" * 20000).encode()],
    ids=["binary", "alias-bomb", "deep"],
)
@pytest.mark.slow
def test_real_process_fails_cleanly(tmp_path: Path, content: bytes) -> None:
    board = tmp_path / "b.yaml"
    board.write_bytes(content)
    out = tmp_path / "o.csv"
    for args in (
        ["simulate", "--board", str(board), "-m", "llama-3.1-8b", "-L", "128"],
        ["validate", str(board)],
        [
            "sweep",
            "-b",
            str(board),
            "-m",
            "llama-3.1-8b",
            "--contexts",
            "128",
            "--out",
            str(out),
            "--no-cache",
        ],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "fpgasim", *args], capture_output=True, text=True, timeout=60
        )
        if args[0] == "validate":
            assert_validate_failure(proc.returncode, proc.stderr, board)
        else:
            assert_clean_failure(proc.returncode, proc.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.yaml"]


@pytest.mark.parametrize(
    "target", ["folder.csv/", "file.txt/s.csv", "s.xlsx", "s", "new/sub/s.csv"]
)
def test_sweep_out_paths(tmp_path: Path, target: str) -> None:
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "file.txt").write_text("a file, not a folder")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    out = str(tmp_path / target)
    code, _, err = call(
        "sweep",
        "-b",
        "u280",
        "-m",
        "llama-3.1-8b",
        "--contexts",
        "128",
        "--verify-lens",
        "1-2",
        "-e",
        "analytic",
        "--no-cache",
        "--out",
        out,
    )
    if target.startswith("new/"):
        assert code == 0 and Path(out).is_file(), err
    else:
        assert_clean_failure(code, err)
        assert sorted(p.name for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("engine", ["event", "fast"])
def test_simulator_engines_reject_tiny_buffers_cleanly(tmp_path: Path, engine: str) -> None:
    """A B buffer that holds the MV passes but not an MM tile's K-block ring: refused when
    the x = 64 pass is compiled, in one line naming the file and the buffer."""
    board = tmp_path / "tiny.yaml"
    board.write_text((REPO / "boards/u280.yaml").read_text()
                     + "overrides:\n  design.buffers.b: 16\n")
    code, _, err = call(
        "simulate",
        "--board",
        str(board),
        "-m",
        "llama-3.1-8b",
        "-L",
        "4096",
        "-x",
        "64",
        "--engine",
        engine,
    )
    assert_clean_failure(code, err)
    assert str(board) in err and "buffers.b = 16" in err and "too small" in err
