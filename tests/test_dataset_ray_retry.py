"""The Ray executor renders a shard again on a fresh actor when its actor dies, and stops with a clear
DatasetError when it keeps dying. Ray is replaced by an in-process stand-in whose actors die on cue, so the
test needs no cluster and runs in milliseconds."""

from __future__ import annotations

import sys
import types

import pytest

from oceansim_py import DatasetError
from oceansim_py.dataset import ray_executor
from oceansim_py.dataset.shards import ShardPlan


class ActorDied(Exception):
    pass


def fake_ray(deaths: dict[int, int], cpus: int = 2) -> types.ModuleType:
    """A module with the slice of Ray's API run_on_ray uses (a cluster of ``cpus`` CPUs); shard i's actor dies
    deaths[i] times."""
    ray = types.ModuleType("ray")
    ray.exceptions = types.SimpleNamespace(RayActorError=ActorDied, RayTaskError=type("RayTaskError", (Exception,), {}))
    ray.created = []
    ray.killed = []

    class Ref:
        def __init__(self, plan):
            self.plan = plan

    class Method:
        def remote(self, plan):
            return Ref(plan)

    class Actor:
        def __init__(self, *args):
            self.args = args
            self.run_shard = Method()
            ray.created.append(self)

    class ActorClass:
        def remote(self, *args):
            return Actor(*args)

    ray.is_initialized = lambda: True
    ray.cluster_resources = lambda: {"CPU": cpus}
    ray.options = []
    ray.remote = lambda **options: (ray.options.append(options), lambda cls: ActorClass())[1]
    ray.wait = lambda refs, num_returns: (refs[:1], refs[1:])
    ray.kill = ray.killed.append

    def get(ref):
        if deaths.get(ref.plan.index, 0) > 0:
            deaths[ref.plan.index] -= 1
            raise ActorDied(f"actor died rendering shard {ref.plan.index}")
        return {"index": ref.plan.index}

    ray.get = get
    return ray


PLANS = [ShardPlan(i, 2 * i, 2 * i + 2, {"s": (2 * i, 2 * i + 2)}) for i in range(3)]


def test_dead_actor_is_replaced_and_the_shard_retried(monkeypatch, tmp_path):
    ray = fake_ray({1: 2})
    monkeypatch.setitem(sys.modules, "ray", ray)
    records = list(ray_executor.run_on_ray(object(), tmp_path, PLANS, "cpu", None, num_workers=2))
    assert sorted(r["index"] for r in records) == [0, 1, 2]
    assert len(ray.created) == 2 + 2          # two actors, plus one fresh actor per death
    assert len(ray.killed) == 2               # the live ones are released at the end


def test_actor_that_keeps_dying_is_a_dataset_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", fake_ray({2: 10}))
    with pytest.raises(DatasetError, match=r"shard 2: its Ray worker died 3 times .*rerun with --resume"):
        list(ray_executor.run_on_ray(object(), tmp_path, PLANS, "cpu", None, num_workers=1))


def test_actors_are_released_when_a_shard_fails_or_the_caller_stops(monkeypatch, tmp_path):
    # were killed only after every shard succeeded: a shard that kept failing, or a caller that stopped reading
    # the records, left the live actors (and their GPUs on a cluster) to the end of the driver process
    ray = fake_ray({0: 10})
    monkeypatch.setitem(sys.modules, "ray", ray)
    with pytest.raises(DatasetError):
        list(ray_executor.run_on_ray(object(), tmp_path, PLANS, "cpu", None, num_workers=2))
    # actors 0 and 1; shard 0 kills actor 0, then its fresh actors 2 and 3 (the third death stops the run) while
    # actor 1 renders shards 1 and 2: actor 1 is the one alive at the end, and it is released
    assert len(ray.created) == 4
    assert ray.killed == [ray.created[1]]

    ray = fake_ray({})
    monkeypatch.setitem(sys.modules, "ray", ray)
    records = ray_executor.run_on_ray(object(), tmp_path, PLANS, "cpu", None, num_workers=2)
    assert next(records)["index"] == 0
    records.close()
    assert sorted(map(id, ray.killed)) == sorted(map(id, ray.created))


def test_cpu_actors_share_out_the_cluster_for_the_shards_there_are(monkeypatch, tmp_path):
    # 16 CPUs and 3 shards: 3 actors of 16 // 3 = 5 threads each (were 3 actors of 16 // 16 = 1 thread: the
    # thread count was computed for one actor per CPU before the actors were cut to the shard count)
    ray = fake_ray({}, cpus=16)
    monkeypatch.setitem(sys.modules, "ray", ray)
    records = list(ray_executor.run_on_ray(object(), tmp_path, PLANS, "cpu", None))
    assert sorted(r["index"] for r in records) == [0, 1, 2]
    assert ray.options == [{"num_cpus": 5}]
    assert [a.args[4] for a in ray.created] == [5, 5, 5]   # threads passed to each actor
    # more workers asked for than CPUs: no more actors than the cluster can place (2), one thread each
    ray = fake_ray({}, cpus=2)
    monkeypatch.setitem(sys.modules, "ray", ray)
    list(ray_executor.run_on_ray(object(), tmp_path, PLANS, "cpu", None, num_workers=8))
    assert len(ray.created) == 2 and ray.options == [{"num_cpus": 1}]
    # a 4096-CPU cluster and one shard: one actor, its launch threads capped at runtime.MAX_CPU_THREADS (1024)
    ray = fake_ray({}, cpus=4096)
    monkeypatch.setitem(sys.modules, "ray", ray)
    list(ray_executor.run_on_ray(object(), tmp_path, PLANS[:1], "cpu", None))
    assert [a.args[4] for a in ray.created] == [1024]
