"""analysis stage of fpgasim (see docs/)."""
