"""The fixed points of tests/test_step_points.py: boards x models x drafters x trees x
contexts, on the engines each lowering supports (imported by the generator and the test)."""

POINTS: list[dict] = []
for board in ("u280", "v80"):
    for model in ("llama-3.1-8b", "vicuna-13b-v1.3"):
        for algorithm, verify_len, method in (
            ("longspec", 32, "width"),
            ("longspec", 64, "depth"),
            ("eagle3", 48, "width"),
            ("falcon", 40, "width"),
            ("falcon-k3", 64, "depth"),
        ):
            for context in (512, 8192):
                POINTS.append(
                    dict(board=board, model=model, algorithm=algorithm, verify_len=verify_len,
                         method=method, context=context, accepted=3,
                         engines=("analytic", "event", "fast"))
                )
for context in (512, 1536):
    POINTS.append(
        dict(board="flightllm-vhk158", model="llama2-7b-flightllm", algorithm="longspec",
             verify_len=32, method="width", context=context, accepted=2,
             engines=("event", "fast"))
    )
