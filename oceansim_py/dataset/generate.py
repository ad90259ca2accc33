"""Batch dataset generation: plan shards, skip complete ones on resume, render the rest with an executor,
keep ``manifest.json`` current, and show progress.

Executors: ``local`` (in process: CPU thread chunks or one GPU) and ``ray`` (one task per shard on Ray actors
that keep the scene, BVH and compiled kernels alive). Both write byte-identical shards: every draw of noise is
a function of (seed, sensor, sample index, element), never of the order or place of rendering.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from oceansim_py.dataset.manifest import (FORMAT, FORMAT_VERSION, read_manifest, stale_temporaries, versions,
                                          write_manifest)
from oceansim_py.dataset.rig import Rig
from oceansim_py.dataset.lock import DatasetLock
from oceansim_py.dataset.shards import (ShardPlan, partial_name, plan_shards, remove_written, shard_name,
                                        verify_shard)
from oceansim_py.errors import ConfigError, DatasetError


def prepare_output(rig: Rig, out: Path, resume: bool,
                   plans: list[ShardPlan]) -> tuple[dict[str, Any] | None, dict[int, dict[str, Any]]]:
    """Check the output folder before any rendering: (existing manifest, records of the complete shards kept).

    A folder holding a different run (another rig fingerprint) is a ``ConfigError``; one holding this run is a
    ``DatasetError`` unless ``resume`` is set, and is then continued: every shard folder whose files match its
    ``shard.json`` and whose frames match this run's plan is kept (also one completed just before a kill, before
    the manifest could list it); partial shards are redone. (The scene file's content is checked once it is
    loaded: :func:`check_same_scene`.)
    """
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a folder")
    existing = read_manifest(out) if out.is_dir() else None
    if existing is None:
        if out.is_dir() and any(p.name.startswith(("shard_", ".shard_")) for p in out.iterdir()):
            raise ConfigError(f"--out {out}: holds shards but no manifest.json; choose another folder")
        return None, {}
    if existing.get("fingerprint") != rig.fingerprint():
        raise ConfigError(
            f"--out {out}: holds a different run (rig {existing.get('rig', {}).get('name')!r}; "
            f"{rig_differences(existing.get('rig'), rig.to_dict())}); choose another --out or delete that folder")
    if not resume:
        raise DatasetError(f"--out {out}: already holds this run (status {existing.get('status')!r}); pass --resume "
                           f"to keep its complete shards and render the rest, or choose another --out")
    listed = {rec["index"]: rec for rec in existing.get("shards", [])}
    kept: dict[int, dict[str, Any]] = {}
    for plan in plans:
        meta = verify_shard(out / shard_name(plan.index))
        if meta is None or meta.get("ticks") != [plan.tick_start, plan.tick_stop] or \
                meta.get("samples") != {k: list(v) for k, v in plan.samples.items()}:
            continue
        meta.pop("file_sha256", None)
        kept[plan.index] = {**meta, "render_seconds": listed.get(plan.index, {}).get("render_seconds")}
    return existing, kept


def rig_differences(then: Any, now: dict[str, Any], shown: int = 4) -> str:
    """What differs between the rig a dataset was begun with (``then``, its manifest's ``rig``) and ``now``, for an
    error: the differing keys, nested ones dotted (sensors by name: ``sensors.fls.config.max_range``), with both
    values where they are short; at most ``shown`` of them."""
    if not isinstance(then, dict):
        return "its manifest holds no rig"
    found: list[str] = []

    def walk(key: str, a: Any, b: Any) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b), key=str):
                walk(f"{key}.{k}" if key else str(k), a.get(k), b.get(k))
        elif a != b:
            text = f"{key} {a!r} then, {b!r} now"
            found.append(text if len(text) <= 80 else key)

    def by_name(rig: dict[str, Any]) -> dict[str, Any]:
        return {str(s.get("name")): s for s in rig.get("sensors", []) if isinstance(s, dict)}

    walk("", {k: v for k, v in then.items() if k not in ("source", "sensors")},
         {k: v for k, v in now.items() if k not in ("source", "sensors")})
    walk("sensors", by_name(then), by_name(now))
    if not found:
        return "other settings"
    return "differs in " + ", ".join(found[:shown]) + (f" and {len(found) - shown} more" if len(found) > shown else "")


def new_manifest(rig: Rig, sensors_meta: dict[str, Any], scene_meta: dict[str, Any]) -> dict[str, Any]:
    sensors = {}
    for spec in rig.sensors:
        sensors[spec.name] = {"type": spec.type, "rate_hz": spec.rate_hz, "mount": list(spec.mount),
                              "products": list(spec.products), "sensor_id": spec.sensor_id,
                              **sensors_meta[spec.name]}
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "rig": rig.to_dict(), "fingerprint": rig.fingerprint(),
            "versions": versions(), "seed": rig.seed, "frames": rig.frames, "tick_rate_hz": rig.tick_rate_hz,
            "start_time": rig.start_time, "scene": scene_meta, "sensors": sensors, "shards": [],
            "status": "running"}


def _progress(total: int, initial: int, disable: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="frame", desc="generate", disable=disable, dynamic_ncols=True,
                file=sys.stderr)


def generate(rig: Rig, out: str | Path, executor: str = "local", device: Any = None, resume: bool = False,
             ray_address: str | None = None, progress: bool = True,
             on_shard: Callable[[dict[str, Any]], None] | None = None, compress: bool = False) -> dict[str, Any]:
    """Generate (or continue) the dataset of ``rig`` into ``out``; returns the final manifest.

    The run holds an exclusive lock on ``out`` (:class:`~oceansim_py.dataset.lock.DatasetLock`); a folder that
    already holds this run is continued only with ``resume``, and (local executor) only if the scene loaded now
    matches the one the run began with (:func:`check_same_scene`). ``compress`` writes array products as
    deflate-compressed ``.npz`` (lossless; the loader reads both); a run is resumed with the setting it began with.

    ``on_shard`` is called with each new shard's record after the manifest lists it.
    """
    out = Path(out)
    if executor not in ("local", "ray"):
        raise ConfigError(f"--executor must be 'local' or 'ray', got {executor!r}")
    created = make_output_folder(out)
    try:
        with DatasetLock(out):
            return _generate_locked(rig, out, executor, device, resume, ray_address, progress, on_shard, compress)
    except BaseException:
        remove_empty_folders(created)      # a run refused before writing leaves no empty --out behind
        raise


def make_output_folder(out: Path) -> list[Path]:
    """Create ``out`` (and its parents); returns the folders it created, deepest first. A ``DatasetError`` naming
    the reason when that is impossible."""
    created = []
    for parent in [out, *out.parents]:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise DatasetError(f"--out {out}: {parent} exists and is not a folder; choose another --out")
            break
        created.append(parent)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(f"--out {out}: cannot create the folder ({exc.strerror}); choose another --out") from exc
    return created


def remove_empty_folders(folders: list[Path]) -> None:
    """Remove ``folders`` (deepest first) while they are empty; the first that is not, or cannot be removed, stops
    it (it holds what the run wrote, or someone else's files)."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _generate_locked(rig: Rig, out: Path, executor: str, device: Any, resume: bool, ray_address: str | None,
                     progress: bool, on_shard: Callable[[dict[str, Any]], None] | None,
                     compress: bool) -> dict[str, Any]:
    plans = plan_shards(rig.frames, rig.shard_size, rig.tick_rate_hz, {s.name: s.rate_hz for s in rig.sensors})
    existing, kept = prepare_output(rig, out, resume, plans)
    if existing is not None and bool(existing.get("compress", False)) != compress:
        flag = "with" if existing.get("compress") else "without"
        raise DatasetError(f"--out {out}: this run was begun {flag} --compress; resume it {flag} --compress")
    from oceansim_py.dataset.worker import ShardWorker

    t_start = time.perf_counter()
    local_worker = ShardWorker(rig, out, device, compress) if executor == "local" or existing is None else None
    if existing is not None and local_worker is not None:
        check_same_scene(existing, _scene_meta(local_worker.scene), out)
    for stale in out.glob(".shard_*.partial"):
        remove_written(stale)
    for tmp in stale_temporaries(out):     # no live writer owns one: this run holds the folder's lock
        try:
            tmp.unlink()
        except OSError as exc:
            raise DatasetError(f"{tmp}: cannot delete this manifest temporary of a killed run ({exc.strerror})") \
                from exc
    todo = [p for p in plans if p.index not in kept]
    if existing is None:
        assert local_worker is not None
        warn_blind_sensors(local_worker)
        manifest = new_manifest(rig, local_worker.metadata(), _scene_meta(local_worker.scene))
        manifest["compress"] = compress
    else:
        manifest = existing
        manifest["shards"] = [kept[i] for i in sorted(kept)]
        manifest["status"] = "running"
    write_manifest(out, manifest)

    bar = _progress(rig.frames, sum(p.frames for p in plans if p.index in kept), not progress)
    render_total = 0.0
    try:
        if executor == "local":
            assert local_worker is not None
            results: Iterable[dict[str, Any]] = (local_worker.run_shard(p) for p in todo)
        else:
            from oceansim_py.dataset.ray_executor import run_on_ray

            local_worker = None
            results = run_on_ray(rig, out, todo, device, ray_address, compress=compress)
        for record in results:
            for sensor, specs in record.pop("array_specs", {}).items():
                arrays = manifest["sensors"][sensor].setdefault("arrays", {})
                for product, spec in specs.items():
                    arrays.setdefault(product, {}).update(spec)
            manifest["shards"] = sorted([*manifest["shards"], record], key=lambda s: s["index"])
            write_manifest(out, manifest)
            render_total += record.get("render_seconds") or 0.0
            bar.update(record["frames"])
            if on_shard is not None:
                on_shard(record)
    finally:
        bar.close()
    elapsed = time.perf_counter() - t_start
    manifest["status"] = "complete"
    manifest["timing"] = {"wall_seconds": round(elapsed, 3), "render_seconds": round(render_total, 3),
                          "shards_rendered": len(todo), "frames_rendered": sum(p.frames for p in todo),
                          "shards_kept": len(kept), "executor": executor}
    write_manifest(out, manifest)
    return manifest


#: Vehicle poses along the run at which :func:`warn_blind_sensors` probes each sensor's surroundings.
BLIND_PROBE_POSES = 16


def warn_blind_sensors(worker: Any) -> list[str]:
    """Before a run renders: warn (:class:`~oceansim_py.diagnostics.EmptyViewWarning`, with the reason) for every
    ranged sensor of the rig that cannot see anything at all, i.e. none of the all-round probe rays of
    :func:`~oceansim_py.diagnostics.probe_hit_fraction` from its mount at :data:`BLIND_PROBE_POSES` times
    spread over the run hits the scene within its ``max_range`` (a rig that does not match its scene, geometry
    above the surface); the flat sea surface counts for a sensor that sees it (:func:`sees_flat_surface`). A sensor that sees geometry only outside its field of view is not caught here. Returns
    the names warned about."""
    import numpy as np

    from oceansim_py.diagnostics import probe_hit_fraction, sees_flat_surface, warn_if_blind
    from oceansim_py.poses import compose_poses

    rig = worker.rig
    end = rig.start_time + max(rig.frames - 1, 0) / rig.tick_rate_hz
    times = np.linspace(rig.start_time, end, min(BLIND_PROBE_POSES, max(rig.frames, 1)))
    vehicle = np.asarray(worker.trajectory.at(times), dtype=np.float64)
    blind = []
    for adapter in worker.sensors:
        max_range = getattr(adapter.config, "max_range", None)
        if max_range is None:
            continue
        positions = compose_poses(vehicle, np.asarray(adapter.spec.mount)[None, :])[:, :3]
        flat = worker.scene.sea_surface is None and sees_flat_surface(adapter.config)
        fraction = probe_hit_fraction(worker.scene, positions, float(max_range),
                                      float(worker.scene.surface_z) if flat else None)
        if warn_if_blind(f"sensor '{adapter.spec.name}' ({adapter.spec.type}) of {rig.source}", fraction,
                         worker.scene, positions, float(max_range)):
            blind.append(adapter.spec.name)
    return blind


def check_same_scene(manifest: dict[str, Any], scene_meta: dict[str, Any], out: Path) -> None:
    """Refuse to resume a run whose scene file changed since it began (the rig names the file, not its
    content): its triangle count, bounds or labels differ from the manifest's ``scene``, so the new shards would
    show another scene than the kept ones. A ``ConfigError`` naming what differs."""
    recorded = manifest.get("scene") or {}
    now = json.loads(json.dumps(scene_meta))          # as the manifest holds it (lists, not tuples or arrays)
    differs = [k for k in ("triangles", "bounds", "labels") if k in recorded and recorded[k] != now.get(k)]
    if differs:
        detail = "; ".join(f"{k} {recorded[k]!r} then, {now.get(k)!r} now" for k in differs)
        raise ConfigError(f"--out {out}: the scene {scene_meta.get('source')!r} changed since this run began "
                          f"({detail}); its complete shards show the old scene. Restore the scene, or choose "
                          f"another --out")


def _scene_meta(scene: Any) -> dict[str, Any]:
    lo, hi = scene.bounds
    return {"source": scene.source, "description": scene.description, "triangles": scene.num_triangles,
            "labels": scene.labels, "bounds": [lo.tolist(), hi.tolist()], "surface_z": scene.surface_z}


def summarize(manifest: dict[str, Any], out: Path) -> str:
    """Two lines for the end of a run: what the folder holds, and what this run did and how fast."""
    lines = [f"wrote {out}: {len(manifest['shards'])} shard(s), {manifest['frames']} frame(s), "
             f"{len(manifest['sensors'])} sensor(s) ({', '.join(manifest['sensors'])})"]
    t = manifest.get("timing")
    if t:
        wall = t["wall_seconds"]
        rate = f", {t['frames_rendered'] / wall:.2f} frames/s" if t["frames_rendered"] and wall > 0 else ""
        lines.append(f"  {t['shards_rendered']} shard(s) rendered, {t['shards_kept']} kept from before; "
                     f"{wall:.2f} s wall, {t['render_seconds']:.2f} s rendering{rate} ({t['executor']} executor)")
    return "\n".join(lines)


__all__ = ["ShardPlan", "generate", "partial_name", "prepare_output", "summarize"]
