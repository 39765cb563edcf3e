"""dataflow stage of fpgasim (see docs/)."""
