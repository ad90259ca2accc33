"""The built-in scenes: committed text equals the builders' output, metadata, geometry checked by ray casts."""

from __future__ import annotations

import numpy as np
import pytest
from pxr import Usd

from oceansim_py import load_scene
from oceansim_py.cli import main
from oceansim_py.poses import quat_to_matrix
from oceansim_py.scene import builtin_scene_names, scenes_dir
from oceansim_py.scene import procedural as proc


@pytest.mark.parametrize("name", sorted(proc.BUILTIN_SCENES))
def test_committed_scene_equals_builder(name):
    path = scenes_dir() / f"{name}.usda"
    assert path.read_text(encoding="utf-8") == proc.BUILTIN_SCENES[name](), \
        f"{path} is stale: run `oceansim-py scenes --regenerate`"


@pytest.mark.parametrize("name", sorted(proc.BUILTIN_SCENES))
def test_scene_opens_with_metadata_labels_and_materials(name):
    stage = Usd.Stage.Open(str(scenes_dir() / f"{name}.usda"))
    meta = stage.GetRootLayer().customLayerData["oceansim"]
    assert meta["description"] and len(meta["suggested_pose"]) == 7
    scene = load_scene(name, device="cpu")
    assert scene.description == meta["description"]
    pose = scene.suggested_pose
    assert np.linalg.norm(pose[3:]) == pytest.approx(1.0, abs=1e-6)
    materials = {n.material.name for n in scene.mesh_nodes() if n.sea_surface is None}   # the stage's meshes
    assert materials <= {"steel", "concrete", "rock", "sand", "mud", "gravel", "wood", "rubber", "glass", "plastic",
                         "fiberglass", "coral", "aluminium"}
    assert len(scene.labels) >= 3
    # the boresight from the suggested pose hits something of the scene
    d = quat_to_matrix(pose[3:]) @ [1.0, 0.0, 0.0]
    hit = scene.raycast(pose[None, :3], d[None], 100.0).numpy()
    assert hit["face"][0] >= 0


def test_tank_geometry_matches_the_paper():
    scene = load_scene("tank", device="cpu")
    pose = scene.suggested_pose
    np.testing.assert_allclose(pose, [0, 0, -1.5, 0, 0, 0, 1], atol=1e-9)
    origin = np.tile(pose[:3], (3, 1))
    # boresight: the near face of the 0.4 m cylinder whose axis is 4 m ahead. The cylinder is a 64-gon prism
    # with its vertices on the circle and a facet facing the sonar: 4 - 0.2 cos(pi / 64) = 3.80024 m
    # 20 deg to port: clear of the cylinder, the ray meets the far wall at 5.5 / cos(20 deg)
    a = np.radians(20.0)
    dirs = np.array([[1.0, 0.0, 0.0], [np.cos(a), np.sin(a), 0.0], [0.0, 0.0, -1.0]])
    hit = scene.raycast(origin, dirs, 50.0).numpy()
    assert hit["distance"][0] == pytest.approx(4.0 - 0.2 * np.cos(np.pi / proc.TANK_CYLINDER_SEGMENTS), abs=1e-4)
    assert hit["distance"][1] == pytest.approx(5.5 / np.cos(a), abs=1e-4)
    assert hit["distance"][2] == pytest.approx(1.5, abs=1e-4)   # the floor 3 m deep
    cyl = scene.node(int(hit["object"][0]))
    assert (cyl.label, cyl.material.name) == ("cylinder", "steel")
    wall = scene.node(int(hit["object"][1]))
    assert (wall.label, wall.material.name) == ("wall", "concrete")
    # the cylinder is 0.4 m across: rays 0.19 m to either side of the axis at 4 m hit it, 0.21 m miss it
    for y, hits_cylinder in ((0.19, True), (-0.19, True), (0.21, False), (-0.21, False)):
        h = scene.raycast([[0.0, y, -1.5]], [[1.0, 0.0, 0.0]], 50.0).numpy()
        assert (scene.node(int(h["object"][0])).label == "cylinder") is hits_cylinder, y


def test_pier_and_wreck_hold_their_parts():
    pier = load_scene("pier", device="cpu")
    assert {"piling", "seafloor", "tyre", "drum", "rock"} <= set(pier.labels)
    assert sum(1 for n in pier.mesh_nodes() if n.label == "piling") == 18
    wreck = load_scene("wreck", device="cpu")
    assert {"hull", "seafloor", "rock"} <= set(wreck.labels)
    # the rocks get their material from the bound UsdShade material /World/Looks/Rock
    rocks = [n for n in wreck.mesh_nodes() if n.label == "rock"]
    assert rocks and all(n.material.name == "rock" for n in rocks)


def test_cli_lists_and_regenerates(tmp_path, capsys):
    assert main(["scenes"]) == 0
    out = capsys.readouterr().out
    for name in ("tank", "pier", "wreck"):
        assert name in out
    assert sorted(builtin_scene_names()) == sorted(proc.BUILTIN_SCENES)
    assert main(["scenes", "--regenerate", "--out", str(tmp_path)]) == 0
    for name in proc.BUILTIN_SCENES:
        assert (tmp_path / f"{name}.usda").read_bytes() == (scenes_dir() / f"{name}.usda").read_bytes()
