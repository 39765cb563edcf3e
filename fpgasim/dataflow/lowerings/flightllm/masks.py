"""Prefill attention masks as FlightLLM's compiler sees them: per-layer sums and stand-ins.

FlightLLM's LLaMA2-7B masks are 32 heads x 32 x 32 blocks of 64 tokens. The files are not
public here; docs/flightllm-model.md §4.9 gives per-layer sums that fix every instruction count
and busy time: S_i (active blocks of mask row i over all heads), V_t (blocks active in row
2t or 2t+1) and C(n) (maximal runs plus partly-masked rows over rows i < n). Head h gets
the count-level stand-in a_{h,i} = S_i // H + [h < S_i mod H] (likewise u_{h,t} from V_t).
`causal` is the dense causal mask in the same form (S_i = H (i+1), V_t = H (2t+2),
C(n) = H (2n - 1)).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fpgasim.bounded import memoised
from fpgasim.config.loader import MASK_DIR, data_root, load_file
from fpgasim.config.schema import MaskTable
from fpgasim.errors import ConfigError


@dataclass(frozen=True)
class LayerMask:
    """Sums of one layer's masks over its heads (64-token blocks)."""

    S: tuple[int, ...]  # per mask row i
    V: tuple[int, ...]  # per tile t (rows 2t, 2t+1)
    C: tuple[int, ...]  # C(n) for n = 2, 4, ..., 2 len(C)

    def rows(self) -> int:
        """Row blocks of the mask."""
        return len(self.S)

    def c_of(self, n: int) -> int:
        """C(n) for an even n."""
        return self.C[n // 2 - 1]


@dataclass(frozen=True)
class MaskSet:
    """Masks of every layer (or one causal mask for all) and the heads they sum over."""

    name: str
    heads: int
    block_tokens: int
    layers: tuple[LayerMask, ...]

    def layer(self, index: int) -> LayerMask:
        """The mask of decoder layer `index` (one mask shared by all layers, or its own)."""
        return self.layers[0] if len(self.layers) == 1 else self.layers[index]


def causal(heads: int, rows: int, block_tokens: int, rows_per_tile: int = 2) -> MaskSet:
    """The dense causal mask over `rows` blocks, as sums; V per tile of `rows_per_tile`
    mask rows (2 with FlightLLM's 128-row tiles of 64-token blocks)."""
    S = tuple(heads * (i + 1) for i in range(rows))
    V = tuple(heads * min(rows, (t + 1) * rows_per_tile)
              for t in range(-(-rows // rows_per_tile)))
    C = tuple(heads * (2 * n - 1) for n in range(2, rows + 1, 2))
    return MaskSet("causal", heads, block_tokens, (LayerMask(S, V, C),))


@memoised("flightllm.mask_tables", owner="fpgasim.dataflow.lowerings.flightllm.masks",
          keys="mask table name", budget=16,
          why="a packaged YAML file, read once per process instead of once per pass")
def load(name: str) -> MaskSet:
    """A mask table from workloads/masks/<name>.yaml (see the file's header for the fields)."""
    path = Path(data_root()) / MASK_DIR / f"{name}.yaml"
    if not path.is_file():
        names = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise ConfigError(
            "model flightllm", "prefill_mask", name, f"'causal' or one of {names} ({MASK_DIR}/)"
        )
    table = load_file(MaskTable, path)
    layers = tuple(LayerMask(tuple(x.S), tuple(x.V), tuple(x.C)) for x in table.layers)
    return MaskSet(name, table.heads, table.mask_block, layers)


def mask_set(name: str, heads: int, rows: int, block_tokens: int,
             rows_per_tile: int = 2) -> MaskSet:
    """The named mask table, or the dense causal mask when name is 'causal'."""
    if name == "causal":
        return causal(heads, rows, block_tokens, rows_per_tile)
    return load(name)


def spread(total: int, heads: int, h: int) -> int:
    """Head h's share of a per-layer sum: total // heads + [h < total mod heads]."""
    return total // heads + (1 if h < total % heads else 0)
