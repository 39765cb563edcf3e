"""The shipped experiment kinds, one module each (`fpgasim.reproduce.kind` imports them all
on its first read; each calls `register_kind` with its one `ExperimentKind` record)."""
