"""Round-4 hostile battery (issue 43), written without reading the hardening: every command
fed broken files (YAML/JSON: malformed, wrong types, NaN/inf, huge, duplicate keys, alias
bombs, deep nesting, BOM, UTF-16, NUL, tabs), Hugging Face configs (missing or hostile fields,
unknown architectures, GPT-2 where its lowering is not FlightLLM's), --vary values, paths
and numeric and list flags. Each refusal: exit 2, one line `fpgasim: error: ...` naming the
culprit, no traceback, nothing written under the scratch folder. Valid-but-unusual inputs that the
reference ecosystems accept (BOM, CRLF, tab-indented JSON, hex under YAML 1.2) must run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
U280 = (REPO / "boards/u280.yaml").read_text()
HF = json.loads((REPO / "workloads/models/hf/Llama-3.1-8B-Instruct.json").read_text())
TABLE1 = (REPO / "workloads/experiments/table1.yaml").read_text()
GPT2 = (REPO / "workloads/models/hf/gpt2-xl.json").read_text()
ESC = "\x1b[2J"

SIM = ["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "256", "-e", "analytic"]
SIM_M = ["simulate", "-b", "u280", "-L", "256", "-e", "analytic", "-m"]
SW = ["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128", "--verify-lens", "1-2",
      "--no-cache", "--executor", "inprocess", "-e", "analytic", "--out", "{w}/s.csv"]
EX = ["explore", "--board", "v80", "-m", "llama-3.1-8b", "-a", "longspec", "--contexts", "1024",
      "--no-cache", "--executor", "inprocess", "-e", "analytic", "--out", "{w}/e.csv"]
GEN = ["generate", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec", "-f", "json"]
SOLVE = ["solve", "-b", "v80", "-m", "llama-3.1-8b", "-a", "longspec", "--contexts", "1024"]
FIT = ["design", "fit", "--fpga", "u280", "--design", "study"]


def hf(**changes: object) -> str:
    """The Llama-3.1-8B config with `changes` (a value of `...` drops the key)."""
    data = dict(HF)
    for key, value in changes.items():
        if value is ...:
            data.pop(key)
        else:
            data[key] = value
    return json.dumps(data)


def bomb() -> str:
    """A billion-laughs document: 9 aliases of 9 aliases, eight levels deep."""
    text, prev = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n', "a"
    for i in range(1, 9):
        name = chr(ord("a") + i)
        text += f"{name}: &{name} [" + ",".join(["*" + prev] * 9) + "]\n"
        prev = name
    return text


FILES: dict[str, str | bytes] = {
    # YAML board files
    "empty.yaml": "",
    "list.yaml": "[1, 2, 3]\n",
    "selfalias.yaml": "a: &a [*a]\n",
    "bomb.yaml": bomb(),
    "deep.yaml": "a: " + "[" * 5000 + "]" * 5000 + "\n",
    "tabs.yaml": "name:\tfoo\n\tfpga: u280\n",
    "nul.yaml": b"name: a\x00b\n",
    "latin1.yaml": U280.encode() + b"# caf\xe9\n",
    "utf16.yaml": U280.encode("utf-16"),
    "huge_int.yaml": U280 + "overrides:\n  design.clock_mhz: 1" + "0" * 5000 + "\n",
    "bin_clock.yaml": U280 + "overrides:\n  design.clock_mhz: 0b101\n",  # YAML 1.1 only
    "bom.yaml": "\ufeff" + U280,
    "crlf.yaml": U280.replace("\n", "\r\n"),
    # Hugging Face configs
    "deep.json": "[" * 100_000 + "]" * 100_000,
    "gpt2.json": GPT2,
    "arch_empty.json": hf(architectures=[]),
    "arch_bert.json": hf(architectures=["BertModel"]),
    "arch_str.json": hf(architectures="LlamaForCausalLM"),
    "arch_esc.json": hf(architectures=["Llama\u202eForCausalLM" + ESC]),
    "type_bert.json": hf(model_type="bert"),
    "dup.json": hf()[:-1] + ', "hidden_size": 8}',
    "trunc.json": hf()[:50],
    "top_list.json": "[1, 2]",
    "nan.json": hf().replace('"hidden_size": 4096', '"hidden_size": NaN'),
    "inf.json": hf().replace('"hidden_size": 4096', '"hidden_size": Infinity'),
    "huge.json": hf().replace('"hidden_size": 4096', '"hidden_size": 1' + "0" * 400),
    "hidden_0.json": hf(hidden_size=0),
    "hidden_neg.json": hf(hidden_size=-4096),
    "hidden_frac.json": hf(hidden_size=4096.5),
    "hidden_str.json": hf(hidden_size="4096"),
    "hidden_bool.json": hf(hidden_size=True),
    "layers_huge.json": hf(num_hidden_layers=10**30),
    "heads_7.json": hf(num_attention_heads=7),
    "kv_3.json": hf(num_key_value_heads=3),
    "kv_0.json": hf(num_key_value_heads=0),
    "vocab_list.json": hf(vocab_size=[1]),
    "inter_null.json": hf(intermediate_size=None),
    "maxpos_0.json": hf(max_position_embeddings=0),
    "act_bad.json": hf(hidden_act="not_an_act"),
    "head_dim_7.json": hf(head_dim=7),
    # valid JSON a config.json can be: tabs, BOM, a key left to the library's default
    "tab.json": json.dumps(HF, indent="\t"),
    "bom.json": "\ufeff" + json.dumps(HF),
    "no_vocab.json": hf(vocab_size=...),
    # experiments
    "exp_climb.yaml": TABLE1.replace("files: [longspec_llama31_tree.csv]",
                                     "files: [../../../../etc/passwd]"),
    "exp_ctx0.yaml": TABLE1.replace("contexts: [128, 512", "contexts: [0, 512"),
    "exp_ctxinf.yaml": TABLE1.replace("contexts: [128, 512", "contexts: [1e309, 512"),
    "exp_kind.yaml": TABLE1.replace("kind: context_sets", "kind: nope"),
    "exp_cols.yaml": TABLE1.replace("columns: [context,", "columns: [bogus_col, context,"),
    "exp_board.yaml": TABLE1.replace("boards: [v80]", "boards: [../../etc/passwd]"),
    "exp_name.yaml": TABLE1.replace("name: table1", "name: ../../escape"),
    # traces
    "trace.csv": "step,accepted\n1,x\n",
}

# (args, words the one error line must contain); {w} is the scratch folder, {i} its inputs
REFUSED: list[tuple[list[str], list[str]]] = [
    # ---- YAML files as boards (and as models)
    *[(["simulate", "-b", "{i}/" + n, *SIM[3:]], [n, why]) for n, why in [
        ("empty.yaml", "empty"), ("list.yaml", "mapping"), ("selfalias.yaml", "alias"),
        ("bomb.yaml", "alias"), ("deep.yaml", "nesting"), ("tabs.yaml", "\\t"),
        ("nul.yaml", "YAML"), ("latin1.yaml", "UTF-8"), ("utf16.yaml", "UTF-8"),
        ("huge_int.yaml", "digits"), ("bin_clock.yaml", "clock_mhz")]],
    ([*SIM_M, "{i}/bom.yaml"], ["bom.yaml", "board file", "--model"]),
    ([*SIM_M, "{i}/bomb.yaml"], ["bomb.yaml", "alias"]),
    (["simulate", "-b", "{i}/tab.json", *SIM[3:]], ["tab.json", "model file", "--board"]),
    # ---- Hugging Face configs
    *[([*SIM_M, "{i}/" + n], [n, key]) for n, key in [
        ("deep.json", "nesting"),
        ("arch_empty.json", "architectures"), ("arch_bert.json", "BertModel"),
        ("arch_str.json", "architectures"), ("arch_esc.json", "\\x1b"),
        ("type_bert.json", "model_type"), ("dup.json", "hidden_size"),
        ("trunc.json", "JSON"), ("top_list.json", "JSON object"),
        ("nan.json", "hidden_size"), ("inf.json", "hidden_size"), ("huge.json", "hidden_size"),
        ("hidden_0.json", "hidden_size"), ("hidden_neg.json", "hidden_size"),
        ("hidden_frac.json", "hidden_size"), ("hidden_str.json", "hidden_size"),
        ("hidden_bool.json", "hidden_size"), ("layers_huge.json", "num_hidden_layers"),
        ("heads_7.json", "num_attention_heads"), ("kv_3.json", "num_key_value_heads"),
        ("kv_0.json", "num_key_value_heads"), ("vocab_list.json", "vocab_size"),
        ("inter_null.json", "intermediate_size"), ("maxpos_0.json", "max_position_embeddings"),
        ("act_bad.json", "hidden_act"), ("head_dim_7.json", "head_dim")]],
    ([*SOLVE[:3], "-m", "{i}/gpt2.json", *SOLVE[5:-1], "512"],
     ["gpt2.json", "architecture", "dfx"]),
    (["hetero", "solve", "-p", "rtx4090", "-m", str(REPO / "workloads/models/hf/"
                                                   "Mixtral-8x7B-v0.1.json")], ["dense"]),
    ([*SIM_M, str(REPO / "workloads/models/hf/Mixtral-8x7B-v0.1.json")], ["analytic"]),
    (["models", "nosuch"], ["nosuch", "unknown model"]),
    # found by this battery, fixed: a folder where a file is expected is named a folder
    (["simulate", "-b", "{i}", *SIM[3:]], ["folder"]),
    ([*SIM_M, "{i}"], ["folder", "config.json"]),
    # ---- numeric flags
    *[([*SIM[:5], f"--context={v}", *SIM[7:]], ["--context"]) for v in
      ["0", "-5", "nan", "1e309", "256.5", "99999999999999999999999"]],
    ([*SIM, "-x", "0"], ["--verify-len"]),
    ([*SIM, "-B", "0"], ["--batch"]),
    ([*SIM[:-1], "warp"], ["--engine", "warp"]),
    ([*SIM, "-f", "xml"], ["--format"]),
    ([*SIM[:5], "--phase", "prefill", "-P", "1e309", *SIM[7:]], ["--prompt-len"]),
    (SIM[:5] + SIM[7:], ["--context", "required"]),
    ([*SIM, "--trace", "{w}/t.json"], ["--trace", "event or fast"]),
    ([*SIM, "--routing", "skew=1"], ["--routing", "mixture-of-experts"]),
    *[([*SIM, "-a", "longspec", "--tree", v], ["--tree"]) for v in
      ["4 0 16", "4 -1", "", "4 1e9", "4 nan"]],
    ([*GEN, "-P", "0", "-D", "8"], ["--prompt-len"]),
    ([*GEN, "-P", "128", "-D", "0"], ["--decode-len"]),
    ([*GEN, "-P", "128", "-D", "99999999999"], ["--decode-len"]),
    # the limit named is one that is then accepted: with 8 decoded tokens, at most 131064
    ([*GEN, "-P", "10000000", "-D", "8"], ["--prompt-len", "131071"]),
    ([*GEN, "-P", "131072", "-D", "8"], ["--prompt-len", "131071"]),
    ([*GEN, "-P", "131065", "-D", "8"], ["--decode-len", "at most 7"]),
    ([*GEN, "-P", "128", "-D", "8", "--workers", "0"], ["--workers"]),
    ([*GEN, "-P", "128", "-D", "8", "--out", "{w}/plain"], ["--out", ".csv"]),
    ([*GEN, "-P", "128", "-D", "8", "--out", "{w}/folder.csv"], ["--out", "folder"]),
    (["tree", "optimal", "-p", "1.5,.2", "-n", "8"], ["--acceptance-vector"]),
    (["tree", "optimal", "-p", "-0.1", "-n", "8"], ["--acceptance-vector"]),
    (["tree", "optimal", "-p", "1e309", "-n", "8"], ["--acceptance-vector"]),
    (["tree", "optimal", "-p", ".6,.3", "-n", "0"], ["--size"]),
    (["tree", "optimal", "-p", ".6,.3", "-n", "100000000"], ["--size"]),
    (["tree", "compare", "-a", "longspec", "--sizes", "0-4", "--iterations", "10"], ["--sizes"]),
    (["tree", "compare", "-a", "longspec", "--sizes", "2-4", "--iterations", "0"],
     ["--iterations"]),
    (["tree", "search", "-t", "{i}/trace.csv", "--out", "{w}/ts.csv"], ["trace.csv", "ranks"]),
    (["tree", "calibrate", "-a", "nosuch"], ["nosuch"]),
    (["hetero", "solve", "-p", "rtx4090", "-m", "llama2-chat-7b", "--gammas", "0"], ["--gammas"]),
    (["hetero", "solve", "-p", "rtx4090", "-m", "llama2-chat-7b", "--gammas", "nan"],
     ["--gammas"]),
    (["hetero", "solve", "-p", "{i}/empty.yaml", "-m", "llama2-chat-7b"], ["empty.yaml"]),
    ([*SOLVE, "--objective", "nope"], ["--objective"]),
    ([*SOLVE, "--batch", "0"], ["--batch"]),
    ([*SOLVE, "--task", "../../x"], ["--task"]),
    (["compare-algorithms", "-b", "v80", "-m", "vicuna-7b-v1.5", "--contexts", "512",
      "--algorithms", "longspec,longspec"], ["--algorithms", "once"]),
    # ---- list flags
    ([*SW, "--contexts", "0"], ["--contexts"]),
    ([*SW, "--verify-lens", "2-1"], ["--verify-lens"]),
    ([*SW, "--verify-lens", "1-1000000"], ["--verify-lens"]),
    ([*SW, "--verify-lens", "1-nan"], ["--verify-lens"]),
    ([*SW, "--verify-lens", "1.5"], ["--verify-lens"]),
    ([*SW, "--verify-lens", "-1"], ["--verify-lens"]),
    ([*SW, "--batch", "0"], ["--batch"]),
    ([*SW, "--batch", "1,,2"], ["--batch", "empty"]),
    ([*SW, "--batch", "1e3"], ["--batch"]),
    ([*SW, "--chunk-size", "0"], ["--chunk-size"]),
    ([*SW, "--executor", "thread"], ["--executor"]),
    ([*SW, "--cache-limit-mb", "0"], ["--cache-limit-mb"]),
    ([*SW, "--tree-method", "bogus", "-a", "longspec"], ["--tree-method"]),
    ([*SW, "--accepted", "0"], ["--accepted"]),
    ([*SW, "--contexts", ",".join(str(i) for i in range(1, 200_001))], ["--contexts"]),
    ([*SW, "--verify-lens", ",".join(["1"] * 100_000)], ["--verify-lens"]),
    ([*SW[:-1], "{w}/plain"], ["--out"]),
    # ---- --vary, read as YAML 1.2 plain scalars
    *[([*EX, "--vary", v], [key]) for v, key in [
        ("design.mm_cols=1e3", "mm_cols"), ("design.mm_cols=yes", "mm_cols"),
        ("design.mm_cols=48.5", "mm_cols"), ("design.mm_cols=", "--vary"),
        ("=48", "--vary"), ("design.mm_cols", "--vary"), ("design.nope=1", "nope"),
        ("design.mm_cols=[48]", "--vary"), ("design.mm_cols={a: 1}", "--vary"),
        ("design.mm_cols=*a", "mm_cols"), ("design.mm_cols=1_000", "mm_cols"),
        ("design.memory.same_channel_efficiency=yes", "same_channel_efficiency"),
        ("design.clock_mhz=.inf", "clock_mhz"), ("design.clock_mhz=1e309", "clock_mhz"),
        ("fpga.memory.bandwidth_gb_s=-1", "bandwidth_gb_s"),
        ("design.mm_cols=1-1000000", "mm_cols"), ("design..mm_cols=48", "mm_cols"),
        ("design.__class__=48", "__class__")]],
    ([*EX, "--vary", "design.mm_cols=48", "--vary", "design.mm_cols=64"], ["twice"]),
    ([*FIT, "--vary", "design.mm_cols=0"], ["mm_cols"]),
    ([*FIT, "--vary", "design.mm_cols=48,64"], ["--vary"]),
    ([*FIT, "--vary", "design.clock_mhz=5e-324"], ["clock_mhz"]),
    ([*FIT[:5], "{i}/tab.json"], ["tab.json", "--design"]),
    (["design", "fit", "--fpga", "{i}/empty.yaml", "--design", "study"], ["empty.yaml"]),
    # ---- board selection and paths
    (["simulate", "--fpga", "u280", *SIM[3:]], ["--design"]),
    (["simulate", "--fpga", "u280", "--design", "study", *SIM[1:]], ["--board"]),
    (["simulate", "-b", "{w}/missing.yaml", *SIM[3:]], ["missing.yaml", "not found"]),
    (["simulate", "-b", "../../../../../../etc/passwd", *SIM[3:]], ["passwd"]),
    (["simulate", "-b", "/dev/zero", *SIM[3:]], ["/dev/zero"]),
    ([*SIM_M, "/dev/urandom"], ["/dev/urandom"]),
    # ---- experiments
    *[(["reproduce", "{i}/" + n, "--out", "{w}/r", "--engine", "analytic"], [n, key])
      for n, key in [("exp_climb.yaml", "passwd"), ("exp_ctx0.yaml", "contexts"),
                     ("exp_ctxinf.yaml", "contexts"), ("exp_kind.yaml", "kind"),
                     ("exp_cols.yaml", "bogus_col"), ("exp_board.yaml", "boards"),
                     ("exp_name.yaml", "name")]],
    (["reproduce", "nosuch", "--out", "{w}/r"], ["NAME", "nosuch"]),
    (["reproduce", "table1", "--workers", "0"], ["--workers"]),
]

# valid documents of each ecosystem: they run (exit 0) and say nothing on stderr but warnings
ACCEPTED: list[list[str]] = [
    ["simulate", "-b", "{i}/bom.yaml", *SIM[3:], "-f", "json"],
    ["simulate", "-b", "{i}/crlf.yaml", *SIM[3:], "-f", "json"],
    [*SIM_M, "{i}/tab.json", "-f", "json"],
    [*SIM_M, "{i}/bom.json", "-f", "json"],
    [*SIM_M, "{i}/no_vocab.json", "-f", "json"],
]

@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("battery_r4")
    (root / "plain").write_text("a regular file\n")
    (root / "folder.csv").mkdir()
    (root / "in").mkdir()
    for name, text in FILES.items():
        path = root / "in" / name
        path.write_bytes(text) if isinstance(text, bytes) else path.write_text(
            text, encoding="utf-8")
    (root / "hfdir").mkdir()
    (root / "hfdir" / "config.json").write_text(hf())
    return root


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file's size and time, but numba's compiled-engine cache (FPGASIM_CACHE_DIR/numba,
    written on the first import of the fast engine, whatever the arguments): not an output."""
    numba = root / "cache" / "numba"
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
            if p != numba.parent and numba not in (p, *p.parents)}


def expand(args: list[str], work: Path) -> list[str]:
    return [a.replace("{i}", str(work / "in")).replace("{w}", str(work)) for a in args]


def refused(work: Path, capsys, monkeypatch, args: list[str], words: list[str]) -> None:
    monkeypatch.chdir(work)
    monkeypatch.setenv("FPGASIM_CACHE_DIR", str(work / "cache"))
    before = snapshot(work)
    res = run_cli(capsys, *expand(args, work))
    lines = res.err.splitlines()
    assert "Traceback" not in res.err and "internal error" not in res.err, res.err[-800:]
    assert res.code == 2, (res.code, res.err[-500:])
    assert len(lines) == 1 and lines[0].startswith("fpgasim: error: "), res.err[-500:]
    assert "\x1b" not in res.err  # names from files reach the terminal escaped
    for word in words:
        assert word in lines[0], (word, lines[0][:400])
    assert snapshot(work) == before  # nothing written


@pytest.mark.parametrize(("args", "words"), REFUSED, ids=[str(i) for i in range(len(REFUSED))])
def test_refused(work: Path, capsys, monkeypatch, args: list[str], words: list[str]) -> None:
    refused(work, capsys, monkeypatch, args, words)


def test_model_folder_reads_its_config_json(work: Path, capsys, monkeypatch) -> None:
    """A Hugging Face model folder (config.json inside) reads as `from_pretrained` reads it:
    the same model as the config.json itself (found by this battery: it was looked up as a
    shipped name and refused as 'unknown model')."""
    monkeypatch.chdir(work)
    monkeypatch.setenv("FPGASIM_CACHE_DIR", str(work / "cache"))
    folder = run_cli(capsys, *SIM_M, str(work / "hfdir"), "-f", "json")
    config = run_cli(capsys, *SIM_M, str(work / "hfdir" / "config.json"), "-f", "json")
    assert folder.code == config.code == 0, (folder.err, config.err)
    assert json.loads(folder.out)["verify_cycles"] == json.loads(config.out)["verify_cycles"]


@pytest.mark.parametrize("args", ACCEPTED, ids=[str(i) for i in range(len(ACCEPTED))])
def test_accepted(work: Path, capsys, monkeypatch, args: list[str]) -> None:
    monkeypatch.chdir(work)
    monkeypatch.setenv("FPGASIM_CACHE_DIR", str(work / "cache"))
    res = run_cli(capsys, *expand(args, work))
    assert res.code == 0, res.err[-500:]
    assert all(line.startswith("fpgasim: warning: ") for line in res.err.splitlines())
    row = json.loads(res.out)
    assert row["verify_cycles"] > 0 and row["context"] == 256


def test_equivalent_documents_agree(work: Path, capsys, monkeypatch) -> None:
    """BOM and CRLF change nothing: the same board gives the same cycles; a tab-indented or
    BOM-prefixed config.json is the same model as the plain one."""
    monkeypatch.chdir(work)
    monkeypatch.setenv("FPGASIM_CACHE_DIR", str(work / "cache"))

    def cycles(*args: str) -> int:
        res = run_cli(capsys, *expand(list(args), work), "-f", "json")
        assert res.code == 0, res.err[-300:]
        return json.loads(res.out)["verify_cycles"]

    plain = cycles(*SIM)
    assert cycles("simulate", "-b", "{i}/bom.yaml", *SIM[3:]) == plain
    assert cycles("simulate", "-b", "{i}/crlf.yaml", *SIM[3:]) == plain
    assert cycles(*SIM_M, "{i}/tab.json") == cycles(*SIM_M, "{i}/bom.json") == plain


def test_escape_in_file_name_is_escaped(work: Path, capsys, monkeypatch) -> None:
    """A model id taken from a file name carrying an escape sequence reaches neither the
    table nor the CSV raw."""
    monkeypatch.chdir(work)
    monkeypatch.setenv("FPGASIM_CACHE_DIR", str(work / "cache"))
    name = work / f"m{ESC}x.json"
    name.write_text(hf())
    try:
        for fmt in ("table", "csv", "json"):
            res = run_cli(capsys, *SIM_M, str(name), "-f", fmt)
            assert res.code == 0, res.err[-300:]
            assert "\x1b" not in res.out and "\x1b" not in res.err
    finally:
        name.unlink()


@pytest.mark.parametrize("env", [{"LANG": "C", "LC_ALL": "C", "COLUMNS": "20"},
                                 {"COLUMNS": "abc", "TERM": "dumb"}])
def test_environment_quirks(work: Path, env: dict[str, str]) -> None:
    """An odd locale or terminal width, no TTY: the refusal is still one line, exit 2."""
    proc = subprocess.run([sys.executable, "-m", "fpgasim", *SIM[:5], "-L", "0"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, **env, "PYTHONPATH": str(REPO)}, cwd=work)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr[-300:]
    assert proc.stderr.startswith("fpgasim: error: ") and "--context" in proc.stderr


def test_unusable_cache_dir_env(work: Path) -> None:
    """FPGASIM_CACHE_DIR under /proc and a bad FPGASIM_CACHE_LIMIT_MB: one line, no output."""
    out = work / "never.csv"
    for env in ({"FPGASIM_CACHE_DIR": "/proc/no/such"}, {"FPGASIM_CACHE_LIMIT_MB": "nan"}):
        args = [a for a in SW[:-1] if a != "--no-cache"]
        proc = subprocess.run([sys.executable, "-m", "fpgasim", *args, str(out)],
                              capture_output=True, text=True, timeout=120, cwd=work,
                              stdin=subprocess.DEVNULL,
                              env={**os.environ, **env, "PYTHONPATH": str(REPO)})
        assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr[-300:]
        assert not out.exists()
