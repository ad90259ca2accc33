"""Hand-number audit of the positioning and communication sensors (USBL, LBL, acoustic and optical modems) and
the current fields, on geometries the other tests do not use."""

from __future__ import annotations

import numpy as np
import pytest

from oceansim_py.sensors.acoustic_modem import AcousticModem, AcousticModemConfig
from oceansim_py.sensors.modem_common import EVENT_COLUMNS

COL = {name: k for k, name in enumerate(EVENT_COLUMNS)}
STILL = np.array([0.0, 0.0, -10.0, 0.0, 0.0, 0.0, 1.0])


def _one_message_modem(distance: float, send: float, header_bits: float) -> AcousticModem:
    return AcousticModem(AcousticModemConfig(node_positions=((distance, 0.0, -10.0),), header_bits=header_bits,
                                             messages=((send, "topside", "vehicle", "0x"),), bit_rate=640.0,
                                             noise=False))


@pytest.mark.parametrize("split", [None, 3, 4])
def test_modem_event_on_a_sample_boundary_lands_in_exactly_that_sample(split) -> None:
    # Samples every 0.1 s (t_m = m / 10). Message A: sent at 0 s over 300 m at 1500 m/s (0.2 s) with 64 header bits
    # at 640 bit/s (0.1 s): received at 0.2 + 0.1 = 0.30000000000000004 in binary, i.e. at 0.3 s -> sample 3.
    # Message B: sent at 0.1 s over 150 m (0.1 s), no header: received at exactly 0.2 s -> sample 2 only.
    # (Before the fix A fell in no sample: 0.30000000000000004 > t_3 = 0.3 and <= t_4 - 0.1 = 0.30000000000000004;
    # and B fell in samples 2 and 3: 0.2 > t_3 - 0.1 = 0.19999999999999998.)
    times = np.arange(10) / 10.0
    for modem, expected in ((_one_message_modem(300.0, 0.0, 64.0), 3), (_one_message_modem(150.0, 0.1, 0.0), 2)):
        if split is None:
            events = modem.measure(STILL, times, rate_hz=10.0).events
        else:
            events = (modem.measure(STILL, times[:split], rate_hz=10.0).events
                      + modem.measure(STILL, times[split:], frame_index=split, rate_hz=10.0).events)
        counts = [len(e) for e in events]
        assert counts == [int(m == expected) for m in range(10)]


def test_modem_events_follow_a_pose_array_changed_in_place() -> None:
    # Topside 1500 m away at 1500 m/s: the first bit arrives 1.0 s after sending; move the vehicle (the same array,
    # changed in place) to 750 m from it: 0.5 s. (Before the fix the cached 1.0 s came back.)
    modem = AcousticModem(AcousticModemConfig(node_positions=((1500.0, 0.0, -10.0),), noise=False,
                                              messages=((0.0, "topside", "vehicle", "hi"),)))
    pose = STILL.copy()
    assert modem.events(pose)[0][0, COL["arrival_time"]] == pytest.approx(1.0)
    pose[0] = 750.0
    assert modem.events(pose)[0][0, COL["arrival_time"]] == pytest.approx(0.5)


def test_usbl_yawed_and_pitched_head_bearing_elevation_and_two_way_time() -> None:
    from oceansim_py.poses import pose_from_euler
    from oceansim_py.sensors.usbl import USBL, USBLConfig

    # Head at (0, 0, -10) with yaw 90 deg and pitch 30 deg (Z-Y-X, FLU: positive pitch tips the nose down). Its
    # axes in the world: x = Rz(90) Ry(30) e_x = (0, cos 30, -sin 30), y = (-1, 0, 0), z = (0, sin 30, cos 30).
    # Beacon at (5, 20, -30): rel = (5, 20, -20), |rel| = sqrt(825) = 28.7228 m; in the sensor frame
    # s = (20 cos 30 + 20 sin 30, -5, 20 sin 30 - 20 cos 30) = (27.3205, -5, -7.3205). Bearing atan2(-s_y, s_x)
    # = atan2(5, 27.3205) = +10.37 deg (starboard: the head looks north, +x is east), elevation asin(-7.3205 /
    # 28.7228) = -14.77 deg. Two-way time 2 x 28.7228 / 1500 = 38.297 ms; with a 0.5 s turn-around sent at 3 s the
    # reply arrives at 3.538297 s; range c T / 2 = 28.7228 m.
    head = pose_from_euler(0.0, 0.0, -10.0, 0.0, 30.0, 90.0)
    cfg = USBLConfig(beacon_positions=((5.0, 20.0, -30.0),), turnaround_delay=0.5, noise=False)
    r = USBL(cfg).measure(head, times=[3.0])
    c30, s30 = np.cos(np.radians(30.0)), np.sin(np.radians(30.0))
    s = np.array([20 * c30 + 20 * s30, -5.0, 20 * s30 - 20 * c30])
    rng = np.sqrt(825.0)
    assert r.slant_range[0, 0] == pytest.approx(rng, abs=1e-9)
    assert np.degrees(r.bearing[0, 0]) == pytest.approx(10.3711, abs=1e-3)
    assert np.degrees(r.elevation[0, 0]) == pytest.approx(-14.7657, abs=1e-3)
    np.testing.assert_allclose(r.position[0, 0], s, atol=1e-9)
    assert r.travel_time[0, 0] == pytest.approx(2 * rng / 1500.0, abs=1e-12)
    assert r.reply_time[0, 0] == pytest.approx(3.0 + 2 * rng / 1500.0 + 0.5, abs=1e-12)


def test_lbl_ranges_trilaterate_the_vehicle_and_usbl_position_noise_grows_with_range() -> None:
    from oceansim_py.sensors.lbl import LBL, LBLConfig
    from oceansim_py.sensors.usbl import USBL, USBLConfig

    # Four beacons (one 5 m shallower so the depth is observable), vehicle at (60, 80, -10): r_1 = sqrt(60^2 +
    # 80^2 + 40^2) = 107.7033 m. Differencing r_i^2 - r_1^2 = |b_i|^2 - |b_1|^2 - 2 (b_i - b_1).p gives three linear
    # equations whose solution is the vehicle's position.
    beacons = np.array([[0.0, 0.0, -50.0], [200.0, 0.0, -50.0], [0.0, 200.0, -50.0], [200.0, 200.0, -45.0]])
    truth = np.array([60.0, 80.0, -10.0])
    cfg = LBLConfig(beacon_ids=(1, 2, 3, 4), beacon_positions=tuple(map(tuple, beacons)), noise=False)
    r = LBL(cfg).measure(np.array([*truth, 0.0, 0.0, 0.0, 1.0])).range[0]
    assert r[0] == pytest.approx(np.sqrt(11600.0), abs=1e-9)
    a = 2.0 * (beacons[1:] - beacons[0])
    b = (beacons[1:] ** 2).sum(1) - (beacons[0] ** 2).sum() - r[1:] ** 2 + r[0] ** 2
    np.testing.assert_allclose(np.linalg.solve(a, b), truth, atol=1e-6)
    # USBL direction-cosine noise sigma_s = lambda sigma_phi / (2 pi d) = 0.06 m x (2 deg = 0.034907 rad) /
    # (2 pi 0.03 m) = 0.011111, the same at any range: the across-track position error at boresight is range x
    # sigma_s, 0.5556 m at 50 m and 5.556 m at 500 m (4000 pings, a few % sampling error).
    poses = np.tile(np.array([0.0, 0.0, -10.0, 0.0, 0.0, 0.0, 1.0]), (4000, 1))
    for distance in (50.0, 500.0):
        usbl = USBL(USBLConfig(beacon_positions=((distance, 0.0, -10.0),), phase_sigma=2.0, range_sigma=0.0))
        lateral = usbl.measure(poses).position[:, 0, 1]
        assert np.std(lateral) == pytest.approx(distance * 0.0111111, rel=0.05)


def test_modem_link_budget_of_a_preset_and_optical_beer_lambert_in_green() -> None:
    from oceansim_py.sensors.optical_modem import OpticalModemConfig

    # EvoLogics S2C R 18/34: 26 kHz, B = 16 kHz, R = 13.9 kbit/s, SL 184 dB, NL 50 dB, 10 dB implementation loss.
    # Thorp at 26 kHz (f^2 = 676): 0.11 x 676 / 677 + 44 x 676 / 4776 + 2.75e-4 x 676 + 0.003 = 6.5265 dB/km.
    # At 2 km: TL = 66.0206 + 13.0531 = 79.0737 dB; noise in band 50 + 42.0412 = 92.0412 dB; SNR = 12.8851 dB;
    # Eb/N0 = 12.8851 + 10 log10(16000 / 13900) - 10 = 3.4962 dB; BER = erfc(sqrt(10^0.34962)) / 2 = 0.017212.
    cfg = AcousticModemConfig.preset("evologics_s2c_r_18_34")
    eb_n0 = float(cfg.eb_n0_db(2000.0))
    assert eb_n0 == pytest.approx(3.4962, abs=1e-3)
    assert float(cfg.packet_error_rate(eb_n0, 1)) == pytest.approx(0.017212, rel=1e-4)
    assert float(cfg.packet_error_rate(eb_n0, 100)) == pytest.approx(1 - (1 - 0.017212) ** 100, rel=1e-4)
    # BlueComm 200 class, green in Jerlov I: beta = mean over 525/550/575 nm of a + b = (0.04805 + 0.0637 +
    # 0.08343) / 3 = 0.06506 /m. Margin 20 log10(180 / r) - 10 log10(e) beta r: +7.087 dB at 30 m, -23.150 dB at
    # 100 m.
    opt = OpticalModemConfig.preset("bluecomm_200")
    assert opt.attenuation() == pytest.approx(0.06506, abs=1e-6)
    np.testing.assert_allclose(opt.margin_db([30.0, 100.0]), [7.0867, -23.1496], atol=1e-3)


def test_current_profile_at_a_depth_and_grid_trilinear(tmp_path) -> None:
    from oceansim_py.sensors.currents import current_field

    # Profile (depth 0 m: 1, 0, 0; depth 20 m: 0, 0.5, 0) under a surface at z = 2: a point at z = -8 lies 10 m
    # deep -> halfway: (0.5, 0.25, 0); above the first row / below the last the end rows hold.
    prof = current_field("profile", (0, 0, 0), ((0.0, 1.0, 0.0, 0.0), (20.0, 0.0, 0.5, 0.0)), "", "test")
    np.testing.assert_allclose(prof.at([[0, 0, -8.0], [0, 0, 5.0], [0, 0, -40.0]], 2.0),
                               [[0.5, 0.25, 0.0], [1.0, 0.0, 0.0], [0.0, 0.5, 0.0]], atol=1e-12)
    # A 2 x 2 x 2 grid of u = x + 2 y + 3 z (v = 1, w = -z): trilinear is exact for it; at (0.5, 2.5, -1) u =
    # 0.5 + 5 - 3 = 2.5; outside, clamped to the nearest face: (3, 2.5, -1) -> x = 1 -> u = 3.
    x, y, z = np.array([0.0, 1.0]), np.array([2.0, 4.0]), np.array([-2.0, 0.0])
    gx, gy, gz = np.meshgrid(x, y, z, indexing="ij")
    path = tmp_path / "c.npz"
    np.savez(path, x=x, y=y, z=z, u=gx + 2 * gy + 3 * gz, v=np.ones_like(gx), w=-gz)
    grid = current_field("grid", (0, 0, 0), (), str(path), "test")
    np.testing.assert_allclose(grid.at([[0.5, 2.5, -1.0], [3.0, 2.5, -1.0]]), [[2.5, 1.0, 1.0], [3.0, 1.0, 1.0]],
                               atol=1e-12)


def test_francois_garrison_at_4_degrees_35_psu_ph_8_and_1000_m() -> None:
    from oceansim_py.sensors.acoustic.absorption import francois_garrison, francois_garrison_terms

    # c = 1412 + 3.21 x 4 + 1.19 x 35 + 0.0167 x 1000 = 1483.19 m/s.
    # Boric: A1 = 8.86 / c x 10^(0.78 x 8 - 5) = 0.10381; f1 = 2.8 x 10^(4 - 1245 / 277) = 0.8966 kHz.
    # MgSO4: A2 = 21.44 x 35 / c x 1.1 = 0.55653; P2 = 1 - 0.137 + 0.0062 = 0.8692; f2 = 8.17 x 10^(8 - 1990 / 277)
    # = 53.48 kHz. Water: A3 = 4.937e-4 - 1.036e-4 + 1.458e-5 - 9.6e-7 = 4.0372e-4; P3 = 1 - 0.0383 + 0.00049.
    # At 10 kHz: 0.0923 + 0.8739 + 0.0388 = 1.005 dB/km; at 100 kHz: 0.0931 + 20.11 + 3.885 = 24.09 dB/km; at
    # 1 MHz: 0.0931 + 25.79 + 388.45 = 414.3 dB/km (the same formula as the Acoustics Toolbox's franc_garr.m,
    # checked there against Francois & Garrison's Table IV).
    terms = francois_garrison_terms(10e3, 4.0, 35.0, 1000.0, 8.0)
    np.testing.assert_allclose(terms, [0.09233, 0.87412, 0.038845], rtol=2e-4)
    for f, expected_db_per_km in ((10e3, 1.0053), (100e3, 24.092), (1e6, 414.34)):
        assert francois_garrison(f, 4.0, 35.0, 1000.0, 8.0) * 1000.0 == pytest.approx(expected_db_per_km, rel=2e-4)


@pytest.mark.parametrize("pose, match", [
    (np.array([0.0, 0.0, -10.0]), r"AcousticModem\.measure pose: expected shape"),
    (np.array([0.0, 0.0, np.nan, 0.0, 0.0, 0.0, 1.0]), r"AcousticModem\.measure pose: pose 0 holds a non-finite"),
    (np.array([0.0, 0.0, -10.0, 0.0, 0.0, 0.0, 0.0]), r"AcousticModem\.measure pose: pose 0 has a quaternion"),
    (np.zeros((2, 7)) + [0, 0, 0, 0, 0, 0, 1], r"AcousticModem\.measure: got 2 poses; a stationary modem takes one"),
])
def test_modem_refuses_a_bad_stationary_pose(pose, match) -> None:
    # Before: a NaN position gave an empty event table (the message vanished), a (3,) pose a bare numpy ValueError,
    # a zero quaternion was accepted, and of several poses the first was used silently.
    from oceansim_py.errors import ConfigError

    modem = AcousticModem(AcousticModemConfig(messages=((0.0, "topside", "vehicle", "hi"),)))
    with pytest.raises(ConfigError, match=match):
        modem.measure(pose, [1.0])


@pytest.mark.parametrize("text, match", [
    ("", r"is empty; it needs the header x,y,z,u,v,w"),
    ("x,y,z,u,v,w\n1,2,3,4,5,abc\n", r"data row 1: w is not a finite number"),
])
def test_current_csv_grid_errors_name_the_field_and_the_problem(tmp_path, text, match) -> None:
    # Before: an empty file raised a bare IndexError (and a numpy warning); a non-number read as NaN and was
    # reported as "a grid node appears twice and another is missing".
    import warnings

    from oceansim_py.errors import ConfigError
    from oceansim_py.sensors.currents import current_field

    path = tmp_path / "current.csv"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ConfigError, match=rf"DVLConfig\.current_file: current file .*current\.csv: {match}"):
            current_field("grid", (0, 0, 0), (), str(path), "DVLConfig")


def test_modem_arrival_at_a_moving_receiver_and_usbl_timestamps_of_a_trajectory() -> None:
    from oceansim_py.sensors.usbl import USBL, USBLConfig
    from oceansim_py.trajectory import Trajectory

    # The vehicle starts at x = 0 and moves at 2 m/s towards a topside modem at x = 1500 m (same depth); a message
    # sent by the topside at t = 0 meets it when 1500 - 2 t = 1500 t, t = 1500 / 1502 = 0.998668 s, 1498.0027 m
    # from the sender. 8 + 64 bits at 100 bit/s: received 0.72 s later.
    start, end = [0.0, 0.0, -10.0, 0.0, 0.0, 0.0, 1.0], [20.0, 0.0, -10.0, 0.0, 0.0, 0.0, 1.0]
    traj = Trajectory(np.array([0.0, 10.0]), np.array([start, end]))
    modem = AcousticModem(AcousticModemConfig(node_positions=((1500.0, 0.0, -10.0),), noise=False,
                                              messages=((0.0, "topside", "vehicle", "k"),)))
    e = modem.events(traj)[0][0]
    assert e[COL["arrival_time"]] == pytest.approx(1500.0 / 1502.0, abs=1e-9)
    assert e[COL["distance"]] == pytest.approx(1500.0 * 1500.0 / 1502.0, abs=1e-6)
    assert e[COL["receive_time"]] - e[COL["arrival_time"]] == pytest.approx(0.72)
    # A USBL measuring the Trajectory at its 0.5 Hz rate pings at t = 0, 2, ..., 10 s; a beacon 150 m ahead of the
    # start at ping t: outbound 150 - 2 t, the reply meets the head at t_rx with 150 - 2 t_rx = 1500 (t_rx - t_b).
    usbl = USBL(USBLConfig(rate=0.5, beacon_positions=((150.0, 0.0, -10.0),), noise=False))
    r = usbl.measure(traj)
    np.testing.assert_allclose(r.times, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0])
    out = 150.0 - 2.0 * r.times
    t_beacon = r.times + out / 1500.0
    t_rx = (150.0 + 1500.0 * t_beacon) / 1502.0
    t_rx[-1] = t_beacon[-1] + out[-1] / 1500.0       # after the trajectory's end the head is held at its last pose
    np.testing.assert_allclose(r.reply_time[:, 0], t_rx, atol=1e-12)
