"""The thin scene graph: loading (USD, mesh files), materials, world geometry and the built-in scenes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oceansim_py.errors import ConfigError, SceneError
from oceansim_py.scene.graph import Node, RaycastResult, Scene, TriangleMesh
from oceansim_py.scene.materials import Material, MaterialTable
from oceansim_py.scene.meshes import MESH_SUFFIXES, read_mesh_file
from oceansim_py.scene.sea_surface import FLAT_SEA, SeaStateConfig, check_patch, sea_state_config, sea_state_or_flat

SDF_SUFFIXES = {".sdf", ".world"}
COLLADA_SUFFIXES = {".dae"}
USD_SUFFIXES = {".usd", ".usda", ".usdc", ".usdz"}


def scenes_dir() -> Path:
    """Folder of the built-in scenes: installed inside the package, or ``scenes/`` of a source checkout."""
    here = Path(__file__).resolve().parent.parent
    installed = here / "_scenes"
    return installed if installed.is_dir() else here.parent / "scenes"


def builtin_scene_names() -> list[str]:
    """Names of the built-in scenes (the ``.usda`` stems in :func:`scenes_dir`), sorted."""
    return sorted(p.stem for p in scenes_dir().glob("*.usda"))


def resolve_scene_path(path: str | Path) -> Path:
    """A file path, or the name of a built-in scene (``tank``, ``pier``, ``wreck``)."""
    p = Path(path)
    if p.exists():
        return p
    if p.suffix == "" and p.parent == Path("."):
        candidate = scenes_dir() / f"{p.name}.usda"
        if candidate.is_file():
            return candidate
        raise SceneError(f"{path}: neither a file nor a built-in scene; built-in scenes are "
                         f"{builtin_scene_names()}")
    raise SceneError(f"{p}: no such file")


def load_scene(path: str | Path, device: Any = None, materials: MaterialTable | str | Path | None = None,
               missing_references: str = "error", raycast_backend: str | None = None, sea_state: Any = None,
               sea_surface_size: float | None = None, sea_surface_resolution: float | None = None,
               **mesh_options: Any) -> Scene:
    """Load a scene from USD (.usd/.usda/.usdc/.usdz), a mesh file (.obj/.stl/.ply/.off/.glb/.gltf) or a built-in
    scene name, and build its BVH on ``device`` (``None``: cuda:0 if present, else cpu).

    ``materials``: a :class:`MaterialTable` or a YAML file of extra materials (added to the built-in table).
    ``missing_references`` (USD only): ``"error"`` (default) refuses a stage whose references, payloads or
    sublayers do not resolve, naming each prim and asset; ``"warn"`` logs them and loads the rest.
    ``mesh_options`` (mesh files only): ``up_axis`` ("Y"/"Z"), ``meters_per_unit``, ``material``.
    Gazebo SDF worlds (.sdf/.world; option ``model_paths``, see ``scene/sdf.py``) and Collada files (.dae;
    option ``material``, see ``scene/collada.py``) load too.
    ``raycast_backend``: ``"warp"``, ``"embree"`` or ``"auto"`` (``None``: ``OCEANSIM_RAYCAST_BACKEND``, else
    auto; see :mod:`oceansim_py.raycast`).
    ``sea_state``: a moving sea surface (a :class:`SeaStateConfig`, a mapping of its fields, optionally with
    ``preset``, or a preset name such as ``"moderate"``): a square patch ``sea_surface_size`` m on a side at
    ``sea_surface_resolution`` m spacing, centred on the scene, at the mean surface ``surface_z``, added with
    :meth:`Scene.add_sea_surface` (material ``sea_surface`` of the table). ``None`` (default): the scene's own sea
    state when its stage declares one (``customLayerData`` ``oceansim.sea_state``, as the built-in ``harbour``
    does), else the flat surface; ``"flat"``: the flat surface always. ``sea_surface_size`` /
    ``sea_surface_resolution`` ``None``: the stage's ``oceansim.sea_surface_size`` / ``sea_surface_resolution``
    when it declares them, else 200 m / 1 m; given to a load that makes no moving sea surface (``"flat"``, or no sea
    state given or declared) they are a ``ConfigError``, as in a rig.
    """
    if isinstance(materials, (str, Path)):
        table = MaterialTable.from_yaml(materials)
    else:
        table = materials if materials is not None else MaterialTable()
    flat = isinstance(sea_state, str) and sea_state == FLAT_SEA
    if flat:
        _refuse_patch_without_sea(sea_surface_size, sea_surface_resolution, "sea_state 'flat' has no wave patch")
    sea = None
    if sea_state is not None and not flat:
        sea = sea_state_or_flat(sea_state, "load_scene: sea_state")
        check_patch(200.0 if sea_surface_size is None else sea_surface_size,
                    1.0 if sea_surface_resolution is None else sea_surface_resolution,
                    "load_scene: sea_surface_size", "load_scene: sea_surface_resolution")
    scene = _load(path, device, table, missing_references, raycast_backend, mesh_options)
    declared = scene.metadata.get("sea_state")
    if sea is None and not flat and declared is not None:
        where = f"{scene.source}: customLayerData oceansim.sea_state"
        if not isinstance(declared, dict):
            raise SceneError(f"{where}: must be a dictionary of SeaStateConfig fields, got {type(declared).__name__}")
        try:
            sea = sea_state_config(dict(declared), where)
        except ConfigError as exc:
            raise SceneError(f"{where}: {exc}") from None
    if sea is None and not flat:
        _refuse_patch_without_sea(sea_surface_size, sea_surface_resolution,
                                  f"{scene.source} declares no sea state and none was given")
    if sea is not None:
        size = _patch_value(scene, "sea_surface_size", sea_surface_size, 200.0)
        resolution = _patch_value(scene, "sea_surface_resolution", sea_surface_resolution, 1.0)
        check_patch(size, resolution, f"{scene.source}: sea_surface_size", f"{scene.source}: sea_surface_resolution")
        scene.add_sea_surface(sea, size=size, resolution=resolution,
                              material=table["sea_surface"] if "sea_surface" in table else None)
    return scene


def _refuse_patch_without_sea(size: float | None, resolution: float | None, why: str) -> None:
    """A ``ConfigError`` when a sea-patch dimension is given to a load that makes no moving sea surface (it would be
    ignored; a rig refuses the same)."""
    given = [name for name, value in (("sea_surface_size", size), ("sea_surface_resolution", resolution))
             if value is not None]
    if given:
        raise ConfigError(f"load_scene: {given[0]}: applies to a moving sea surface, but {why}; give sea_state "
                          f"(e.g. 'moderate') or leave {' and '.join(given)} out")


def _patch_value(scene: Scene, key: str, given: float | None, default: float) -> float:
    """A sea-patch dimension (m): the one given, else the stage's declared ``oceansim.<key>``, else ``default``."""
    if given is not None:
        return given
    value = scene.metadata.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SceneError(f"{scene.source}: customLayerData oceansim.{key} must be a number of metres, got {value!r}")
    return float(value)


def _load(path: str | Path, device: Any, table: MaterialTable, missing_references: str,
          raycast_backend: str | None, mesh_options: dict[str, Any]) -> Scene:
    """Read ``path`` into a :class:`Scene` (see :func:`load_scene`)."""
    p = resolve_scene_path(path)
    suffix = p.suffix.lower()
    if suffix in USD_SUFFIXES:
        from oceansim_py.scene.usd import read_usd

        if mesh_options:
            raise SceneError(f"{p}: options {sorted(mesh_options)} apply to mesh files only; a USD stage "
                             f"carries its own up axis and units")
        nodes, metadata = read_usd(p, table, missing_references)
        return Scene(nodes, source=str(p), device=device, metadata=metadata, raycast_backend=raycast_backend)
    if suffix in MESH_SUFFIXES:
        nodes = read_mesh_file(p, table, **mesh_options)
        return Scene(nodes, source=str(p), device=device, metadata={}, raycast_backend=raycast_backend)
    if suffix in SDF_SUFFIXES or suffix in COLLADA_SUFFIXES:
        return _load_gazebo(p, suffix, device, table, mesh_options, raycast_backend)
    raise SceneError(f"{p}: unsupported file type {suffix or '(none)'}; use USD "
                     f"({', '.join(sorted(USD_SUFFIXES))}), a mesh ({', '.join(sorted(MESH_SUFFIXES))}), "
                     f"a Gazebo world ({', '.join(sorted(SDF_SUFFIXES))}) or Collada (.dae)")


def _load_gazebo(p: Path, suffix: str, device: Any, table: MaterialTable, options: dict[str, Any],
                 raycast_backend: str | None) -> Scene:
    """SDF worlds (option ``model_paths``) and Collada files (option ``material``)."""
    allowed = {"model_paths"} if suffix in SDF_SUFFIXES else {"material"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise SceneError(f"{p}: options {unknown} do not apply to {suffix} files; allowed: {sorted(allowed)}")
    if suffix in SDF_SUFFIXES:
        from oceansim_py.scene.sdf import read_sdf

        nodes, metadata = read_sdf(p, table, options.get("model_paths"))
        return Scene(nodes, source=str(p), device=device, metadata=metadata, raycast_backend=raycast_backend)
    from oceansim_py.scene.collada import read_collada

    return Scene(read_collada(p, table, options.get("material")), source=str(p), device=device, metadata={},
                 raycast_backend=raycast_backend)


__all__ = ["FLAT_SEA", "Material", "MaterialTable", "Node", "RaycastResult", "Scene", "SeaStateConfig", "TriangleMesh",
           "builtin_scene_names", "load_scene", "resolve_scene_path", "scenes_dir"]
