"""The Ray executor: one task per shard on a pool of actors (extra ``distributed``: ``pip install
'oceansim_py[distributed]'``).

Each actor is a :class:`~oceansim_py.dataset.worker.ShardWorker` that loads the scene, builds the BVH and
compiles the kernels once, then renders shard after shard. On a GPU cluster every actor asks for one GPU; on
CPUs each asks for ``threads`` CPUs and uses that many launch threads. Every actor slot has its own Warp kernel
cache folder (``<warp cache>/ray-worker-<k>``), reused between runs, so concurrent workers on one node never
write the same cache files. Actors write their shards straight into ``out``, which must therefore be on a file
system every node sees (the driver's local disk for a local Ray). A shard whose actor dies is rendered again on
a fresh actor, up to ``ACTOR_RETRIES`` times, then the run stops with a ``DatasetError``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

from oceansim_py.dataset.rig import Rig
from oceansim_py.dataset.shards import ShardPlan
from oceansim_py.errors import ConfigError, DatasetError, OceanSimError
from oceansim_py.runtime import MAX_CPU_THREADS

#: How many times a shard is rendered again on a fresh actor after its actor died.
ACTOR_RETRIES = 2


class _ActorBody:
    """What runs inside each Ray actor process."""

    def __init__(self, rig: Rig, out: str, device: Any, slot: int, threads: int | None, compress: bool) -> None:
        import warp as wp

        if threads is not None:
            os.environ["OCEANSIM_THREADS"] = str(threads)
        base = os.environ.get("OCEANSIM_WARP_CACHE") or wp.config.kernel_cache_dir
        if base:
            wp.config.kernel_cache_dir = os.path.join(str(Path(base).parent), f"{Path(base).name}-ray-worker-{slot}")
        from oceansim_py.dataset.worker import ShardWorker

        self.worker = ShardWorker(rig, out, device, compress)

    def run_shard(self, plan: ShardPlan) -> dict[str, Any]:
        return self.worker.run_shard(plan)


def run_on_ray(rig: Rig, out: Path, plans: list[ShardPlan], device: Any, address: str | None,
               num_workers: int | None = None, compress: bool = False) -> Iterator[dict[str, Any]]:
    """Render ``plans`` on Ray actors; yields each shard's record as it completes (in completion order)."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("--executor ray needs Ray: pip install 'oceansim_py[distributed]'") from exc
    if not plans:
        return
    started_here = False
    if not ray.is_initialized():
        try:
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
                started_here = True
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ... for a bad address
            raise ConfigError(f"--ray-address {address or '(local)'}: could not start or reach Ray ({exc})") from exc
    actors: list[Any] = []
    try:
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        use_gpu = gpus > 0 and (device is None or str(device).startswith("cuda"))
        # never more actors than shards (a spare actor would only load the scene) nor than the cluster can place
        # (an actor waiting for a GPU or CPU that never frees would keep its first shard forever); on CPUs the
        # actors share the CPUs out, so a run of 2 shards on 16 CPUs gets 2 actors of 8 threads
        if use_gpu:
            n = max(1, min(num_workers or gpus, gpus, len(plans)))
            options = {"num_gpus": 1, "num_cpus": 1}
            threads = None
        else:
            cpus = max(1, int(resources.get("CPU", 1)))
            n = max(1, min(num_workers or cpus, cpus, len(plans)))
            threads = max(1, min(MAX_CPU_THREADS, cpus // n))
            options = {"num_cpus": threads}
        actor_cls = ray.remote(**options)(_ActorBody)
        slots = iter(range(1 << 30))

        def new_actor() -> Any:
            return actor_cls.remote(rig, str(out), None if use_gpu else (device or "cpu"), next(slots), threads,
                                    compress)

        actors.extend(new_actor() for _ in range(n))
        attempts: dict[int, int] = {}
        pending: dict[Any, tuple[Any, ShardPlan]] = {}
        queue = list(plans)
        for actor in actors:
            if queue:
                plan = queue.pop(0)
                pending[actor.run_shard.remote(plan)] = (actor, plan)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            ref = done[0]
            actor, plan = pending.pop(ref)
            try:
                record = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                # The actor process died (OOM kill, node lost, segfault): render the shard again on a fresh one.
                attempts[plan.index] = attempts.get(plan.index, 0) + 1
                actors.remove(actor)
                if attempts[plan.index] > ACTOR_RETRIES:
                    raise DatasetError(
                        f"{out}: shard {plan.index}: its Ray worker died {attempts[plan.index]} times ({exc}); "
                        f"the shards already complete are intact. Check the workers' memory and logs (ray logs), "
                        f"then rerun with --resume") from None
                actor = new_actor()
                actors.append(actor)
                pending[actor.run_shard.remote(plan)] = (actor, plan)
                continue
            except ray.exceptions.RayTaskError as exc:
                cause = exc.cause if hasattr(exc, "cause") else exc
                if isinstance(cause, OceanSimError):
                    raise cause from None
                raise
            if queue:
                plan = queue.pop(0)
                pending[actor.run_shard.remote(plan)] = (actor, plan)
            yield record
    finally:
        # also when a shard fails or the caller stops early: on a cluster the actors would otherwise keep their
        # GPUs / CPUs (and any shard still rendering) until the driver exits
        for actor in actors:
            ray.kill(actor)
        if started_here:
            ray.shutdown()
