"""Shared fixtures: small in-memory scenes built from analytic geometry."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from oceansim_py.scene import Material, Node, Scene, TriangleMesh


def has_cuda() -> bool:
    from oceansim_py.runtime import init_warp

    init_warp()
    return wp.is_cuda_available()


def pytest_collection_modifyitems(config, items):  # noqa: ANN001 - pytest hook signature
    if has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


def quad(center, normal, size: float) -> TriangleMesh:
    """A square of side ``size`` (m) centred at ``center`` facing ``normal`` (two triangles, CCW seen from the
    normal side)."""
    n = np.asarray(normal, dtype=np.float64)
    n /= np.linalg.norm(n)
    helper = np.array([0.0, 0.0, 1.0]) if abs(n[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = np.cross(helper, n)
    u /= np.linalg.norm(u)
    v = np.cross(n, u)
    c = np.asarray(center, dtype=np.float64)
    h = size / 2
    verts = [c - h * u - h * v, c + h * u - h * v, c + h * u + h * v, c - h * u + h * v]
    return TriangleMesh(np.array(verts), np.array([[0, 1, 2], [0, 2, 3]]))


def make_scene(*parts: tuple[str, TriangleMesh, float], device: str = "cpu") -> Scene:
    """Scene of named meshes: each part is (name, mesh, reflectivity)."""
    nodes = [Node("/World")]
    for name, mesh, refl in parts:
        mat = Material.from_properties(name, (0.5, 0.5, 0.5), reflectivity=refl)
        nodes.append(Node(f"/World/{name}", mesh=mesh, material=mat, label=name, parent=nodes[0]))
    return Scene(nodes, device=device)


@pytest.fixture(scope="session")
def wall_scene() -> Scene:
    """A 40 m square wall facing -x at x = 5 m."""
    return make_scene(("wall", quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))


def generate_from_rig(folder, rig: dict):  # noqa: ANN001, ANN201 - a Path in, the loaded dataset out
    """Write ``rig`` to ``folder/rig.yaml``, run ``oceansim-py generate`` on the CPU into ``folder/ds`` as a user
    would, and return the dataset read back (``oceansim_py.dataset.load``)."""
    import yaml

    from oceansim_py.cli import main
    from oceansim_py.dataset import load

    (folder / "rig.yaml").write_text(yaml.safe_dump(rig))
    assert main(["generate", "--rig", str(folder / "rig.yaml"), "--out", str(folder / "ds"), "--no-progress",
                 "--device", "cpu"]) == 0
    return load(folder / "ds")


def run_in_threads(worker, n: int) -> None:  # noqa: ANN001 - any callable of the thread index
    """Run ``worker(k)`` for k = 0..n-1, each in its own thread, wait for all, and re-raise the first error."""
    import threading

    errors: list[BaseException] = []

    def guarded(k: int) -> None:
        try:
            worker(k)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
