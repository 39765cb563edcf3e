"""The installed wheel: it ships every board, workload and platform file and runs from anywhere.

`pip install .` (not editable) must give a working fpgasim with no checkout beside it and no
FPGASIM_HOME: the test builds the wheel from a copy of the checkout, installs it into a fresh
venv in a temporary folder, and runs commands there with the cwd outside the checkout. Their
output is compared with the checkout's (same numbers) and with the golden CSVs, and the
tutorial (docs/tutorial.md) runs end to end with the installed `fpgasim`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pandas as pd
import pytest

import fpgasim
from tests.reproduce.test_golden import GOLDEN, assert_frames_close
from tests.tutorial_steps import missing_key_lines, read_tutorial, run_step, write_files

REPO = Path(__file__).resolve().parents[2]
#: The checkout's top-level data folders and the packages the wheel maps them to.
DATA_FOLDERS = {"boards": "fpgasim._data.boards", "fpgas": "fpgasim._data.fpgas",
                "designs": "fpgasim._data.designs", "platforms": "fpgasim._data.platforms",
                "workloads": "fpgasim._data.workloads"}
#: What the build never needs (caches, earlier builds, results, VCS metadata).
NOT_COPIED = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__",
                                    ".venv", "results", ".pytest_cache", ".ruff_cache",
                                    ".hypothesis")
#: One simulate call, run by the wheel and by the checkout (analytic: deterministic, fast).
SIMULATE = ["simulate", "-b", "v80", "-m", "llama-3.1-8b", "-L", "256", "-x", "4",
            "--engine", "analytic", "--format", "json"]


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_every_code_package_is_listed() -> None:
    """pyproject lists packages by hand (the data mapping needs it): none may be forgotten."""
    setuptools = _pyproject()["tool"]["setuptools"]
    on_disk = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "fpgasim").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    listed = set(setuptools["packages"])
    assert listed - set(DATA_FOLDERS.values()) == on_disk
    assert setuptools["package-dir"] == {pkg: folder for folder, pkg in DATA_FOLDERS.items()}


def _clean_env() -> dict[str, str]:
    """A user's environment after installing the wheel: no checkout on the path, no FPGASIM_HOME."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "FPGASIM_HOME"}}
    env["MPLBACKEND"] = "Agg"
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel `pip wheel` builds from a copy of this checkout (the checkout stays clean)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=NOT_COPIED)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"),
         str(src)],
        check=True, capture_output=True, text=True, timeout=300, env=_clean_env(),
    )
    (built,) = (tmp / "dist").glob("fpgasim-*.whl")
    return built


def dependency_dirs() -> list[str]:
    """The folders the test interpreter imports installed packages from (the site-packages
    of its environment, and of the base when that is a venv seeing them, the user site),
    in its order: where fpgasim's dependencies are, whether the tests run from a plain venv
    (README: `python -m venv v && v/bin/pip install -e ".[dev]"`) or from a base or conda
    interpreter that holds them itself."""
    dirs = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    return list(dict.fromkeys(p for p in dirs if Path(p).is_dir()))


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed, seeing the test interpreter's installed
    packages (fpgasim's dependencies) through a .pth file, not `--system-site-packages`:
    that option shows the *base* interpreter's packages, which a plain venv's tests do not
    run with (the base of a fresh venv has no typer). Paths in a .pth file are added
    without running that folder's own .pth files, so an editable fpgasim there stays out
    of sight, and the venv's own site-packages (the wheel) comes first."""
    root = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True,
                   timeout=120)
    python = root / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, timeout=60, env=_clean_env(),
    ).stdout.strip()
    (Path(site) / "fpgasim_test_dependencies.pth").write_text("\n".join(dependency_dirs()) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", str(wheel)],
        check=True, capture_output=True, text=True, timeout=300, env=_clean_env(),
    )
    return root


def run_installed(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """`fpgasim ARGS` with the venv's console script, from `cwd`, as an installed user runs it."""
    proc = subprocess.run([str(venv / "bin" / "fpgasim"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=_clean_env())
    assert proc.returncode == 0, (args, proc.stderr)
    return proc


@pytest.mark.slow
def test_wheel_ships_every_data_file(wheel: Path) -> None:
    """Every file of boards/, fpgas/, designs/, platforms/ and workloads/ is in the wheel
    under fpgasim/_data."""
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in DATA_FOLDERS:
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                shipped = "fpgasim/_data/" + path.relative_to(REPO).as_posix()
                assert shipped in names, f"{shipped} missing: add its suffix to package-data"


@pytest.mark.slow
def test_the_venv_sees_the_dependencies_and_only_the_wheel(venv: Path, tmp_path: Path) -> None:
    """The venv imports every dependency the tests run with (typer, numba, ...) and
    fpgasim from the wheel, from a plain venv and a base interpreter alike."""
    deps = ("typer", "rich", "numba", "numpy", "pandas", "scipy", "matplotlib", "pyarrow",
            "pydantic", "yaml")
    code = f"import {', '.join(deps)}, fpgasim; print(fpgasim.__file__)"
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=_clean_env())
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).is_relative_to(venv)


@pytest.mark.slow
def test_installed_wheel_runs_outside_the_checkout(venv: Path, tmp_path: Path) -> None:
    """boards (pairs, data sheets, designs), simulate and reproduce table4 from the wheel
    alone, cwd outside the checkout."""
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import fpgasim; print(fpgasim.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, check=True, env=_clean_env(),
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), where  # the wheel's copy, not the checkout

    version = run_installed(venv, tmp_path, "--version").stdout
    assert version.strip() == f"fpgasim {fpgasim.__version__}"

    listed = json.loads(run_installed(venv, tmp_path, "boards", "--json").stdout)
    for table, folder, key in (("boards", "boards", "board"), ("fpgas", "fpgas", "fpga"),
                               ("designs", "designs", "design")):
        assert [r[key] for r in listed[table]] == sorted(
            p.stem for p in (REPO / folder).glob("*.yaml")), table

    installed = run_installed(venv, tmp_path, *SIMULATE).stdout
    checkout = subprocess.run(
        [sys.executable, "-m", "fpgasim", *SIMULATE], cwd=REPO, capture_output=True, text=True,
        check=True, env={**_clean_env(), "PYTHONPATH": str(REPO)},
    ).stdout
    assert installed == checkout and json.loads(installed)["verify_cycles"] > 0

    # the study's accounting alone (the simulator beside it would time table4's 16 points on
    # the compiler, minutes on 2 cores): the golden table from the wheel's data
    run_installed(venv, tmp_path, "reproduce", "table4", "--engine", "analytic", "--out", "out")
    got = pd.read_csv(tmp_path / "out" / "table4.csv")
    want = pd.read_csv(GOLDEN / "table4.csv")
    assert_frames_close(got, want, "table4")
    # the numba kernel, compiled (or loaded) by the installed package
    fast = run_installed(venv, tmp_path, *SIMULATE[:-4], "--engine", "fast", "--format",
                         "json").stdout
    assert json.loads(fast)["engine"] == "fast" and json.loads(fast)["verify_cycles"] > 0

    # nothing was written into the installed package (the numba kernel ran): files
    # pip did not install would outlive `pip uninstall` and hide a later editable install
    package = Path(where).parent
    (record,) = package.parent.glob("fpgasim-*.dist-info/RECORD")
    installed = {line.split(",")[0] for line in record.read_text().splitlines()}
    extra = [p.relative_to(package.parent).as_posix() for p in package.rglob("*")
             if p.is_file() and p.suffix != ".pyc"]
    assert [p for p in extra if p not in installed] == []


@pytest.mark.slow
def test_installed_wheel_runs_the_tutorial(venv: Path, tmp_path: Path) -> None:
    """docs/tutorial.md end to end with the wheel's `fpgasim`, in an empty folder holding
    only the board file the tutorial writes (no checkout, no FPGASIM_HOME)."""
    tutorial = read_tutorial()
    write_files(tutorial, tmp_path)
    env = {**_clean_env(), "FPGASIM_CACHE_DIR": str(tmp_path / ".cache")}
    assert tutorial.steps
    for step in tutorial.steps:
        proc = run_step(step, tmp_path, [str(venv / "bin" / "fpgasim")], env)
        assert proc.returncode == 0, (step.command, proc.stderr)
        assert missing_key_lines(step, proc.stdout) == [], step.command
