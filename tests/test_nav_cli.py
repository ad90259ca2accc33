"""``oceansim-py render`` for the time-dependent kinds (magnetometer, USBL, LBL, modems): a straight run of pings
one --interval apart, checked against hand numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from oceansim_py.cli import main
from oceansim_py.sensors.magnetometer import MagnetometerConfig

POSE = "2,0,-5,0,0,30"     # x, y, z (m), roll, pitch, yaw (deg)


def test_magnetometer_run_reads_the_earth_field_in_the_body_frame(tmp_path: Path) -> None:
    out = tmp_path / "mag"
    assert main(["render", "magnetometer", "--scene", "tank", "--pose", POSE, "--pings", "3",
                 "--set", "noise_sigma=0", "--out", str(out)]) == 0
    field = np.load(out / "magnetometer_field.npy")
    assert field.shape == (3, 3)
    world = MagnetometerConfig(noise_sigma=0.0).earth_field()
    yaw = math.radians(30.0)
    # body FLU = R_z(yaw)^T world (level vehicle): x = cos(yaw) Bx + sin(yaw) By, y = -sin(yaw) Bx + cos(yaw) By
    body = [math.cos(yaw) * world[0] + math.sin(yaw) * world[1],
            -math.sin(yaw) * world[0] + math.cos(yaw) * world[1], world[2]]
    np.testing.assert_allclose(field, np.tile(body, (3, 1)), atol=1e-6)


def test_usbl_run_ranges_to_its_beacon(tmp_path: Path) -> None:
    out = tmp_path / "usbl"
    # a beacon inside the tank, in clear view of the head (which looks along +x)
    assert main(["render", "usbl", "--scene", "tank", "--pose", "-1,0,-1,0,0,0", "--pings", "3", "--step", "0.5,0,0",
                 "--interval", "2", "--set", "range_sigma=0", "--set", "phase_sigma=0",
                 "--set", "beacon_positions=[[4.0, 1.0, -1.0]]", "--out", str(out)]) == 0
    rng = np.load(out / "usbl_slant_range.npy").reshape(3)
    fix = np.load(out / "usbl_fix.npy").reshape(3)
    hand = [math.hypot(4.0 - x, 1.0) for x in (-1.0, -0.5, 0.0)]        # pings at x = -1, -0.5, 0 m, 2 s apart
    assert fix.all()
    # the head moves 0.25 m/s during each ~7 ms exchange: the two-way range differs from the static one by < 2 mm
    np.testing.assert_allclose(rng, hand, atol=0.002)
    travel = np.load(out / "usbl_travel_time.npy").reshape(3)
    np.testing.assert_allclose(travel, 2 * np.asarray(hand) / 1500.0, atol=3e-6)


def test_modem_run_writes_its_events_as_json(tmp_path: Path) -> None:
    out = tmp_path / "modem"
    assert main(["render", "acoustic_modem", "--scene", "tank", "--pose", "0,0,-1,0,0,0", "--pings", "3",
                 "--out", str(out)]) == 0
    events = json.loads((out / "acoustic_modem_events.json").read_text())
    assert len(events) == 3  # one (possibly empty) list of events per ping


def test_modem_events_json_is_written_atomically(tmp_path: Path, monkeypatch, capsys) -> None:
    import errno
    import os

    from oceansim_py.io import atomic

    out = tmp_path / "modem"
    args = ["render", "acoustic_modem", "--scene", "tank", "--pose", "0,0,-1,0,0,0", "--pings", "2", "--out", str(out)]
    assert main(args) == 0
    before = (out / "acoustic_modem_events.json").read_bytes()
    real = os.replace

    def no_space_for_json(src, dst):
        if str(dst).endswith(".json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", no_space_for_json)
    capsys.readouterr()
    assert main(args) == 2
    assert "acoustic_modem_events.json: could not write the events lists (No space left on device)" \
        in capsys.readouterr().err
    assert (out / "acoustic_modem_events.json").read_bytes() == before
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


def test_interval_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main(["render", "lbl", "--interval", "0", "--out", str(tmp_path / "x")])
