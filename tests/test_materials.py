"""Materials and labels: the impedance formula, YAML tables, and inheritance through USD hierarchies."""

from __future__ import annotations

from pathlib import Path

import pytest
from pxr import Gf, Sdf, Usd, UsdGeom, UsdShade, Vt

from oceansim_py import ConfigError, SceneError, load_scene
from oceansim_py.scene.materials import (BUILTIN_MATERIALS, Material, MaterialTable, impedance_reflectivity,
                                         material_named)


# -- the table -----------------------------------------------------------------------------------------------

def test_steel_reflectivity_by_hand():
    # Z_water = 1026 * 1500 = 1 539 000; Z_steel = 7850 * 5900 = 46 315 000 (kg m^-2 s^-1)
    # R = (46 315 000 - 1 539 000) / (46 315 000 + 1 539 000) = 44 776 000 / 47 854 000 = 0.935679358...
    # mu = R^2 = 0.875495861...
    assert impedance_reflectivity(7850.0, 5900.0) == pytest.approx(0.8754958611, abs=1e-9)
    steel = BUILTIN_MATERIALS["steel"]
    assert steel.reflectivity == pytest.approx(0.8754958611, abs=1e-9)
    assert (steel.density, steel.sound_speed) == (7850.0, 5900.0)


def test_water_like_material_reflects_nothing():
    assert impedance_reflectivity(1026.0, 1500.0) == 0.0
    # mud: Z = 1420 * 1490 = 2 115 800; R = 576 800 / 3 654 800 = 0.157820...; mu = 0.024907...
    assert BUILTIN_MATERIALS["mud"].reflectivity == pytest.approx(0.0249072, abs=1e-6)


def test_yaml_table_adds_and_overrides(tmp_path):
    path = tmp_path / "mats.yaml"
    path.write_text("materials:\n"
                    "  hull_paint: {albedo: [0.8, 0.1, 0.1], reflectivity: 0.6}\n"
                    "  basalt: {albedo: [0.1, 0.1, 0.1], density: 2900, sound_speed: 5800}\n"
                    "  Steel: {reflectivity: 0.7}\n")
    table = MaterialTable.from_yaml(path)
    assert table["hull_paint"] == Material("hull_paint", 0.6, (0.8, 0.1, 0.1))
    # basalt: Z = 2900 * 5800 = 16 820 000; R = 15 281 000 / 18 359 000 = 0.832344...; mu = 0.692797...
    assert table["BASALT"].reflectivity == pytest.approx(0.6927966, abs=1e-6)
    assert table["steel"].reflectivity == 0.7 and table["steel"].albedo == BUILTIN_MATERIALS["steel"].albedo
    assert MaterialTable()["steel"].reflectivity == pytest.approx(0.8754958611, abs=1e-9)   # built-in untouched


@pytest.mark.parametrize("text,message", [
    ("materials:\n  x: {albedo: [0.5, 0.5, 0.5], reflectivity: 0.5, colour: red}\n", r"unknown key\(s\) \['colour'\]"),
    ("materials:\n  x: {albedo: [0.5, 0.5, 0.5], density: 1000}\n", "both 'density'"),
    ("materials:\n  x: {albedo: [0.5, 0.5], reflectivity: 0.5}\n", "albedo must be a list of three numbers"),
    ("materials:\n  x: {albedo: [0.5, 0.5, 0.5], reflectivity: 1.5}\n", r"reflectivity must lie in \[0, 1\]"),
    ("materials: {}\nextra: 1\n", r"unknown top-level key\(s\) \['extra'\]"),
    # quoted numbers and booleans are refused naming the field (were a bare TypeError, or True read as mu = 1)
    ("materials:\n  x: {albedo: [0.5, 0.5, 0.5], reflectivity: '0.5'}\n", "reflectivity must be a number"),
    ("materials:\n  x: {albedo: [0.5, 0.5, 0.5], reflectivity: true}\n", "reflectivity must be a number"),
    ("materials:\n  x: {albedo: [0.5, 0.5, 0.5], density: '2000', sound_speed: 1700}\n", "density must be a number"),
    ("materials:\n  x: {albedo: [0.5, 0.5, 0.5], scattering_strength: '-20'}\n", "scattering_strength must be a nu"),
    ("materials:\n  x: {albedo: [red, 0.5, 0.5], reflectivity: 0.5}\n", "albedo must be three numbers"),
])
def test_yaml_table_errors(tmp_path, text, message):
    path = tmp_path / "bad_mats.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        MaterialTable.from_yaml(path)
    assert "bad_mats.yaml" in str(info.value)


# -- USD inheritance ---------------------------------------------------------------------------------------

def new_stage(tmp_path: Path, name: str = "m.usda") -> tuple[Usd.Stage, Path]:
    path = tmp_path / name
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    return stage, path


def tile(stage: Usd.Stage, path: str, x: float = 0.0) -> Usd.Prim:
    mesh = UsdGeom.Mesh.Define(stage, path)
    mesh.CreatePointsAttr(Vt.Vec3fArray([Gf.Vec3f(x, 0, 0), Gf.Vec3f(x + 1, 0, 0), Gf.Vec3f(x, 1, 0)]))
    mesh.CreateFaceVertexCountsAttr(Vt.IntArray([3]))
    mesh.CreateFaceVertexIndicesAttr(Vt.IntArray([0, 1, 2]))
    return mesh.GetPrim()


def set_attr(prim: Usd.Prim, name: str, type_name, value) -> None:
    prim.CreateAttribute(name, type_name).Set(value)


def bind(stage: Usd.Stage, prim: Usd.Prim, material_name: str) -> None:
    mat = UsdShade.Material.Define(stage, f"/Looks/{material_name}")
    UsdShade.MaterialBindingAPI.Apply(prim).Bind(mat)


@pytest.fixture()
def hierarchy_scene(tmp_path):
    stage, path = new_stage(tmp_path)
    world = UsdGeom.Xform.Define(stage, "/World").GetPrim()
    set_attr(world, "oceansim:material", Sdf.ValueTypeNames.String, "steel")
    set_attr(world, "semantics:labels:class", Sdf.ValueTypeNames.TokenArray, Vt.TokenArray(["pier"]))
    UsdGeom.Scope.Define(stage, "/World/Looks")
    UsdShade.Material.Define(stage, "/World/Looks/Unused")       # a Scope of materials is not a node
    tile(stage, "/World/A")
    b = tile(stage, "/World/B")
    set_attr(b, "oceansim:reflectivity", Sdf.ValueTypeNames.Float, 0.25)
    group = UsdGeom.Xform.Define(stage, "/World/Group").GetPrim()
    bind(stage, group, "Concrete")                                  # bound material name, case-insensitive
    tile(stage, "/World/Group/C")
    d = tile(stage, "/World/Group/D")
    UsdGeom.Gprim(d).CreateDisplayColorAttr(Vt.Vec3fArray([Gf.Vec3f(1, 0, 0)]))
    fancy = tile(stage, "/World/Group/Fancy")
    bind(stage, fancy, "FancyShader")                               # not in the table: keeps the inherited one
    other = UsdGeom.Xform.Define(stage, "/Other").GetPrim()
    e = tile(stage, "/Other/E")
    UsdGeom.Gprim(e).CreateDisplayColorAttr(Vt.Vec3fArray([Gf.Vec3f(0.2, 0.4, 0.6), Gf.Vec3f(1, 1, 1)]))
    f = tile(stage, "/Other/F")
    set_attr(f, "oceansim:albedo", Sdf.ValueTypeNames.Color3f, Gf.Vec3f(0.1, 0.2, 0.3))
    set_attr(f, "semantic:Semantics:params:semanticType", Sdf.ValueTypeNames.String, "class")
    set_attr(f, "semantic:Semantics:params:semanticData", Sdf.ValueTypeNames.String, "rock")
    g = UsdGeom.Xform.Define(stage, "/Other/G").GetPrim()
    set_attr(g, "semantics:labels:category", Sdf.ValueTypeNames.TokenArray, Vt.TokenArray(["junk"]))
    set_attr(g, "semantics:labels:class", Sdf.ValueTypeNames.TokenArray, Vt.TokenArray(["crate"]))
    set_attr(g, "oceansim:albedo", Sdf.ValueTypeNames.Color3f, Gf.Vec3f(0.9, 0.9, 0.9))
    h = tile(stage, "/Other/G/H")
    set_attr(h, "oceansim:material", Sdf.ValueTypeNames.Token, "Wood")
    i = tile(stage, "/Other/I")
    set_attr(i, "semantic:A:params:semanticType", Sdf.ValueTypeNames.String, "color")
    set_attr(i, "semantic:A:params:semanticData", Sdf.ValueTypeNames.String, "yellow")
    set_attr(i, "semantic:B:params:semanticType", Sdf.ValueTypeNames.String, "class")
    set_attr(i, "semantic:B:params:semanticData", Sdf.ValueTypeNames.String, "buoy")
    set_attr(other, "primvars:displayColor", Sdf.ValueTypeNames.Color3fArray, Vt.Vec3fArray([Gf.Vec3f(0, 1, 0)]))
    stage.GetRootLayer().Save()
    return load_scene(path, device="cpu")


def test_oceansim_material_and_labels_inherit(hierarchy_scene):
    s = hierarchy_scene
    steel = BUILTIN_MATERIALS["steel"]
    a = s.node("/World/A")
    assert a.material == steel and a.label == "pier"
    b = s.node("/World/B")
    assert (b.material.name, b.material.reflectivity, b.material.albedo) == ("steel", 0.25, steel.albedo)
    assert s.node("/World").label == "pier"
    # the labels of the device arrays follow the nodes
    assert s.label_of(a.id) == "pier"
    assert s.geometry.object_reflectivity.numpy()[b.id] == pytest.approx(0.25)


def test_bound_material_name_and_display_color(hierarchy_scene):
    s = hierarchy_scene
    concrete = BUILTIN_MATERIALS["concrete"]
    assert s.node("/World/Group/C").material == concrete
    assert s.node("/World/Group/C").label == "pier"
    # a named material's albedo wins over displayColor
    assert s.node("/World/Group/D").material == concrete
    # a bound material that is not in the table leaves the inherited one (concrete from the group)
    assert s.node("/World/Group/Fancy").material == concrete
    # no named material: displayColor (first value) gives the albedo of the default material
    e = s.node("/Other/E").material
    assert e.name == "default" and e.reflectivity == 0.5
    assert e.albedo == pytest.approx((0.2, 0.4, 0.6))
    # displayColor inherited from /Other
    assert s.node("/Other/I").material.albedo == pytest.approx((0.0, 1.0, 0.0))


def test_albedo_override_semantic_labels_and_name_fallback(hierarchy_scene):
    s = hierarchy_scene
    f = s.node("/Other/F")
    assert f.material.albedo == pytest.approx((0.1, 0.2, 0.3)) and f.material.name == "default"
    assert f.label == "rock"                                           # Isaac semanticData
    assert s.node("/Other/G").label == "crate"                         # taxonomy "class" preferred
    h = s.node("/Other/G/H")
    wood = BUILTIN_MATERIALS["wood"]
    assert h.label == "crate"                                          # inherited from the labelled Xform
    # own oceansim:material (token, any case) with the parent's oceansim:albedo override
    assert (h.material.name, h.material.reflectivity) == ("wood", wood.reflectivity)
    assert h.material.albedo == pytest.approx((0.9, 0.9, 0.9))
    assert h.material.density == wood.density                          # reflectivity untouched: still impedance
    assert s.node("/Other/I").label == "buoy"                          # semanticType "class" preferred
    assert s.node("/Other/E").label == "E"                             # prim name
    assert s.node("/Other").label == "Other"
    assert set(s.labels) == {"pier", "rock", "crate", "buoy", "E", "Other"}
    assert [n.path for n in s if "Looks" in n.path] == []


def test_point_instances_inherit_from_instancer(tmp_path):
    stage, path = new_stage(tmp_path)
    inst = UsdGeom.PointInstancer.Define(stage, "/World/Rocks")
    set_attr(inst.GetPrim(), "oceansim:material", Sdf.ValueTypeNames.String, "rock")
    set_attr(inst.GetPrim(), "semantics:labels:class", Sdf.ValueTypeNames.TokenArray, Vt.TokenArray(["boulder"]))
    proto = tile(stage, "/World/Rocks/Protos/Slab")
    UsdGeom.Xformable(proto).AddTranslateOp().Set(Gf.Vec3d(0, 0, 2))
    plain = tile(stage, "/World/Rocks/Protos/Pebble")
    set_attr(plain, "oceansim:reflectivity", Sdf.ValueTypeNames.Double, 0.1)
    inst.CreatePrototypesRel().SetTargets([proto.GetPath(), plain.GetPath()])
    inst.CreateProtoIndicesAttr(Vt.IntArray([0, 1]))
    inst.CreatePositionsAttr(Vt.Vec3fArray([Gf.Vec3f(0, 0, 0), Gf.Vec3f(10, 0, 0)]))
    stage.GetRootLayer().Save()
    s = load_scene(path, device="cpu")
    slab = s.node("/World/Rocks/instance_0/Slab")
    assert slab.material == BUILTIN_MATERIALS["rock"] and slab.label == "boulder"
    assert slab.transform[2, 3] == pytest.approx(2.0)                 # the prototype's own transform is kept
    pebble = s.node("/World/Rocks/instance_1/Pebble")
    assert (pebble.material.name, pebble.material.reflectivity) == ("rock", 0.1)


def test_user_material_table_from_yaml_in_load_scene(tmp_path):
    stage, path = new_stage(tmp_path)
    prim = tile(stage, "/World/Hull")
    set_attr(prim, "oceansim:material", Sdf.ValueTypeNames.String, "hull_paint")
    stage.GetRootLayer().Save()
    yaml_path = tmp_path / "mats.yaml"
    yaml_path.write_text("materials:\n  hull_paint: {albedo: [0.8, 0.1, 0.1], reflectivity: 0.6}\n")
    s = load_scene(path, device="cpu", materials=yaml_path)
    assert s.node("/World/Hull").material == Material("hull_paint", 0.6, (0.8, 0.1, 0.1))
    with pytest.raises(SceneError, match=r"m\.usda: prim /World/Hull: oceansim:material names unknown material "
                                         r"'hull_paint'; known materials are \['air', 'aluminium'"):
        load_scene(path, device="cpu")


@pytest.mark.parametrize("name,type_name,value,message", [
    ("oceansim:reflectivity", Sdf.ValueTypeNames.Float, 1.5, r"reflectivity must lie in \[0, 1\]"),
    ("oceansim:albedo", Sdf.ValueTypeNames.Color3f, Gf.Vec3f(2, 0, 0), "albedo must be three values in"),
    ("oceansim:reflectivity", Sdf.ValueTypeNames.String, "shiny", "oceansim:reflectivity must be a float"),
])
def test_bad_material_attributes_name_file_and_prim(tmp_path, name, type_name, value, message):
    stage, path = new_stage(tmp_path, "badmat.usda")
    prim = tile(stage, "/World/Thing")
    set_attr(prim, name, type_name, value)
    stage.GetRootLayer().Save()
    with pytest.raises(SceneError, match=r"badmat\.usda: prim /World/Thing.*" + message):
        load_scene(path, device="cpu")


def test_material_named_is_case_insensitive_and_names_the_holder_of_an_unknown_name():
    table = MaterialTable()
    assert material_named(table, "Steel", "hull.obj") is BUILTIN_MATERIALS["steel"]
    with pytest.raises(SceneError, match=r"^hull\.obj: unknown material 'unobtainium'; known materials are "
                                         r"\['air', .*\] \(add it in a materials YAML file\)$"):
        material_named(table, "unobtainium", "hull.obj")
    with pytest.raises(SceneError, match=r"^m\.usda: prim /World/Hull: oceansim:material names unknown material "
                                         r"'paint'"):
        material_named(table, "paint", "m.usda: prim /World/Hull", "oceansim:material")


def test_mesh_collada_and_bathymetry_readers_share_the_unknown_material_error(tmp_path):
    import numpy as np
    import trimesh

    from oceansim_py.scene.bathymetry import BathymetryGrid, iter_tiles
    from oceansim_py.scene.collada import read_collada
    from oceansim_py.scene.meshes import read_mesh_file

    obj = tmp_path / "box.obj"
    trimesh.creation.box().export(obj)
    with pytest.raises(SceneError, match=r"box\.obj: unknown material 'unobtainium'; known materials are"):
        read_mesh_file(obj, MaterialTable(), material="unobtainium")
    dae = tmp_path / "box.dae"
    with pytest.raises(SceneError, match=r"box\.dae: unknown material 'unobtainium'; known materials are"):
        read_collada(dae, MaterialTable(), material="unobtainium")
    grid = BathymetryGrid(z=-np.ones((3, 3)), x=np.arange(3.0), y=np.arange(3.0), geographic=False, crs=None,
                          source="g.tif")
    with pytest.raises(SceneError, match=r"g\.tif: unknown material 'unobtainium'; known materials are"):
        next(iter_tiles(grid, "unobtainium"))
    with pytest.raises(SceneError, match=r"g\.tif: depth band \(0, 5, 'mud2'\): unknown material 'mud2'; known"):
        next(iter_tiles(grid, "sand", depth_bands=[(0, 5, "mud2")]))
    assert {name for tile in iter_tiles(grid, "sand", depth_bands=[(0, 5, "Rock")]) for name, _ in tile.materials} \
        == {"rock"}


def test_scattering_strength_db_to_mu_by_hand():
    # S = -27 dB (sand) -> mu = 10^(-2.7) = 0.00199526231497; S = -10 dB -> 0.1; S = 0 dB -> 1; numpy scalars accepted
    import numpy as np

    assert Material.from_properties("s", (0.5, 0.5, 0.5), scattering_strength=-27).reflectivity == pytest.approx(
        0.00199526231497, rel=1e-9)
    assert Material.from_properties("s", (0.5, 0.5, 0.5), scattering_strength=np.float32(-10.0)).reflectivity \
        == pytest.approx(0.1, rel=1e-7)
    assert Material.from_properties("s", (0.5, 0.5, 0.5), scattering_strength=0).reflectivity == 1.0


def test_a_yaml_entry_giving_only_the_albedo_of_a_builtin_keeps_its_acoustics(tmp_path):
    # 'sand: {albedo: [...]}' recolours sand for the camera and keeps its impedance reflectivity: by hand
    # Z2 = 1990 * 1750 = 3 482 500, Z1 = 1026 * 1500 = 1 539 000, R = 1 943 500 / 5 021 500 = 0.387036,
    # mu = R^2 = 0.149797. It was refused ("give 'reflectivity', or both 'density' and 'sound_speed'"), while
    # the other way round ('steel: {reflectivity: 0.7}') kept the built-in albedo. A new name still needs them.
    path = tmp_path / "mats.yaml"
    path.write_text("materials:\n  Sand: {albedo: [0.6, 0.55, 0.4]}\n")
    sand = MaterialTable.from_yaml(path)["sand"]
    assert sand.albedo == (0.6, 0.55, 0.4)
    assert sand.reflectivity == pytest.approx(0.149797, abs=1e-6)
    assert (sand.density, sand.sound_speed) == (1990.0, 1750.0)
    path.write_text("materials:\n  kelp: {albedo: [0.1, 0.3, 0.1]}\n")
    with pytest.raises(ConfigError, match="give 'reflectivity'"):
        MaterialTable.from_yaml(path)
