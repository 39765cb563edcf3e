"""The cards' network ports (docs/hardware.md, "Network ports"): every shipped data sheet
states what the cited documents give, restated here from those documents; the line-code
overhead follows from the rates; docs/hardware.md's table agrees with the files; bad values
are refused in one line naming the field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from fpgasim.config import available, load_fpga
from fpgasim.config.fpga import FpgaNetwork
from fpgasim.errors import ConfigError

# (ports, connector, lanes per port, lane Gb/s, port Gb/s), restated from the documents
# fpgas/*.yaml cite: the board files and user guides for counts, the Ethernet standards the
# cages are built for (PG203: CAUI-4 = 4 x 25.78125 Gb/s; 200GBASE-R = 4 x 53.125 Gb/s PAM4).
FACTS: dict[str, tuple[int | None, str | None, int | None, float | None, float | None]] = {
    # au280 board.xml: QSFP0 and QSFP1, 4 GT lanes each; QSFP28 at 100 GbE
    "u280": (2, "QSFP28", 4, 25.78125, 100),
    # UG1289: "two 4-lane small form-factor pluggable (QSFP) connectors" (QSFP28)
    "u250": (2, "QSFP28", 4, 25.78125, 100),
    # UG1371: the Ethernet LEDs of the one QSFP module (QSFP_0_ACT, QSFP_0_STA)
    "u50": (1, "QSFP28", 4, 25.78125, 100),
    # PSI's U55C notes: QSFP0 (upper) and QSFP1 (lower), 100 Gbit/s mode
    "u55c": (2, "QSFP28", 4, 25.78125, 100),
    # AVED V80: "4xQSFP interfaces", "QSFP56: QSFP - 200G Transceivers", 4 GTM lanes per cage
    "v80": (4, "QSFP56", 4, 53.125, 200),
    # VCK190 Ethernet TRD: a QSFP28 port (J288), MRMAC 4 lanes, 100G; the cage count not read
    "vck190": (None, "QSFP28", 4, 25.78125, 100),
    # UG1611 not in the sources: nothing known
    "vhk158": (None, None, None, None, None),
}


def test_the_facts_cover_every_shipped_part() -> None:
    assert sorted(FACTS) == available("fpga")


@pytest.mark.parametrize("name", sorted(FACTS))
def test_each_data_sheet_states_the_cited_ports(name: str) -> None:
    net = load_fpga(name).network
    got = (net.ports, net.connector, net.lanes_per_port, net.lane_gbit_s, net.port_gbit_s)
    assert got == FACTS[name]


@pytest.mark.parametrize(("name", "overhead"), [
    ("u280", 2 / 66),  # 64b/66b: 100 Gb/s over 4 x 25.78125
    ("v80", 1 - (256 / 257) * (514 / 544)),  # 256b/257b transcoding + RS(544,514)
    ("vhk158", None),
])
def test_coding_overhead_follows_from_the_rates(name: str, overhead: float | None) -> None:
    net = load_fpga(name).network
    assert net.coding_overhead == (None if overhead is None else pytest.approx(overhead))


def test_a_port_carries_its_rate_in_bytes() -> None:
    """A U280 ring link: one 100 Gb/s port is 12.5 GB/s each way; the two ports DFX's ring
    uses carry 25 GB/s out of a card."""
    net = load_fpga("u280").network
    assert net.port_bytes_per_s == 12.5e9
    assert net.ports * net.port_bytes_per_s == 25e9
    assert FpgaNetwork().port_bytes_per_s is None


def test_a_data_sheet_without_ports_loads_them_as_unknown(tmp_path: Path, repo: Path) -> None:
    """User data sheets written before the field stay valid: every port fact is null."""
    data = yaml.safe_load((repo / "fpgas" / "u280.yaml").read_text())
    data.pop("network")
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(data))
    assert load_fpga(str(path)).network == FpgaNetwork()


def test_docs_table_agrees_with_the_files(repo: Path) -> None:
    """docs/hardware.md's "Network ports" table shows each part's file, row by row."""
    text = (repo / "docs" / "hardware.md").read_text()
    section = text[text.index("### Network ports"):text.index("## Designs")]
    rows = re.findall(r"^\| `(\w+)` \| (\S+) \| (\S+) \| (\S+)(?: x (\S+))? \| (\S+) \|",
                      section, re.M)
    assert sorted(r[0] for r in rows) == available("fpga")
    for name, ports, connector, lanes, lane, port in rows:
        net = load_fpga(name).network

        def shown(value: object) -> str:
            if value is None:
                return "null"
            return f"{value:.10g}" if isinstance(value, float) else str(value)

        assert (ports, connector, lanes, port) == (
            shown(net.ports), shown(net.connector), shown(net.lanes_per_port),
            shown(net.port_gbit_s)), name
        assert lane == ("" if net.lane_gbit_s is None else shown(net.lane_gbit_s)), name


@pytest.mark.parametrize(("change", "field", "allowed"), [
    ({"port_gbit_s": 400}, "network.port_gbit_s", "at most what its lanes signal"),
    ({"ports": -1}, "network.ports", "greater than or equal to 0"),
    ({"ports": 65}, "network.ports", "less than or equal to 64"),
    ({"lanes_per_port": 0}, "network.lanes_per_port", "greater than 0"),
    ({"lane_gbit_s": float("nan")}, "network.lane_gbit_s", "finite"),
    ({"connector": ""}, "network.connector", "at least 1 character"),
    ({"ports": "2"}, "network.ports", "valid integer"),
    ({"line_rate": 100}, "network.line_rate", "unknown field"),
])
def test_bad_ports_name_the_field(tmp_path: Path, repo: Path, change: dict, field: str,
                                  allowed: str) -> None:
    data = yaml.safe_load((repo / "fpgas" / "u280.yaml").read_text())
    data["network"].update(change)
    path = tmp_path / "f.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as info:
        load_fpga(str(path))
    text = str(info.value)
    assert "\n" not in text and str(path) in text, text
    assert info.value.field == field and f"{field} = " in text, text
    assert allowed in text, text
