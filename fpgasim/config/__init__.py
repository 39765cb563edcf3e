"""Configuration: schemas and loaders of FPGA, design, board, workload and experiment files."""

from fpgasim.config.board import Board
from fpgasim.config.board_loader import board_of, load_board, load_design, load_fpga
from fpgasim.config.design import Design, Recipe
from fpgasim.config.fpga import Fpga
from fpgasim.config.loader import (
    available,
    data_root,
    load_algorithm,
    load_model,
    resolve,
)
from fpgasim.config.schema import Algorithm, TargetModel

__all__ = [
    "Algorithm",
    "Board",
    "Design",
    "Fpga",
    "Recipe",
    "TargetModel",
    "available",
    "board_of",
    "data_root",
    "load_algorithm",
    "load_board",
    "load_design",
    "load_fpga",
    "load_model",
    "resolve",
]
