"""Configuration: pydantic schemas and loaders of board, workload and experiment files."""

from fpgasim.config.loader import (
    available,
    data_root,
    load_algorithm,
    load_board,
    load_model,
    resolve,
)
from fpgasim.config.schema import Algorithm, Board, TargetModel

__all__ = [
    "Algorithm",
    "Board",
    "TargetModel",
    "available",
    "data_root",
    "load_algorithm",
    "load_board",
    "load_model",
    "resolve",
]
