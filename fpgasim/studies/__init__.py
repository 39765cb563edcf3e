"""Studies over many boards or algorithms: explore, generate, the algorithm comparison."""

