"""`python -m fpgasim` runs the CLI."""

from fpgasim.cli import main

main()
