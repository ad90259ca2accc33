"""Gazebo SDF worlds and Collada meshes: a small DAVE-like world (seafloor plane, an included Collada model with
units, Y-up axis and non-uniform scale, a box under nested poses and frames) checked by ray casts against
hits computed by hand; bad worlds and meshes give SceneErrors naming what is wrong."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pytest

from oceansim_py import SceneError, load_scene

# A box in the Collada file (centimetres, Y up): x +-50, y (up) +-10, z +-25 cm. In Z-up metres it spans
# x +-0.5, y +-0.25, z +-0.1.
_CORNERS = [(sx * 50, sy * 10, sz * 25) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
_FACES = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
          (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]


def collada_text(corners=_CORNERS, faces=_FACES, unit: float = 0.01, up: str = "Y_UP", with_geometry=True) -> str:
    coords = " ".join(f"{v:g}" for c in corners for v in c)
    idx = " ".join(str(i) for f in faces for i in f)
    geometry = f"""
  <library_geometries>
    <geometry id="rock" name="rock"><mesh>
      <source id="rock-pos"><float_array id="rock-pos-array" count="{3 * len(corners)}">{coords}</float_array>
        <technique_common><accessor source="#rock-pos-array" count="{len(corners)}" stride="3">
          <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
        </accessor></technique_common></source>
      <vertices id="rock-vtx"><input semantic="POSITION" source="#rock-pos"/></vertices>
      <triangles count="{len(faces)}"><input semantic="VERTEX" source="#rock-vtx" offset="0"/><p>{idx}</p></triangles>
    </mesh></geometry>
  </library_geometries>""" if with_geometry else ""
    instance = '<instance_geometry url="#rock"/>' if with_geometry else ""
    return f"""<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="u" meter="{unit}"/><up_axis>{up}</up_axis></asset>{geometry}
  <library_visual_scenes><visual_scene id="Scene"><node id="rock_node">{instance}</node></visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#Scene"/></scene>
</COLLADA>
"""


MODEL_SDF = """<?xml version="1.0"?>
<sdf version="1.7">
  <model name="rock_model">
    <static>true</static>
    <pose>100 100 100 0 0 0</pose>
    <link name="body">
      <visual name="hull">
        <geometry><mesh><uri>model://rock_model/meshes/rock.dae</uri><scale>2 3 0.5</scale></mesh></geometry>
      </visual>
    </link>
  </model>
</sdf>
"""

WORLD_SDF = """<?xml version="1.0"?>
<sdf version="1.9">
  <world name="dave_like">
    <model name="seafloor">
      <static>true</static>
      <pose>0 0 -20 0 0 0</pose>
      <link name="floor">
        <visual name="surface">
          <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
          <material><script><name>Gazebo/Sand</name></script></material>
        </visual>
      </link>
    </model>
    <include>
      <uri>model://rock_model</uri>
      <name>boulder</name>
      <pose degrees="true">10 0 -19 0 0 90</pose>
    </include>
    <model name="mooring">
      <pose>-10 0 -10 0 0 0</pose>
      <frame name="anchor" attached_to="__model__"><pose>0 5 0 0 0 1.5707963267948966</pose></frame>
      <model name="marker">
        <pose relative_to="anchor">2 0 -2 0 0 0</pose>
        <link name="l">
          <pose>1 0 0 0 0 0</pose>
          <visual name="steel_box">
            <pose>0 0 0.5 0 0 0</pose>
            <geometry><box><size>2 1 1</size></box></geometry>
            <material><diffuse>1 0 0 1</diffuse></material>
          </visual>
        </link>
      </model>
    </model>
  </world>
</sdf>
"""


def write_models(root: Path) -> Path:
    """``root/models/rock_model/{model.config, model.sdf, meshes/rock.dae}``; returns the models folder."""
    model = root / "models" / "rock_model"
    (model / "meshes").mkdir(parents=True)
    (model / "meshes" / "rock.dae").write_text(collada_text())
    (model / "model.sdf").write_text(MODEL_SDF)
    (model / "model.config").write_text(textwrap.dedent("""\
        <?xml version="1.0"?>
        <model><name>rock_model</name><sdf version="1.6">old.sdf</sdf><sdf version="1.7">model.sdf</sdf></model>
        """))
    return root / "models"


@pytest.fixture
def world(tmp_path):
    models = write_models(tmp_path)
    path = tmp_path / "worlds" / "dave.world"
    path.parent.mkdir()
    path.write_text(WORLD_SDF)
    return path, models


def _cast(scene, origins, directions):
    return scene.raycast(np.asarray(origins, float), np.asarray(directions, float), 200.0).numpy()


def test_dave_like_world_ray_casts_match_hand_computed_hits(world):
    path, models = world
    scene = load_scene(path, device="cpu", model_paths=[models])
    hit = _cast(scene, [[30, 30, 0],        # the seafloor plane at z = -20
                        [10, 0, 0],         # boulder top: -19 + 0.1 * 0.5 = -18.95
                        [0, 0, -19],        # boulder, yawed 90 deg: x half-extent 0.25 * 3 = 0.75 -> x = 9.25
                        [10, -10, -19],     # boulder y half-extent 0.5 * 2 = 1 -> y = -1
                        [-10, 8.9, 0],      # marker box top: z = -10 - 2 + 0.5 + 0.5 = -11
                        [-10, 0, -11.5],    # marker box, yawed 90 deg, spans y 7..9
                        [-20, 8, -11.5]],   # and x -10.5..-9.5
                   [[0, 0, -1], [0, 0, -1], [1, 0, 0], [0, 1, 0], [0, 0, -1], [0, 1, 0], [1, 0, 0]])
    np.testing.assert_allclose(hit["distance"], [20.0, 18.95, 9.25, 9.0, 11.0, 7.0, 9.5], atol=1e-4)
    names = [scene.node(int(i)).path for i in hit["object"]]
    assert names[0] == "/dave_like/seafloor/floor/surface"
    assert names[1] == "/dave_like/boulder/body/hull"
    assert names[4] == "/dave_like/mooring/marker/l/steel_box"
    floor, rock, box = (scene.node(int(hit["object"][k])) for k in (0, 1, 4))
    assert floor.material.name == "sand"          # from the script name Gazebo/Sand
    assert rock.material.name == "rock"           # from the model name rock_model (word "rock")
    assert box.material.name == "steel"           # from the visual name steel_box
    assert box.material.albedo == (1.0, 0.0, 0.0)  # <diffuse> sets the albedo
    assert box.label == "mooring" and rock.label == "boulder"


def test_resource_path_variable_resolves_model_uris(world, monkeypatch):
    path, models = world
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(models))
    scene = load_scene(path, device="cpu")
    assert _cast(scene, [[10, 0, 0]], [[0, 0, -1]])["distance"][0] == pytest.approx(18.95, abs=1e-4)


def test_pose_of_a_model_file_is_kept_without_include_pose(tmp_path):
    models = write_models(tmp_path)
    path = tmp_path / "w.sdf"
    path.write_text('<sdf version="1.6"><world name="w"><include><uri>model://rock_model</uri></include>'
                    '</world></sdf>')
    scene = load_scene(path, device="cpu", model_paths=[models])
    # the model's own pose (100, 100, 100), unrotated: x half-extent 0.5 * 2 = 1
    assert _cast(scene, [[0, 100, 100]], [[1, 0, 0]])["distance"][0] == pytest.approx(99.0, abs=1e-4)


def test_plane_faces_its_normal_and_cylinder_has_its_radius(tmp_path):
    path = tmp_path / "w.sdf"
    path.write_text("""<sdf version="1.8"><world name="w">
      <model name="wall"><link name="l"><visual name="v"><geometry>
        <plane><normal>1 0 0</normal><size>4 6</size></plane></geometry></visual></link></model>
      <model name="pile"><pose>0 20 0 0 0 0</pose><link name="l"><visual name="v"><geometry>
        <cylinder><radius>0.5</radius><length>4</length></cylinder></geometry></visual></link></model>
    </world></sdf>""")
    scene = load_scene(path, device="cpu")
    hit = _cast(scene, [[-5, 0, 0], [-5, 2.9, 1.9], [-5, 3.1, 0], [0, 20, 10], [-5, 20, 0]],
                [[1, 0, 0], [1, 0, 0], [1, 0, 0], [0, 0, -1], [1, 0, 0]])
    # the plane x = 0 spans y +-3 (size h along the rotated y) and z +-2
    assert hit["distance"][0] == pytest.approx(5.0, abs=1e-5)
    assert hit["distance"][1] == pytest.approx(5.0, abs=1e-5)
    assert not np.isfinite(hit["distance"][2])
    assert hit["distance"][3] == pytest.approx(8.0, abs=1e-5)      # cylinder top at z = +2
    # a 32-gon: the face centred on -x lies at r cos(pi / 32)
    assert hit["distance"][4] == pytest.approx(5.0 - 0.5 * math.cos(math.pi / 32), abs=1e-5)


def test_collada_file_loads_directly_with_units_and_up_axis(tmp_path):
    path = tmp_path / "rock.dae"
    path.write_text(collada_text())
    scene = load_scene(path, device="cpu", material="rock")
    hit = _cast(scene, [[0, 0, 5], [-5, 0, 0], [0, -5, 0]], [[0, 0, -1], [1, 0, 0], [0, 1, 0]])
    np.testing.assert_allclose(hit["distance"], [4.9, 4.5, 4.75], atol=1e-5)
    assert scene.node(int(hit["object"][0])).material.name == "rock"
    z_up = tmp_path / "rock_z.dae"
    z_up.write_text(collada_text(unit=1.0, up="Z_UP"))
    hit = _cast(load_scene(z_up, device="cpu"), [[0, 0, 100]], [[0, 0, -1]])
    assert hit["distance"][0] == pytest.approx(75.0, abs=1e-4)      # z extent +-25 m kept


def test_unresolved_model_uri_names_the_model_and_the_paths_tried(world):
    path, models = world
    path.write_text(WORLD_SDF.replace("model://rock_model", "model://no_such_model"))
    with pytest.raises(SceneError) as err:
        load_scene(path, device="cpu", model_paths=[models])
    msg = str(err.value)
    assert "no_such_model" in msg and "boulder" in msg and str(models / "no_such_model") in msg


def test_unsupported_geometry_is_refused_with_the_model_name(tmp_path):
    path = tmp_path / "w.sdf"
    path.write_text('<sdf version="1.7"><world name="w"><model name="terrain"><link name="l"><visual name="v">'
                    '<geometry><heightmap><uri>h.png</uri></heightmap></geometry></visual></link></model>'
                    '</world></sdf>')
    with pytest.raises(SceneError, match="terrain.*heightmap"):
        load_scene(path, device="cpu")


@pytest.mark.parametrize("text, match", [
    ('<sdf version="1.7"><world name="w"><model name="m">', "malformed XML"),
    ('<robot name="r"/>', "not <sdf>"),
    ('<sdf version="1.7"><world name="w"><model name="m"><pose relative_to="nowhere">0 0 0 0 0 0</pose>'
     '<link name="l"/></model></world></sdf>', "nowhere"),
    ('<sdf version="1.7"><world name="w"><frame name="a"><pose relative_to="b"/></frame>'
     '<frame name="b"><pose relative_to="a"/></frame></world></sdf>', "cycle"),
    ('<sdf version="1.7"><world name="w"><model name="m"><link name="l"><visual name="v"><geometry><box>'
     '<size>1 1</size></box></geometry></visual></link></model></world></sdf>', "3 finite numbers"),
])
def test_bad_sdf_gives_scene_errors(tmp_path, text, match):
    path = tmp_path / "w.sdf"
    path.write_text(text)
    with pytest.raises(SceneError, match=match):
        load_scene(path, device="cpu")


def test_collada_without_geometry_is_refused(tmp_path):
    path = tmp_path / "empty.dae"
    path.write_text(collada_text(with_geometry=False))
    with pytest.raises(SceneError, match="no triangle geometry"):
        load_scene(path, device="cpu")
    broken = tmp_path / "broken.dae"
    broken.write_text("<COLLADA><asset>")
    with pytest.raises(SceneError, match="not a readable Collada"):
        load_scene(broken, device="cpu")


def test_options_that_do_not_apply_are_refused(world):
    path, models = world
    with pytest.raises(SceneError, match="up_axis"):
        load_scene(path, device="cpu", model_paths=[models], up_axis="Y")


SHARED_SDF = """<?xml version="1.0"?>
<sdf version="1.9">
  <world name="shared">
    <include><uri>model://rock_model</uri><name>rock_a</name><pose>10 0 0 0 0 0</pose></include>
    <include><uri>model://rock_model</uri><name>rock_b</name><pose>10 4 0 0.3 0 0.5</pose></include>
    <model name="mirrored_rock">
      <pose>10 -4 0 0 0 0.2</pose>
      <link name="l"><visual name="v">
        <geometry><mesh><uri>../models/rock_model/meshes/rock.dae</uri><scale>-2 3 0.5</scale></mesh></geometry>
      </visual></link>
    </model>
    {boxes}
  </world>
</sdf>
"""


def _shared_world(tmp_path) -> tuple[Path, Path]:
    """Three visuals of one Collada file (two includes of its model and a mirrored relative-path mesh) and three
    identical boxes."""
    models = write_models(tmp_path)
    boxes = "".join(f'<model name="box_{k}"><pose>6 {y} 0 0 0 {0.2 * k}</pose><link name="l"><visual name="v">'
                    f'<geometry><box><size>1 2 1</size></box></geometry></visual></link></model>'
                    for k, y in enumerate((-5.0, 0.0, 5.0)))
    path = tmp_path / "worlds" / "shared.world"
    path.parent.mkdir()
    path.write_text(SHARED_SDF.format(boxes=boxes))
    return path, models


def test_the_same_mesh_file_and_primitive_share_one_mesh(tmp_path):
    path, models = _shared_world(tmp_path)
    scene = load_scene(path, device="cpu", model_paths=[models])
    rocks = [scene.node(p).mesh for p in ("/shared/rock_a/body/hull", "/shared/rock_b/body/hull",
                                          "/shared/mirrored_rock/l/v")]
    boxes = [scene.node(f"/shared/box_{k}/l/v").mesh for k in range(3)]
    assert len({id(m) for m in rocks}) == 1 and len({id(m) for m in boxes}) == 1
    # by hand: rock_a spans x 10 +- 1 (scale 2 of +-0.5 m); the box at y = 0 (yawed 0.2 rad) is hit before x = 6
    hit = _cast(scene, [[0.0, -0.1, 0.3]], [[1.0, 0, 0]])
    assert scene.node(int(hit["object"][0])).path == "/shared/box_1/l/v"
    assert 5.0 < hit["distance"][0] < 6.0
    through = _cast(scene, [[8.0, 0.0, 0.02]], [[1.0, 0, 0]])
    assert through["distance"][0] == pytest.approx(1.0, abs=1e-5)


def test_embree_instances_the_shared_meshes_like_warp(tmp_path):
    from oceansim_py.raycast import rtcore
    if not rtcore.embree_available():
        pytest.skip("needs the embree extra (embreex)")
    from test_raycast_backends import compare

    path, models = _shared_world(tmp_path)
    w = load_scene(path, device="cpu", model_paths=[models], raycast_backend="warp")
    e = load_scene(path, device="cpu", model_paths=[models], raycast_backend="embree")
    e.backend.build()
    assert e.backend.flat_triangles == 0
    assert "6 instance(s) of 2 mesh(es)" in e.backend.describe()
    rng = np.random.default_rng(3)
    n = 8000
    origins = np.column_stack([np.full(n, -3.0), rng.uniform(-7, 7, n), rng.uniform(-1, 1, n)])
    targets = np.column_stack([rng.uniform(5, 12, n), rng.uniform(-7, 7, n), rng.uniform(-0.6, 0.6, n)])
    compare(w, e, origins, targets - origins)
    assert (w.raycast(origins, targets - origins, 100.0).numpy()["face"] >= 0).mean() > 0.1


CRATE_SDF = """<?xml version="1.0"?>
<sdf version="1.8">
  <model name="crate">
    <link name="body">
      <pose>0 0 0.5 0 0 0</pose>
      <visual name="box"><geometry><box><size>1 1 1</size></box></geometry></visual>
    </link>
    <frame name="corner" attached_to="body"><pose>0.5 0.5 -0.5 0 0 0</pose></frame>
  </model>
</sdf>
"""


@pytest.mark.parametrize("placement, top", [
    ("", -19.0),          # the model frame at z = -20, the 1 m box's centre 0.5 m above it: top at -19
    ("body", -19.5),      # the link (the box's centre) at z = -20: top at -19.5
    ("corner", -19.0),    # the box's bottom corner (+0.5, +0.5) at (10, 0, -20): box x 9..10, top at -19
])
def test_include_placement_frame_places_that_frame_at_the_pose(tmp_path, placement, top):
    folder = tmp_path / "models" / "crate"
    folder.mkdir(parents=True)
    (folder / "model.sdf").write_text(CRATE_SDF)
    frame = f"<placement_frame>{placement}</placement_frame>" if placement else ""
    path = tmp_path / "w.sdf"
    path.write_text(f'<sdf version="1.8"><world name="w"><include><uri>model://crate</uri>{frame}'
                    f'<pose>10 0 -20 0 0 0</pose></include></world></sdf>')
    scene = load_scene(path, device="cpu", model_paths=[tmp_path / "models"])
    lo, hi = scene.bounds
    assert hi[2] == pytest.approx(top, abs=1e-6)
    assert hi[0] == pytest.approx(10.0 if placement == "corner" else 10.5, abs=1e-6)


def test_submesh_center_moves_the_bounding_box_centre_to_the_origin(tmp_path):
    # A corner tetrahedron (0,0,0), (2,0,0), (0,2,0), (0,0,2) (Z up, metres): its bounding-box centre is (1, 1, 1),
    # its vertex mean (0.5, 0.5, 0.5). Gazebo's SubMesh::Center moves the box centre to the origin, so placed at
    # (0, 0, -10) it spans x, y -1..1 and z -11..-9 (the vertex mean would give -0.5..1.5 and -10.5..-8.5).
    tetra = [(0, 0, 0), (2, 0, 0), (0, 2, 0), (0, 0, 2)]
    faces = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    (tmp_path / "tetra.dae").write_text(collada_text(corners=tetra, faces=faces, unit=1.0, up="Z_UP"))
    path = tmp_path / "w.sdf"
    path.write_text('<sdf version="1.9"><world name="w"><model name="m"><pose>0 0 -10 0 0 0</pose><link name="l">'
                    '<visual name="v"><geometry><mesh><uri>tetra.dae</uri>'
                    '<submesh><name>rock</name><center>true</center></submesh></mesh></geometry></visual>'
                    '</link></model></world></sdf>')
    lo, hi = load_scene(path, device="cpu").bounds
    np.testing.assert_allclose(lo, [-1.0, -1.0, -11.0], atol=1e-6)
    np.testing.assert_allclose(hi, [1.0, 1.0, -9.0], atol=1e-6)
