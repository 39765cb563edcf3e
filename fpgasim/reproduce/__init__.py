"""reproduce stage of fpgasim (see docs/)."""
