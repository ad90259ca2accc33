"""Mechanically scanned imaging sonar (oceansim_py/sensors/msis.py): every check against a number computed by hand.

Geometry used throughout: the sonar level at the origin of its FLU frame, head angle theta (+ starboard) turns
the beam to the world direction (cos theta, -sin theta, 0); a ray of the beam at horizontal offset a and elevation
e points along (cos e cos(theta + a), -cos e sin(theta + a), sin e), so it meets a vertical wall whose inward
normal is n at D m from the sonar at D / (cos e * cos(angle between the ray's horizontal direction and -n)). The
first range bin holding a hit is floor((d_min - min_range) / dr) with d_min the nearest such distance over the
beam's rays (jitter off, so the rays are the cell centres of ``MsisConfig.ray_angles``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import make_scene, quad
from oceansim_py.cli import main
from oceansim_py.dataset import load
from oceansim_py.errors import ConfigError
from oceansim_py.sensors import registry
from oceansim_py.sensors.msis import Msis, MsisConfig, Sweep, assemble_sweeps, gradians_to_degrees
from oceansim_py.trajectory.sampling import TimedPoses

HALF = 5.0                      # the square tank's inner half-width (m): walls at x = +-5, y = +-5
SONAR_XY = (0.7, -0.4)          # off centre, so every bearing has its own wall distance


def small(**kw) -> MsisConfig:
    base = dict(model="device", frequency=750e3, horizontal_beamwidth=2.0, vertical_beamwidth=10.0,
                horizontal_rays=3, vertical_rays=4, step_angle=9.0, min_range=0.5, max_range=10.5, range_bins=400,
                bandwidth=30000.0, jitter=False, seed=3)
    base.update(kw)
    return MsisConfig(**base)


@pytest.fixture(scope="module")
def tank():
    walls = [("wall_far", quad([HALF, 0, 0], [-1, 0, 0], 12.0), 0.5),
             ("wall_back", quad([-HALF, 0, 0], [1, 0, 0], 12.0), 0.5),
             ("wall_port", quad([0, HALF, 0], [0, -1, 0], 12.0), 0.5),
             ("wall_starboard", quad([0, -HALF, 0], [0, 1, 0], 12.0), 0.5)]
    return make_scene(*walls)


@pytest.fixture(scope="module")
def far_wall():
    return make_scene(("wall", quad([6.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))


def tank_distance(x: float, y: float, psi: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Distance along rays of world heading psi (rad, + starboard = clockwise) and elevation e from (x, y) to the
    square tank's walls: the nearest wall the ray's horizontal direction (cos psi, -sin psi) runs into."""
    dx, dy = np.cos(psi), -np.sin(psi)
    with np.errstate(divide="ignore"):
        tx = np.where(dx > 0, (HALF - x) / dx, np.where(dx < 0, (-HALF - x) / dx, np.inf))
        ty = np.where(dy > 0, (HALF - y) / dy, np.where(dy < 0, (-HALF - y) / dy, np.inf))
    return np.minimum(tx, ty) / np.cos(e)


def beam_extent(cfg: MsisConfig, theta: float, distance) -> tuple[float, float]:
    """(nearest, farthest) hit over the beam's rays at head angle theta; ``distance(psi, e)`` per ray."""
    a, e = cfg.ray_angles()
    aa, ee = np.meshgrid(a, e, indexing="ij")
    d = distance(theta + aa, ee)
    return float(d.min()), float(d.max())


def first_hit_bins(out: dict) -> np.ndarray:
    hits = out["hit_count"]
    return np.array([int(np.flatnonzero(h)[0]) if h.any() else -1 for h in hits])


def expected_bin(cfg: MsisConfig, d: float) -> int:
    return int(math.floor((d - cfg.min_range) / cfg.range_resolution))


def test_scan_pattern_by_hand():
    ping360 = MsisConfig.preset("ping360")
    assert ping360.frequency == 750e3 and ping360.sector_steps == 400 == ping360.steps_per_sweep
    assert gradians_to_degrees(100) == pytest.approx(90.0) and gradians_to_degrees(400) == pytest.approx(360.0)
    # step 100 of 0.9 deg: 90 deg to starboard; step 400 is the next turn's step 0
    assert np.degrees(ping360.head_angles([0, 100, 399, 400])) == pytest.approx([0.0, 90.0, -0.9, 0.0], abs=1e-9)
    # derived period: two-way travel to 20 m at 1500 m/s (26.67 ms) + 10 ms processing; 400 steps = 14.67 s a turn
    assert ping360.step_period == pytest.approx(2 * 20.0 / 1500.0 + 0.01)
    assert ping360.sweep_period == pytest.approx(400 * (0.04 / 1.5 + 0.01))
    assert MsisConfig.preset("seaking").frequency == 675e3 and MsisConfig.preset("tritech_micron").frequency == 700e3
    # a 36 deg sector of 1.8 deg steps: n = 20, from -18 deg to +18 deg and back, reversing at the edges
    sector = small(sector_width=36.0, step_angle=1.8, ping_period=0.05)
    deg = np.degrees(sector.head_angles([0, 1, 19, 20, 21, 39, 40, 41]))
    assert deg == pytest.approx([-18.0, -16.2, 16.2, 18.0, 16.2, -16.2, -18.0, -16.2], abs=1e-9)
    assert sector.steps_per_sweep == 21 and sector.step_period == 0.05
    assert list(sector.sweep_steps(1)) == list(range(20, 41))
    assert list(sector.sweep_of([0, 20, 21, 40, 41])) == [0, 0, 1, 1, 2]


def test_every_step_of_a_full_sweep_sees_the_tank_wall_at_its_hand_range(tank):
    cfg = small()                                    # 40 steps of 9 deg, 2.5 cm bins
    x, y = SONAR_XY
    out = Msis(cfg, device="cpu").render_sweep(tank, [x, y, 0.0, 0, 0, 0, 1]).numpy()
    assert out["intensity"].shape == (40, 400) and out["step"].tolist() == list(range(40))
    firsts = first_hit_bins(out)
    for k, theta in enumerate(out["head_angle"].astype(np.float64)):
        near, far = beam_extent(cfg, theta, lambda psi, e: tank_distance(x, y, psi, e))
        want = expected_bin(cfg, near)
        frac = (near - cfg.min_range) / cfg.range_resolution - want
        ok = {want} if 0.02 < frac < 0.98 else {want - 1, want, want + 1}   # on a bin edge: float32 either way
        assert firsts[k] in ok, (k, math.degrees(theta), near, firsts[k])
        # every hit lies between the beam's nearest and farthest hand ranges
        assert np.flatnonzero(out["hit_count"][k])[-1] <= expected_bin(cfg, far) + 1
        assert out["hit_count"][k].sum() == cfg.rays_per_pose                 # every ray meets a wall
    # e.g. step 0 looks along +x: the far wall 5 - 0.7 = 4.3 m ahead; step 10 (90 deg, starboard): 5 - 0.4 = 4.6 m
    assert firsts[0] == expected_bin(cfg, 4.3 / math.cos(math.radians(1.0 / 3.0)) / math.cos(math.radians(1.25)))
    assert abs(firsts[10] - expected_bin(cfg, 4.6)) <= 1
    # the echo peaks at the wall: the clean intensity's maximum lies within the range resolution of the hit bins
    res_bins = (1500.0 / (2 * 30000.0)) / cfg.range_resolution                 # c / 2B = 2.5 cm = 1 bin
    peaks = out["clean_intensity"].argmax(axis=1)
    assert (np.abs(peaks - firsts) <= 4 * res_bins + 4).all()


def test_a_sweep_taken_while_moving_is_skewed_by_the_hand_distance(far_wall):
    """Moving at v = 2 m/s along +x towards a wall 6 m ahead, a 36 deg sector of 21 steps 50 ms apart: step k
    fires at t_k = 0.05 k from x = v t_k and sees the wall at (6 - v t_k) / cos(theta_k) (nearest ray: the
    beam's rays nearest the wall normal)."""
    cfg = small(sector_width=36.0, step_angle=1.8, ping_period=0.05, horizontal_rays=1, vertical_rays=1)
    v = 2.0
    track = TimedPoses.from_arrays([0.0, 10.0], [[0, 0, 0, 0, 0, 0, 1], [10 * v, 0, 0, 0, 0, 0, 1]])
    sonar = Msis(cfg, device="cpu")
    moving = sonar.render_sweep(far_wall, track).numpy()
    still = sonar.render_sweep(far_wall, [0, 0, 0, 0, 0, 0, 1]).numpy()
    assert moving["times"] == pytest.approx(0.05 * np.arange(21))
    got_moving, got_still = first_hit_bins(moving), first_hit_bins(still)
    for k in range(21):
        theta = math.radians(-18.0 + 1.8 * k)
        d = (6.0 - v * 0.05 * k) / math.cos(theta)
        assert got_moving[k] == expected_bin(cfg, d), (k, d)
        assert got_still[k] == expected_bin(cfg, 6.0 / math.cos(theta))
    # the edges: the still sweep is symmetric, the moving one is skewed by v t_20 / cos 18 = 2.103 m = 84 bins
    assert got_still[0] == got_still[20]
    assert got_still[20] - got_moving[20] == pytest.approx(2.0 / math.cos(math.radians(18.0)) / 0.025, abs=1)
    # the return sweep (steps 20 .. 40) runs from +18 deg back to -18 deg, still closing on the wall
    back = sonar.render_sweep(far_wall, track, sweep=1).numpy()
    assert np.degrees(back["head_angle"][[0, 20]]) == pytest.approx([18.0, -18.0], abs=1e-4)
    assert first_hit_bins(back)[20] == expected_bin(cfg, (6.0 - v * 2.0) / math.cos(math.radians(18.0)))


def test_same_seed_same_sweep_and_noise_keyed_by_step(tank):
    cfg = small(jitter=True)
    pose = [*SONAR_XY, 0.0, 0, 0, 0, 1]
    a = Msis(cfg, device="cpu").render_sweep(tank, pose).numpy()
    b = Msis(cfg, device="cpu").render_sweep(tank, pose).numpy()
    assert np.array_equal(a["intensity"], b["intensity"]) and np.array_equal(a["hit_count"], b["hit_count"])
    other = Msis(cfg.replace(seed=4), device="cpu").render_sweep(tank, pose).numpy()
    assert not np.array_equal(a["intensity"], other["intensity"])
    # steps 30 .. 39 rendered on their own give the bytes of the whole sweep's rows 30 .. 39
    part = Msis(cfg, device="cpu").render(tank, np.repeat([pose], 10, axis=0), frame_index=30).numpy()
    assert np.array_equal(part["intensity"], a["intensity"][30:])
    assert part["head_angle"] == pytest.approx(a["head_angle"][30:])


@pytest.mark.parametrize("field,value", [
    ("step_angle", 0.7), ("step_angle", 0.0), ("sector_width", 400.0), ("horizontal_beamwidth", 0.0),
    ("vertical_beamwidth", 180.0), ("ping_period", -1.0), ("range_bins", 1), ("max_range", 0.2),
    ("horizontal_rays", 0), ("model", "peer"), ("beam_width", 1.0), ("colormap", "jet"), ("frequency", float("nan")),
])
def test_bad_input_names_the_field(field, value):
    with pytest.raises(ConfigError, match=field):
        small(**{field: value})


def test_bad_rig_config_names_the_field():
    with pytest.raises(ConfigError, match=r"step_angle.*whole number"):
        registry.get("msis").make_config({"preset": "ping360", "step_angle": 0.7}, "rig.yaml sensors[0]")


def test_cartesian_image_puts_each_bin_where_its_bearing_and_range_say():
    """A synthetic sweep whose value is 1000 * step + bin: the pixel at (x ahead, y starboard) shows the step
    whose head angle is nearest atan2(y, x) and the bin floor((r - min_range) / dr)."""
    cfg = small(step_angle=9.0)
    steps = np.arange(40)
    polar = 1000.0 * steps[:, None] + np.arange(cfg.range_bins)[None, :]
    sweep = Sweep(polar, cfg.head_angles(steps), 0.1 * steps, steps, cfg.ranges(), cfg)
    img, px, (x0, y0) = sweep.cartesian(width=420)
    assert px == pytest.approx(2 * 10.5 / 420) and img.shape == (420, 420)
    for x, y in [(3.0, 0.0), (0.0, 4.0), (-2.0, -2.0), (1.0, 6.0)]:
        row, col = int(round((x0 - x) / px)), int(round((y - y0) / px))
        xc, yc = x0 - row * px, y0 + col * px
        r, b = math.hypot(xc, yc), math.degrees(math.atan2(yc, xc)) % 360.0
        step = int(round(b / 9.0)) % 40
        assert img[row, col] == 1000 * step + math.floor((r - 0.5) / cfg.range_resolution), (x, y)
    assert np.isnan(img[0, 0])                                               # a corner beyond max_range
    # a 36 deg sector about the bow: the image is the sector's bounding box, the sonar at the bottom centre
    sector = small(sector_width=36.0, step_angle=1.8)
    s = Sweep(np.ones((21, 400)), sector.head_angles(np.arange(21)), np.zeros(21), np.arange(21), sector.ranges(),
              sector)
    img, px, (x0, y0) = s.cartesian(width=200)
    half = math.radians(18.9)                                                # half the sector plus half a step
    assert y0 == pytest.approx(-10.5 * math.sin(half) + px / 2) and x0 == pytest.approx(10.5 - px / 2)
    assert img.shape[0] == math.ceil(10.5 / px)
    # two passes of the sector (steps 0 .. 40) repeat every angle: the later firing is shown
    rows = np.arange(41, dtype=np.float64)
    twice = Sweep(np.repeat(rows[:, None], 400, axis=1), sector.head_angles(np.arange(41)), np.zeros(41),
                  np.arange(41), sector.ranges(), sector)
    img, px, (x0, y0) = twice.cartesian(width=200)
    for deg, row_shown in ((-16.2, 39), (0.0, 30), (18.0, 20), (-18.0, 40)):
        x, y = 5.0 * math.cos(math.radians(deg)), 5.0 * math.sin(math.radians(deg))
        assert img[int(round((x0 - x) / px)), int(round((y - y0) / px))] == row_shown, deg


DATASET_CONFIG = dict(small(sector_width=36.0, step_angle=1.8, ping_period=0.05).to_dict(), max_range=6.0,
                      range_bins=100)


@pytest.fixture(scope="module")
def msis_dataset(tmp_path_factory) -> Path:
    """45 steps (two sweeps and a bit of a third) of a 36 deg sector at 20 steps/s, in the tank, moving at 0.5 m/s
    along +x from (0, 0, -1.5)."""
    folder = tmp_path_factory.mktemp("msis")
    rig = {"name": "msis", "scene": "tank", "seed": 5, "frames": 45, "tick_rate_hz": 20.0, "shard_size": 20,
           "batch_size": 10,
           "trajectory": {"type": "transect", "start": [0.0, 0.0, -1.5], "end": [3.0, 0.0, -1.5], "speed": 0.5},
           "sensors": [{"name": "head", "type": "msis", "rate_hz": 20.0, "config": DATASET_CONFIG,
                        "products": ["intensity", "hit_count", "head_angle_deg", "step"]}]}
    path = folder / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    out = folder / "ds"
    assert main(["generate", "--rig", str(path), "--out", str(out), "--no-progress", "--device", "cpu"]) == 0
    return out


def test_dataset_stream_one_step_per_sample_and_sweeps_assembled(msis_dataset: Path):
    out = msis_dataset
    reader = load(out, verify=True)
    meta = reader.sensors["head"]
    kind = registry.get("msis")
    config = kind.make_config(meta["config"], "manifest")
    for name, spec in meta["arrays"].items():
        assert spec["shape"] == list(kind.product(name).shape_for(config)) and spec["unit"] == kind.product(name).unit
    assert meta["steps_per_sweep"] == 21 and meta["step_period_s"] == pytest.approx(0.05)
    samples = list(reader.samples("head"))
    assert [int(s["step"]) for s in samples] == list(range(45))
    assert [float(s["head_angle_deg"]) for s in samples] == pytest.approx(
        np.degrees(config.head_angles(np.arange(45))).tolist(), abs=1e-4)
    # the dataset's steps are the sensor's own: step 7 rendered alone at the rig's pose of its time is the same
    direct = Msis(config, device="cpu").render(_tank(), [0.5 * 7 / 20.0, 0.0, -1.5, 0, 0, 0, 1],
                                                frame_index=7).numpy()
    assert np.array_equal(direct["intensity"][0], samples[7]["intensity"])
    sweeps = assemble_sweeps(samples, meta["config"])
    assert [s.steps[0] for s in sweeps] == [0, 20, 40] and [s.complete for s in sweeps] == [True, True, False]
    assert sweeps[1].polar.shape == (21, 100) and np.array_equal(sweeps[1].polar[0], samples[20]["intensity"])
    assert sweeps[1].times == pytest.approx(np.arange(20, 41) / 20.0)
    assert np.degrees(sweeps[1].head_angle[[0, -1]]) == pytest.approx([18.0, -18.0], abs=1e-4)


def _tank():
    from oceansim_py.scene import load_scene

    return load_scene("tank", device="cpu")


def test_render_msis_cli_writes_polar_and_cartesian(tmp_path: Path):
    out = tmp_path / "out"
    assert main(["render", "msis", "--scene", "tank", "--device", "cpu", "--out", str(out), "--pose",
                 "0,0,-1.5,0,0,0", "--set", "step_angle=9", "--set", "range_bins=200", "--set", "max_range=8"]) == 0
    polar = np.load(out / "msis_polar.npy")
    head = np.load(out / "msis_head_angle_deg.npy")
    assert polar.shape == (40, 200) and head == pytest.approx(np.degrees(
        MsisConfig.preset("ping360", step_angle=9.0).head_angles(np.arange(40))), abs=1e-4)
    times = np.load(out / "msis_times.npy")
    assert times == pytest.approx(np.arange(40) * (2 * 8.0 / 1500.0 + 0.01))
    from PIL import Image

    assert Image.open(out / "msis_polar.png").size == (200, 40)
    assert Image.open(out / "msis_cartesian.png").size == (512, 512)
    # strongest echoes: step 0 (ahead) the tank's cylinder, radius 0.2 m on an axis 4 m ahead, at 3.8 m; step 10
    # (90 deg, starboard) the side wall 3.5 m away; step 20 (astern) the back wall 1.5 m away. Each echo spreads
    # over a few bins (the wall at 90 deg: 3.5 .. 3.5 / cos(12.5 deg) = 3.58 m, bins 75.9-78.2) of exponential
    # speckle, so the strongest single bin is anywhere on it (16 seeds: bins 74-78); the 5-bin sum's peak is the
    # echo's (75-77 at 16 of 16 seeds, the bin of the nearest range + 1 or 2).
    dr = (8.0 - 0.75) / 200
    for step, d in ((0, 3.8), (10, 3.5), (20, 1.5)):
        peak = int(np.convolve(polar[step], np.ones(5), "same").argmax())
        assert abs(peak - math.floor((d - 0.75) / dr)) <= 2, step


@pytest.mark.parametrize("fmt", ["rosbag2", "mcap"])
def test_ros_export_one_raw_sonar_image_per_step(msis_dataset: Path, tmp_path: Path, fmt: str):
    pytest.importorskip("rosbags")
    pytest.importorskip("mcap")
    from oceansim_py.export import export_dataset
    from test_export import read_mcap, read_rosbag2

    out = tmp_path / ("bag" if fmt == "rosbag2" else "run.mcap")
    summary = export_dataset(msis_dataset, out, format=fmt)
    assert summary.skipped == {}
    messages = read_rosbag2(out) if fmt == "rosbag2" else read_mcap(out)
    got = [(ns, m) for t, ty, ns, m in messages if t == "/head/raw_image"]
    assert {ty for t, ty, _, _ in messages if t == "/head/raw_image"} == {"marine_acoustic_msgs/msg/RawSonarImage"}
    samples = list(load(msis_dataset).samples("head"))
    assert len(got) == 45 == summary.messages["/head/raw_image"]
    dr = (6.0 - 0.5) / 100                                       # 5.5 cm bins from 0.5 m
    for (ns, msg), s in zip(got, samples):
        assert ns == round(s["time"] * 1e9) and msg.header.frame_id == "head_sonar"
        assert (msg.samples_per_beam, msg.image.beam_count, msg.image.dtype) == (100, 1, 8)
        assert msg.sample_rate == pytest.approx(1500.0 / (2 * dr), rel=1e-6) and msg.sample0 == round(0.5 / dr)
        assert msg.rx_angles[0] == pytest.approx(math.radians(float(s["head_angle_deg"])), abs=1e-6)
        assert msg.ping_info.frequency == 750e3 and msg.ping_info.sound_speed == 1500.0
        assert list(msg.ping_info.tx_beamwidths) == pytest.approx([math.radians(2.0)])
        assert list(msg.ping_info.rx_beamwidths) == pytest.approx([math.radians(10.0)])
        assert np.array_equal(np.frombuffer(bytes(msg.image.data), "<f4"), s["intensity"])
    tf = [m for t, _, _, m in messages if t == "/tf_static"][0]
    assert "head_sonar" in [x.child_frame_id for x in tf.transforms]


def test_render_msis_cli_speed_skews_the_sweep(tmp_path: Path):
    """--speed 1 along +x: step 20 (astern, t_20 = 20 (2 * 8 / 1500 + 0.01) = 0.4133 s) sees the back wall
    1.5 + 0.4133 m away instead of 1.5 m."""
    args = ["--scene", "tank", "--device", "cpu", "--pose", "0,0,-1.5,0,0,0", "--set", "step_angle=9", "--set",
            "range_bins=200", "--set", "max_range=8"]
    assert main(["render", "msis", *args, "--speed", "1.0", "--out", str(tmp_path / "m")]) == 0
    polar = np.load(tmp_path / "m" / "msis_polar.npy")
    t20 = 20 * (2 * 8.0 / 1500.0 + 0.01)
    dr = (8.0 - 0.75) / 200
    assert abs(int(polar[20].argmax()) - math.floor((1.5 + t20 - 0.75) / dr)) <= 2


def test_a_rig_rate_other_than_the_step_rate_warns():
    from oceansim_py.diagnostics import OceanSimWarning

    kind = registry.get("msis")
    cfg = small(ping_period=0.05)
    sensor = kind.make_sensor(cfg, device="cpu")
    scene = make_scene(("wall", quad([6.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))
    batch = registry.Batch(scene, np.array([[0, 0, 0, 0, 0, 0, 1.0]]), np.zeros(1), 0, rate_hz=10.0)
    with pytest.warns(OceanSimWarning, match=r"rate_hz 10 is not the head's step rate 1 / step_period = 20 Hz"):
        kind.render(sensor, batch)
