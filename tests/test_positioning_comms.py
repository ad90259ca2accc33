"""Acoustic positioning (USBL, LBL; issue 17 item 2) and communication (acoustic and optical modems; item 3)
against hand numbers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import trimesh

from oceansim_py.errors import ConfigError
from oceansim_py.poses import pose_from_euler
from oceansim_py.sensors.acoustic_modem import AcousticModem, AcousticModemConfig, thorp_absorption_db_per_km
from oceansim_py.sensors.lbl import LBL, LBLConfig
from oceansim_py.sensors.modem_common import (
    COLLISION, DELIVERED, EVENT_COLUMNS, HALF_DUPLEX, LOST, OCCLUDED, OUT_OF_CONE, OUT_OF_RANGE, REASONS, TOO_WEAK,
    decode_events,
)
from oceansim_py.sensors.optical_modem import OpticalModem, OpticalModemConfig
from oceansim_py.sensors.usbl import USBL, USBLConfig
from oceansim_py.trajectory import Trajectory

ORIGIN = np.array([0.0, 0.0, -10.0, 0.0, 0.0, 0.0, 1.0])
COL = {name: k for k, name in enumerate(EVENT_COLUMNS)}


@pytest.fixture(scope="module")
def wall_scene(tmp_path_factory):
    """A 40 m square wall in the plane x = 5 m."""
    from oceansim_py.scene import load_scene

    path = tmp_path_factory.mktemp("wall") / "wall.obj"
    trimesh.Trimesh([[5, -20, -30], [5, 20, -30], [5, 20, 10], [5, -20, 10]], [[0, 2, 1], [0, 3, 2]]).export(path)
    return load_scene(str(path), device="cpu")


# --- USBL ----------------------------------------------------------------------------------------------------------
def test_usbl_range_is_two_way_time_times_c_over_two_and_angles_by_hand() -> None:
    cfg = USBLConfig(beacon_ids=(7, 8), beacon_positions=((100.0, 0.0, -10.0), (60.0, -80.0, -10.0)),
                     turnaround_delay=0.5, noise=False)
    r = USBL(cfg).measure(ORIGIN, times=[3.0])
    np.testing.assert_allclose(r.slant_range[0], [100.0, 100.0], atol=1e-9)
    np.testing.assert_allclose(r.slant_range, r.travel_time * 1500.0 / 2.0, atol=1e-12)
    np.testing.assert_allclose(r.travel_time[0], [200 / 1500, 200 / 1500], atol=1e-12)
    np.testing.assert_allclose(r.reply_time[0], 3.0 + 200 / 1500 + 0.5, atol=1e-12)
    # beacon 8 is 80 m to starboard (-y) and 60 m ahead: bearing +atan2(80, 60) = 53.13 deg, level
    np.testing.assert_allclose(np.degrees(r.bearing[0]), [0.0, math.degrees(math.atan2(80, 60))], atol=1e-9)
    np.testing.assert_allclose(r.elevation[0], [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(r.position[0], [[100, 0, 0], [60, -80, 0]], atol=1e-9)
    # the beacon 20 m below a head pitched 90 deg down (looking at the seabed) is on its boresight
    down = USBL(cfg.replace(beacon_positions=((0.0, 0.0, -30.0), (0.0, 0.0, -30.0))))
    rd = down.measure(pose_from_euler(0, 0, -10, 0, 90, 0), times=[0.0])
    np.testing.assert_allclose(rd.bearing[0], 0.0, atol=1e-9)
    np.testing.assert_allclose(rd.elevation[0], 0.0, atol=1e-9)
    np.testing.assert_allclose(rd.slant_range[0], 20.0, atol=1e-9)


def test_usbl_angle_noise_is_the_array_model_and_grows_off_boresight() -> None:
    # 25 kHz, lambda = 0.06 m, d = 0.03 m, phase noise 2 deg: sigma_s = 0.06 * 0.0349 / (2 pi 0.03) = 0.01111
    cfg = USBLConfig(beacon_ids=(1, 2), beacon_positions=((100.0, 0.0, -10.0), (50.0, -86.6025, -10.0)),
                     frequency=25000.0, element_spacing=0.03, phase_sigma=2.0, range_sigma=0.0, seed=5)
    sigma_s = 0.06 * math.radians(2.0) / (2 * math.pi * 0.03)
    assert cfg.direction_cosine_sigma() == pytest.approx(sigma_s)
    r = USBL(cfg).measure(np.tile(ORIGIN, (4000, 1)), times=np.arange(4000.0))
    err = r.bearing - r.true_bearing
    # at boresight the bearing error is sigma_s; 60 deg off boresight sigma_s / cos 60 = 2 sigma_s
    assert err[:, 0].std() == pytest.approx(sigma_s, rel=0.06)
    assert err[:, 1].std() == pytest.approx(sigma_s / math.cos(math.radians(60)), rel=0.06)
    assert abs(err[:, 0].mean()) < 4 * sigma_s / math.sqrt(4000)
    np.testing.assert_allclose(r.slant_range, 100.0, atol=1e-4)   # range_sigma 0: exact (to the 4-digit position)


def test_usbl_range_noise_outliers_and_counter_based_batches() -> None:
    cfg = USBLConfig(beacon_positions=((100.0, 0.0, -10.0),), range_sigma=0.3, outlier_probability=0.2,
                     outlier_range=15.0, seed=9)
    r = USBL(cfg).measure(np.tile(ORIGIN, (3000, 1)), times=np.arange(3000.0))
    out = r.outlier[:, 0]
    assert out.mean() == pytest.approx(0.2, abs=0.03)
    clean = r.slant_range[~out, 0] - 100.0
    assert clean.std() == pytest.approx(0.3, rel=0.06)
    extra = r.slant_range[out, 0] - 100.0
    assert extra.min() > -1.5 and extra.max() < 16.5 and extra.mean() == pytest.approx(7.5, abs=1.0)
    part = USBL(cfg).measure(np.tile(ORIGIN, (10, 1)), times=np.arange(2000.0, 2010.0), frame_index=2000)
    np.testing.assert_array_equal(part.slant_range, r.slant_range[2000:2010])
    np.testing.assert_array_equal(part.bearing, r.bearing[2000:2010])


def test_an_occluded_beacon_gives_no_fix(wall_scene) -> None:
    cfg = USBLConfig(beacon_ids=(1, 2), beacon_positions=((10.0, 0.0, -10.0), (3.0, 1.0, -10.0)), noise=False)
    r = USBL(cfg).measure(ORIGIN, times=[0.0], scene=wall_scene)
    assert r.fix[0].tolist() == [False, True] and r.occluded[0].tolist() == [True, False]
    assert np.isnan(r.slant_range[0, 0]) and np.isnan(r.bearing[0, 0]) and np.isnan(r.position[0, 0]).all()
    assert r.slant_range[0, 1] == pytest.approx(math.sqrt(10.0))
    lbl = LBL(LBLConfig(beacon_ids=(1, 2), beacon_positions=((10.0, 0.0, -10.0), (3.0, 1.0, -10.0)),
                        noise=False)).measure(ORIGIN, times=[0.0], scene=wall_scene)
    assert lbl.fix[0].tolist() == [False, True] and np.isnan(lbl.range[0, 0])


def test_usbl_coverage_and_range_limits() -> None:
    cfg = USBLConfig(beacon_ids=(1, 2, 3), beacon_positions=((-50.0, 0.0, -10.0), (30.0, 40.0, -10.0),
                                                             (2000.0, 0.0, -10.0)), coverage=60.0, noise=False)
    r = USBL(cfg).measure(ORIGIN, times=[0.0])
    # behind the head; 53.1 deg off boresight (inside 60); beyond max_range 1000 m
    assert r.fix[0].tolist() == [False, True, False]


def test_usbl_on_a_moving_vehicle_solves_the_reply_time() -> None:
    traj = Trajectory.transect(start=[0.0, 0.0, -10.0], end=[200.0, 0.0, -10.0], speed=3.0)
    beacon = np.array([150.0, 40.0, -30.0])
    cfg = USBLConfig(beacon_positions=(tuple(beacon),), turnaround_delay=0.25, noise=False)
    t0 = np.array([0.0, 10.0, 20.0])
    r = USBL(cfg).measure(traj, times=t0)
    p0 = traj.at(t0)[:, :3]
    r1 = np.linalg.norm(beacon - p0, axis=1)
    t_rx = r.reply_time[:, 0]
    r2 = np.linalg.norm(beacon - traj.at(t_rx)[:, :3], axis=1)
    np.testing.assert_allclose(t_rx, t0 + r1 / 1500 + 0.25 + r2 / 1500, atol=1e-9)
    np.testing.assert_allclose(r.slant_range[:, 0], (r1 + r2) / 2, atol=1e-6)
    assert (r2 < r1).all()                        # closing on the beacon during the exchange


def test_lbl_ranges_and_reply_times_to_a_baseline() -> None:
    cfg = LBLConfig(beacon_ids=(1, 2, 3), beacon_positions=((0.0, 0.0, -10.0), (300.0, 0.0, -10.0),
                                                            (0.0, 400.0, -10.0)), turnaround_delay=0.1, noise=False)
    r = LBL(cfg).measure(np.array([0.0, 0.0, -10.0, 0, 0, 0, 1]) + [0, 0, 0, 0, 0, 0, 0], times=[1.0])
    np.testing.assert_allclose(r.range[0], [0.0, 300.0, 400.0], atol=1e-9)
    np.testing.assert_allclose(r.reply_time[0], 1.0 + 0.1 + 2 * np.array([0.0, 300.0, 400.0]) / 1500, atol=1e-12)


@pytest.mark.parametrize("cls, values, field", [
    (USBLConfig, {"element_spacing": 0.05}, "element_spacing"),
    (USBLConfig, {"beacon_ids": (1, 2)}, "beacon_positions"),
    (USBLConfig, {"beacon_ids": (1, 1), "beacon_positions": ((0, 0, 0), (1, 1, 1))}, "beacon_ids"),
    (USBLConfig, {"coverage": 120.0}, "coverage"),
    (USBLConfig, {"outlier_probability": 1.5}, "outlier_probability"),
    (LBLConfig, {"beacon_positions": ((0, 0, 0), (1, 1, float("inf")), (2, 2, 2))}, r"beacon_positions\[1\]"),
    (LBLConfig, {"sound_speed": 0.0}, "sound_speed"),
])
def test_bad_positioning_configs_name_the_field(cls, values, field) -> None:
    with pytest.raises(ConfigError, match=rf"{cls.__name__}\.{field}"):
        cls(**values)


# --- acoustic modem ------------------------------------------------------------------------------------------------
def modem(messages, positions=((1000.0, 0.0, -10.0),), ids=("topside",), **kw) -> AcousticModem:
    return AcousticModem(AcousticModemConfig(node_ids=ids, node_positions=positions, messages=messages, **kw))


def test_modem_delivery_time_is_distance_over_c() -> None:
    m = modem(((2.0, "vehicle", "topside", "hi"),), bit_rate=100.0, header_bits=0.0, noise=False)
    events, payloads = m.events(ORIGIN)
    e = events[0]
    assert e[COL["arrival_time"]] - e[COL["send_time"]] == pytest.approx(1000.0 / 1500.0)      # 0.667 s
    assert e[COL["receive_time"]] - e[COL["arrival_time"]] == pytest.approx(16 / 100.0)        # 2 bytes at 100 bit/s
    assert e[COL["distance"]] == pytest.approx(1000.0) and e[COL["reason"]] == DELIVERED
    assert payloads == [b"hi"]


def test_modem_collisions_and_half_duplex_at_the_receiver() -> None:
    pos, ids = ((1000.0, 0.0, -10.0), (500.0, 0.0, -10.0)), ("far", "near")
    kw = dict(bit_rate=100.0, header_bits=84.0, noise=False)       # 2 bytes: 100 bits, 1 s on the air
    # far sends at 0 (at the vehicle 0.667-1.667 s), near at 0.5 (0.833-1.833 s): overlapping -> both lost
    clash = modem(((0.0, "far", "vehicle", "ab"), (0.5, "near", "vehicle", "cd")), pos, ids, **kw).events(ORIGIN)[0]
    assert clash[:, COL["reason"]].tolist() == [COLLISION, COLLISION]
    # near sends at 1.0 instead (1.333-2.333 s): still overlapping; at 1.5 (1.833-2.833 s): both delivered
    late = modem(((0.0, "far", "vehicle", "ab"), (1.5, "near", "vehicle", "cd")), pos, ids, **kw).events(ORIGIN)[0]
    assert late[:, COL["reason"]].tolist() == [DELIVERED, DELIVERED]
    # overlap at different receivers is no collision: far -> vehicle and vehicle -> near at once, but the vehicle
    # transmits 0.0-1.0 s while far's message arrives 0.667-1.667 s: half-duplex loss of that one
    duplex = modem(((0.0, "far", "vehicle", "ab"), (0.0, "vehicle", "near", "cd")), pos, ids, **kw).events(ORIGIN)[0]
    assert duplex[:, COL["reason"]].tolist() == [HALF_DUPLEX, DELIVERED]


def test_modem_link_budget_by_hand_and_loss_rising_with_range_and_noise() -> None:
    cfg = AcousticModemConfig(frequency=28000.0, bandwidth=8000.0, bit_rate=100.0, source_level=176.0,
                              noise_level=50.0, implementation_loss=10.0)
    # Thorp at 28 kHz: f^2 = 784 -> 0.11*784/785 + 44*784/4884 + 2.75e-4*784 + 0.003 = 7.3915 dB/km
    assert thorp_absorption_db_per_km(28000.0) == pytest.approx(0.10986 + 7.06306 + 0.2156 + 0.003, abs=1e-4)
    tl = 60.0 + 7.39152
    expected = 176.0 - tl - (50.0 + 10 * math.log10(8000)) + 10 * math.log10(80.0) - 10.0
    assert float(cfg.eb_n0_db(1000.0)) == pytest.approx(expected, abs=1e-3)
    assert float(cfg.packet_error_rate(expected, 1000)) < 1e-12
    # 400 messages 2 s apart at 1 km (Eb/N0 28.6 dB: none lost) and 3 km (4.3 dB: PER 0.53 without fading), and
    # at 1 km with 24 dB more noise (4.6 dB: PER 0.45)
    sched = tuple((2.0 * k, "topside", "vehicle", "0x00") for k in range(400))
    lost = {}
    for label, dist, nl in (("near", 1000.0, 50.0), ("far", 3000.0, 50.0), ("noisy", 1000.0, 74.0)):
        m = modem(sched, positions=((dist, 0.0, -10.0),), max_range=5000.0, source_level=176.0, noise_level=nl,
                  seed=2)
        reasons = m.events(ORIGIN)[0][:, COL["reason"]]
        assert set(reasons) <= {DELIVERED, LOST}
        lost[label] = float(np.mean(reasons == LOST))
    assert lost["near"] == 0.0 and 0.3 < lost["far"] < 0.75 and 0.25 < lost["noisy"] < 0.7
    far = modem(((0.0, "vehicle", "topside", "x"),), positions=((1500.0, 0.0, -10.0),), max_range=1000.0)
    assert far.events(ORIGIN)[0][0, COL["reason"]] == OUT_OF_RANGE


def test_modem_events_fall_into_exactly_one_sample_whatever_the_batch() -> None:
    sched = tuple((0.3 * k, "topside", "vehicle", f"m{k}") for k in range(20))
    m = modem(sched, positions=((300.0, 0.0, -10.0),), bit_rate=5000.0)
    times = np.arange(0.0, 8.0, 0.5)
    whole = m.measure(ORIGIN, times, rate_hz=2.0)
    ids = np.concatenate([e[:, COL["message"]] for e in whole.events])
    assert sorted(ids.tolist()) == list(range(20))
    for e, t in zip(whole.events, times):
        assert (e[:, COL["receive_time"]] <= t).all() and (e[:, COL["receive_time"]] > t - 0.5).all() or t == 0
    split = [m.measure(ORIGIN, times[a:b], frame_index=a, rate_hz=2.0) for a, b in ((0, 5), (5, 16))]
    for a, b in zip(whole.events, split[0].events + split[1].events):
        np.testing.assert_array_equal(a, b)
    sample = {"events": whole.events[3], "payload": whole.payload[3]}
    meta = {"nodes": ["vehicle", "topside"], "reasons": list(REASONS)}
    decoded = decode_events(sample, meta)
    assert [d["payload"] for d in decoded] == [f"m{int(d['message'])}".encode() for d in decoded]
    assert all(d["sender"] == "topside" and d["receiver"] == "vehicle" for d in decoded)


@pytest.mark.parametrize("values, match", [
    ({"messages": ((0.0, "vehicle", "moon", "x"),)}, r"messages\[0\]: receiver 'moon' is not a node"),
    ({"messages": ((0.0, "vehicle", "vehicle", "x"),)}, r"messages\[0\]: sender and receiver are both"),
    ({"messages": ((0.0, "vehicle", "topside", "0xzz"),)}, r"messages\[0\]: payload '0xzz' starts with 0x"),
    ({"node_ids": ("vehicle",)}, r"node_ids: node names must be distinct"),
    ({"node_positions": ()}, r"node_positions: give one"),
    ({"bit_rate": 0.0}, r"bit_rate: must be > 0"),
])
def test_bad_modem_configs_name_the_field(values, match) -> None:
    with pytest.raises(ConfigError, match=rf"AcousticModemConfig\.{match}"):
        AcousticModemConfig(**values)


# --- optical modem -------------------------------------------------------------------------------------------------
def optical(positions, directions, messages, **kw) -> OpticalModem:
    return OpticalModem(OpticalModemConfig(node_positions=positions, node_directions=directions, messages=messages,
                                           noise=False, **kw))


def test_optical_line_of_sight_cone_range_and_turbidity(wall_scene) -> None:
    msg = ((0.0, "vehicle", "dock", "0x01"),)
    facing = (-1.0, 0.0, 0.0)
    # 10 m ahead, facing the vehicle, clear water: delivered after 10 m / (c0 / 1.34) = 44.7 ns + 72 bits / 10 Mbit/s
    e = optical(((10.0, 0.0, -10.0),), (facing,), msg, water="jerlov_I").events(ORIGIN)[0][0]
    assert e[COL["reason"]] == DELIVERED
    assert e[COL["arrival_time"]] == pytest.approx(10.0 * 1.34 / 299792458.0)
    assert e[COL["receive_time"]] - e[COL["arrival_time"]] == pytest.approx(72 / 10e6)
    # same link through the wall at x = 5 m: occluded
    blocked = optical(((10.0, 0.0, -10.0),), (facing,), msg).events(ORIGIN, wall_scene)[0][0]
    assert blocked[COL["reason"]] == OCCLUDED
    # the dock looking away, or 45 deg off the vehicle's axis (cone 30 deg): out of cone
    assert optical(((10.0, 0.0, -10.0),), ((1.0, 0.0, 0.0),), msg).events(ORIGIN)[0][0, COL["reason"]] == OUT_OF_CONE
    assert optical(((10.0, 10.0, -10.0),), ((-1.0, -1.0, 0.0),), msg).events(ORIGIN)[0][0, COL["reason"]] \
        == OUT_OF_CONE
    # 20 m: fine in Jerlov I (beta 0.022 /m: margin 10 log10(60^2/20^2) - 4.343 * 0.4387 = 7.64 dB), too weak
    # in coastal 3C (beta 1.56 /m)
    clear = optical(((20.0, 0.0, -10.0),), (facing,), msg, water="jerlov_I").events(ORIGIN)[0][0]
    assert clear[COL["reason"]] == DELIVERED
    assert clear[COL["link_margin_db"]] == pytest.approx(10 * math.log10(9.0) - 10 * math.log10(math.e) * 0.021935 * 20,
                                                         abs=1e-6)
    assert optical(((20.0, 0.0, -10.0),), (facing,), msg, water="jerlov_3C").events(ORIGIN)[0][0, COL["reason"]] \
        == TOO_WEAK
    assert optical(((60.0, 0.0, -10.0),), (facing,), msg).events(ORIGIN)[0][0, COL["reason"]] == OUT_OF_RANGE


def test_bad_optical_configs_name_the_field() -> None:
    with pytest.raises(ConfigError, match=r"OpticalModemConfig\.water: unknown water type 'murky'"):
        OpticalModemConfig(water="murky")
    with pytest.raises(ConfigError, match=r"OpticalModemConfig\.node_directions\[0\]: must be 3 finite numbers"):
        OpticalModemConfig(node_directions=((0.0, 0.0, 0.0),))
    with pytest.raises(ConfigError, match=r"OpticalModemConfig\.band"):
        OpticalModemConfig(band="red")


def test_noisy_ranges_are_c_travel_time_over_two_plus_the_range_noise() -> None:
    """The schema says range = c x travel_time / 2 plus the range noise, travel_time noise-free. Hand numbers: a
    beacon 100 m ahead of a stationary head, c = 1500 m/s: T = 200 / 1500 s for every sample; 400 pings with
    range_sigma 0.1 m give range - c T / 2 of mean 0 +- 0.1 / sqrt(400) = 0.005 m and standard deviation 0.1 m
    (+- 0.1 / sqrt(2 x 399) = 0.0035 m); outlier_probability 0.25 with outlier_range 4 m adds U(0, 4) m (mean 2 m) to
    a quarter of them, flagged."""
    cfg = LBLConfig(beacon_ids=(1,), beacon_positions=((100.0, 0.0, -10.0),), range_sigma=0.1, seed=4)
    still = np.tile(ORIGIN, (400, 1))
    r = LBL(cfg).measure(still, times=np.arange(400) * 2.0)
    np.testing.assert_allclose(r.travel_time, 200.0 / 1500.0, rtol=1e-12)
    err = r.range[:, 0] - 1500.0 * r.travel_time[:, 0] / 2.0
    assert abs(err.mean()) < 4 * 0.005 and abs(err.std() - 0.1) < 4 * 0.0035
    usbl = USBL(USBLConfig(beacon_ids=(1,), beacon_positions=((100.0, 0.0, -10.0),), range_sigma=0.0,
                           outlier_probability=0.25, outlier_range=4.0, phase_sigma=0.0, seed=4))
    u = usbl.measure(still, times=np.arange(400) * 2.0)
    extra = u.slant_range[:, 0] - 1500.0 * u.travel_time[:, 0] / 2.0
    flagged = u.outlier[:, 0]
    assert np.all(extra[~flagged] == 0.0) and np.all((extra[flagged] > 0) & (extra[flagged] < 4.0))
    assert abs(flagged.mean() - 0.25) < 4 * math.sqrt(0.25 * 0.75 / 400) and abs(extra[flagged].mean() - 2.0) < 0.5


@pytest.mark.parametrize("times, rate_hz, message", [([1.0, math.nan], None, r"time 1 is nan; times must be finite"),
                                                     ([math.inf], 2.0, r"time 0 is inf; times must be finite"),
                                                     ([1.0], 0.0, r"rate_hz must be a finite number > 0"),
                                                     ([1.0], math.nan, r"rate_hz must be a finite number > 0")])
def test_modem_refuses_non_finite_times_and_rates(times, rate_hz, message) -> None:
    # Before: a NaN time fell in no sample's interval, so its events vanished without a word, and rate_hz 0 was a
    # ZeroDivisionError.
    modem = AcousticModem(AcousticModemConfig(node_positions=((150.0, 0.0, -10.0),),
                                              messages=((0.2, "vehicle", "topside", "hi"),)))
    with pytest.raises(ConfigError, match=message):
        modem.measure(ORIGIN, times, rate_hz=rate_hz)


def test_positioning_at_bare_poses_refuses_a_non_finite_time() -> None:
    with pytest.raises(ConfigError, match=r"LBL.measure: time 0 is nan; times must be finite"):
        LBL(LBLConfig()).measure(ORIGIN, times=[math.nan])
