"""The built-in ``harbour`` scene: its parts, the seafloor slope, the quay face, the hull's draft and the default
wind sea, checked by ray casts against the numbers of its construction (``HARBOUR_*`` in scene/procedural.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oceansim_py import load_scene
from oceansim_py.cli import main
from oceansim_py.errors import SceneError
from oceansim_py.scene import builtin_scene_names, scenes_dir
from oceansim_py.scene import procedural as proc
from oceansim_py.scene.sea_surface import GRAVITY

DOWN = [0.0, 0.0, -1.0]


@pytest.fixture(scope="module")
def harbour():
    return load_scene("harbour", device="cpu")


def _cast(scene, origins, directions, max_range=100.0):
    h = scene.raycast(np.asarray(origins, dtype=np.float64), np.asarray(directions, dtype=np.float64),
                      max_range).numpy()
    return h["distance"], [scene.node(int(o)) if o >= 0 else None for o in h["object"]]


def test_harbour_is_a_listed_builtin_with_its_parts(harbour, capsys):
    assert "harbour" in builtin_scene_names()
    assert main(["scenes"]) == 0
    assert "harbour" in capsys.readouterr().out
    assert {"quay_wall", "pile", "hull", "seafloor", "walkway", "sea_surface"} <= set(harbour.labels)
    piles = [n for n in harbour.mesh_nodes() if n.label == "pile"]
    assert len(piles) == 8 and all(n.material.name == "concrete" for n in piles)
    materials = {n.label: n.material.name for n in harbour.mesh_nodes()}
    assert (materials["quay_wall"], materials["hull"], materials["sea_surface"]) == ("concrete", "steel",
                                                                                      "sea_surface")
    assert {n.material.name for n in harbour.mesh_nodes() if n.label == "seafloor"} == {"sand", "mud"}
    assert "harbour" in harbour.description.lower() or "quay" in harbour.description.lower()


def test_seafloor_slopes_from_4_m_at_the_quay_to_12_m_offshore(harbour):
    # depth = 4 + 8 x / 40 up to x = 40 m, 12 m beyond; ripples within +-0.05 m. Rays from 1 m deep straight down,
    # at y = -15 (clear of the hull at y in [-7, 19] and of the piles at y = -22).
    xs = [0.5, 20.0, 45.0]
    dist, nodes = _cast(harbour, [[x, -15.0, -1.0] for x in xs], [DOWN] * 3)
    depth = 1.0 + dist
    np.testing.assert_allclose(depth, [4.1, 8.0, 12.0], atol=proc.HARBOUR_RIPPLE + 1e-4)
    assert [n.label for n in nodes] == ["seafloor"] * 3
    assert [n.material.name for n in nodes] == ["sand", "mud", "mud"]


def test_quay_face_is_the_plane_x_0(harbour):
    # horizontal rays towards the quay (-x) from 10 m off it, at two depths and two places along it
    origins = [[10.0, -15.0, -1.0], [10.0, 25.0, -3.0]]
    dist, nodes = _cast(harbour, origins, [[-1.0, 0.0, 0.0]] * 2)
    np.testing.assert_allclose(dist, [10.0, 10.0], atol=1e-4)
    assert all(n.label == "quay_wall" and n.material.name == "concrete" for n in nodes)


def test_pile_row_and_hull_draft(harbour):
    # along the pile row (y = -22) from 1 m off the quay: the first pile's axis is 6 m off the quay; the 24-gon's
    # facet facing -x lies r cos(pi / 24) in front of the axis: 6 - 1 - 0.3 cos(7.5 deg) = 4.70256 m
    dist, nodes = _cast(harbour, [[1.0, -22.0, -2.0]], [[1.0, 0.0, 0.0]])
    assert dist[0] == pytest.approx(5.0 - 0.3 * math.cos(math.pi / 24), abs=1e-4)
    assert nodes[0].label == "pile"
    # the keel amidships (x = gap + beam / 2 = 4.4 m, y = 6 m) is the draft 3.6 - 1.1 = 2.5 m below the surface:
    # a ray up from 3.5 m deep meets it after 1 m
    length, beam, depth = proc.HARBOUR_HULL
    assert depth - proc.HARBOUR_HULL_FREEBOARD == pytest.approx(2.5)
    dist, nodes = _cast(harbour, [[proc.HARBOUR_HULL_GAP + beam / 2, proc.HARBOUR_HULL_Y, -3.5]], [[0.0, 0.0, 1.0]])
    assert dist[0] == pytest.approx(1.0, abs=1e-3)
    assert nodes[0].label == "hull" and nodes[0].material.name == "steel"
    # the hull's side 0.5 m below the surface lies between the fender gap and the keel line: a ray from the quay
    # side (x = 0.6 m) towards +x meets the hull's port side within its half beam
    dist, nodes = _cast(harbour, [[0.6, proc.HARBOUR_HULL_Y, -0.5]], [[1.0, 0.0, 0.0]])
    assert nodes[0].label == "hull" and 0.6 <= dist[0] <= 0.6 + beam / 2


def test_default_sea_is_a_small_moving_wind_sea(harbour):
    sea = harbour.sea_surface
    assert sea is not None and harbour.is_animated
    c = sea.config
    assert (c.spectrum, c.wind_speed, c.fetch) == ("jonswap", 5.0, 2000.0)
    # JONSWAP's fetch-limited growth (Hasselmann et al. 1973): Hs = 1.6e-3 U10 sqrt(F / g) = 0.114 m and
    # omega_p = 22 (g^2 / (U10 F))^(1/3) = 4.68 rad/s (Tp = 1.34 s); the spectrum's own m0 gives Hs 15 % above the
    # growth law's fit
    assert sea.components.significant_wave_height == pytest.approx(1.6e-3 * 5.0 * math.sqrt(2000.0 / GRAVITY),
                                                                   rel=0.2)
    assert 2 * math.pi / c.peak_frequency == pytest.approx(1.343, abs=0.002)
    # the mesh is the surface: a ray up from 3 m deep (clear of everything) meets it at the elevation there
    xy = np.array([[20.0, -15.0], [30.0, 10.0]])
    for t in (0.0, 0.7):
        harbour.set_time(t)
        dist, nodes = _cast(harbour, np.column_stack([xy, [-3.0, -3.0]]), [[0.0, 0.0, 1.0]] * 2)
        assert all(n.label == "sea_surface" for n in nodes)
        np.testing.assert_allclose(-3.0 + dist, harbour.surface_height(xy, t), atol=0.01)
    # it moves: the elevation changes between the two times by more than a centimetre somewhere on a line
    line = np.column_stack([np.linspace(5.0, 45.0, 41), np.zeros(41)])
    assert np.max(np.abs(harbour.surface_height(line, 0.0) - harbour.surface_height(line, 0.7))) > 0.01
    harbour.set_time(0.0)


def test_flat_and_explicit_sea_states_override_the_default(tmp_path):
    flat = load_scene("harbour", device="cpu", sea_state="flat")
    assert flat.sea_surface is None and "sea_surface" not in flat.labels
    calm = load_scene("harbour", device="cpu", sea_state="calm", sea_surface_size=40.0, sea_surface_resolution=2.0)
    assert calm.sea_surface.config.wind_speed == 3.0 and calm.sea_surface.num_vertices == 21 * 21
    # a stage whose declared sea state is wrong is refused, naming the field
    bad = tmp_path / "bad.usda"
    bad.write_text((scenes_dir() / "harbour.usda").read_text().replace("double wind_speed = 5",
                                                                       "double wind_speed = -5"))
    with pytest.raises(SceneError, match="oceansim.sea_state.*wind_speed"):
        load_scene(bad, device="cpu")
    bad.write_text((scenes_dir() / "harbour.usda").read_text().replace("double sea_surface_size = 64",
                                                                       'string sea_surface_size = "big"'))
    with pytest.raises(SceneError, match="sea_surface_size"):
        load_scene(bad, device="cpu")


def test_gallery_passes_multipath_bounces_only_to_configs_that_have_the_field():
    import dataclasses
    import importlib.util
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "tools"))
    spec = importlib.util.spec_from_file_location("harbour_gallery", root / "tools" / "harbour_gallery.py")
    gallery = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gallery)

    @dataclasses.dataclass(frozen=True)
    class WithField:
        multipath_bounces: int = 0

    @dataclasses.dataclass(frozen=True)
    class WithoutField:
        max_range: float = 10.0

    assert gallery.multipath_args(WithField, 2) == ["--set", "multipath_bounces=2"]
    assert gallery.multipath_args(WithoutField, 2) == []
    assert gallery.multipath_args(WithField, None) == [] and gallery.multipath_args(None, 1) == []
    # every view renders in the harbour from under the water
    for kind, _config, args, _png in gallery.VIEWS.values():
        pose = [float(v) for v in args[args.index("--pose") + 1].split(",")]
        assert pose[2] < 0.0, kind


def test_a_rig_may_ask_for_the_flat_surface(tmp_path):
    import yaml

    from oceansim_py.dataset.rig import load_rig
    from oceansim_py.errors import ConfigError

    base = {"name": "h", "scene": "harbour", "frames": 2, "tick_rate_hz": 1.0,
            "trajectory": {"type": "transect", "start": [20.0, -12.0, -3.0], "end": [20.0, 0.0, -3.0], "speed": 1.0},
            "sensors": [{"name": "dvl", "type": "dvl", "rate_hz": 1.0}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(base))
    assert load_rig(path).scene_options() == {}                    # the scene's own sea: the harbour's wind sea
    path.write_text(yaml.safe_dump({**base, "sea_state": "flat"}))
    options = load_rig(path).scene_options()
    assert options == {"sea_state": "flat"}
    assert load_scene("harbour", device="cpu", **options).sea_surface is None
    path.write_text(yaml.safe_dump({**base, "sea_state": "flat", "sea_surface_size": 50.0}))
    with pytest.raises(ConfigError, match="sea_surface_size"):
        load_rig(path)


def test_render_takes_a_sea_state_or_flat_on_the_command_line(tmp_path, capsys):
    # Straight up from 2 m under the harbour's surface: with --sea-state flat the single-beam sees nothing above
    # it (the flat surface is no geometry), with the default wind sea it ranges to the moving surface (~2 m).
    pose = "20,-10,-2,0,-90,0"
    ranges = {}
    for name, extra in (("flat", ["--sea-state", "flat"]), ("waves", [])):
        out = tmp_path / name
        assert main(["render", "singlebeam", "--scene", "harbour", *extra, "--pose", pose, "--device", "cpu",
                     "--out", str(out)]) == 0
        ranges[name] = float(np.load(out / "singlebeam_first_return_range.npy").reshape(-1)[0])
    assert math.isnan(ranges["flat"])
    assert 1.7 < ranges["waves"] < 2.3
    assert main(["render", "sonar", "--scene", "harbour", "--sea-state", "stormy", "--out", str(tmp_path / "bad")]) != 0
    err = capsys.readouterr().err
    assert "--sea-state stormy" in err and "'flat'" in err
