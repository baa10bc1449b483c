"""The ports the tests use under pytest-xdist (tests/ports.py): nobody answers on a refused port, and a reserved
port is handed to one holder at a time and lies where the kernel never hands out ports by itself."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from ports import refused_port, reserved_ports


def test_a_refused_port_refuses_and_stays_taken() -> None:
    port = refused_port()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    with socket.socket() as other, pytest.raises(OSError):
        other.bind(("127.0.0.1", port))  # nobody else can take it and start answering there


def test_a_reserved_port_lies_below_the_ephemeral_range_and_is_free_to_bind() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    with reserved_ports(3) as mine:
        assert len(set(mine)) == 3 and all(port < low for port in mine)
        with socket.socket() as server:
            server.bind(("127.0.0.1", mine[0]))  # the holder's server can bind it


def test_a_reserved_port_is_held_by_one_holder_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ports._SPAN", 1)  # one candidate port: a second holder can only get it if the lock fails
    held = reserved_ports(1)
    try:
        held.__enter__()
    except RuntimeError:
        pytest.skip("the one candidate port is held elsewhere on this machine")
    try:
        with pytest.raises(RuntimeError, match="no 1 free ports"), reserved_ports(1):
            pass
    finally:
        held.__exit__(None, None, None)
    with reserved_ports(1):  # released: the next holder gets it
        pass
