"""The fixed points of tests/step/test_step_points.py: boards x models x drafters x trees x
contexts, and the engines each is checked on (imported by the test; run as a script to
re-derive the golden's `compiler_rows`, see the test's docstring).

LongChat-13B is Vicuna-13B's architecture (v1.3 and v1.5 share it) with a 16K window: the
golden's rows of vicuna-13b-v1.3 (computed before model windows were enforced) are its rows.
"""

POINTS: list[dict] = []
for board in ("u280", "v80"):
    for model in ("llama-3.1-8b", "longchat-13b"):
        for algorithm, verify_len, method in (
            ("longspec", 32, "width"),
            ("longspec", 64, "depth"),
            ("eagle3", 48, "width"),
            ("falcon", 40, "width"),
            ("falcon-k3", 64, "depth"),
        ):
            for context in (512, 8192):
                # every point on `fast`; `event` (= fast everywhere, tests/engine/test_event.py
                # and test_fast.py)
                # on the U280's short-context points only: it is 15x slower
                engines = ("analytic", "fast") + (
                    ("event",) if board == "u280" and context == 512 else ())
                POINTS.append(
                    dict(board=board, model=model, algorithm=algorithm, verify_len=verify_len,
                         method=method, context=context, accepted=3, engines=engines)
                )
for context in (512, 1536):
    POINTS.append(
        dict(board="flightllm-vhk158", model="llama2-7b-flightllm", algorithm="longspec",
             verify_len=32, method="width", context=context, accepted=2,
             engines=("event", "fast"))
    )


def point_row(point: dict, engine: str) -> dict:
    """The golden row of one (point, engine): the point, its tree, verify and draft cycles."""
    from fpgasim.config import load_algorithm, load_board, load_model
    from fpgasim.engine import get_engine
    from fpgasim.simulate import Point, simulate_point
    from fpgasim.tree.draft_trees import tree_for_verify_len

    algorithm = load_algorithm(point["algorithm"])
    tree = tree_for_verify_len(algorithm, point["verify_len"], point["method"])
    out = simulate_point(get_engine(engine), Point(
        board=load_board(point["board"]), model=load_model(point["model"]),
        context=point["context"], verify_len=point["verify_len"], algorithm=algorithm,
        tree=tree, accepted=point["accepted"]))
    return {**point, "engine": engine, "tree": tree.describe(),
            "verify_cycles": out["verify_cycles"], "draft_cycles": out["draft_cycles"],
            "draft_passes": out["draft_passes"]}


def compiler_points() -> list[tuple[dict, str]]:
    """The (point, engine) pairs whose rows the one compiler gives (the study's boards on
    the cycle engines): the golden's `compiler_rows`."""
    return [(p, e) for p in POINTS if not p["board"].startswith("flightllm")
            for e in p["engines"] if e != "analytic"]


if __name__ == "__main__":  # re-derive compiler_rows: python -m tests.step_points
    import json
    import subprocess
    from pathlib import Path

    path = Path(__file__).parent / "golden" / "step_points.json"
    golden = json.loads(path.read_text())
    golden["compiler_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], text=True,
                                               capture_output=True, check=True).stdout.strip()
    golden["compiler_rows"] = [point_row(p, e) for p, e in compiler_points()]
    path.write_text(json.dumps(golden, indent=1) + "\n")
