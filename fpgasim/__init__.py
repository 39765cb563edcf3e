"""fpgasim: cycle-level simulation and solving of tree speculative decoding on FPGA accelerators."""

__version__ = "0.1.0"
