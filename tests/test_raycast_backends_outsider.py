"""Ray-cast backend checks written as an outside user would: Embree made unavailable in the running process with
``sys.modules["embreex"] = None`` (the usual way to simulate a missing optional package), and Embree against
Warp on a scene of instanced and animated meshes with rays from inside them and per-ray range cut-offs."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from oceansim_py import ConfigError, load_scene
from oceansim_py.raycast import ENV_VAR, rtcore
from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig

embree = pytest.mark.skipif(not rtcore.embree_available(), reason="needs the embree extra (embreex)")


@embree
def test_blocking_embreex_after_embree_was_loaded_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Embree is loaded first (as earlier tests of a session would), then ``embreex`` is made unimportable: the
    library loaded before must not hide that. Before the fix the loaded library was remembered, so
    ``raycast_backend='embree'`` still gave an Embree scene; and a block applied before the first load was
    remembered for the rest of the process."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert load_scene("tank").raycast_backend == "embree"
    monkeypatch.setitem(sys.modules, "embreex", None)
    assert not rtcore.embree_available()
    with pytest.raises(ConfigError, match=r"raycast_backend='embree'.*pip install 'oceansim_py\[embree\]'"):
        load_scene("tank", raycast_backend="embree")
    with pytest.raises(ConfigError, match=r"ImagingSonarConfig\.raycast_backend.*oceansim_py\[embree\]"):
        ImagingSonarConfig(raycast_backend="embree")
    assert load_scene("tank").raycast_backend == "warp"  # auto falls back to warp
    monkeypatch.setenv(ENV_VAR, "embree")
    with pytest.raises(ConfigError, match=r"OCEANSIM_RAYCAST_BACKEND='embree'.*oceansim_py\[embree\]"):
        load_scene("tank")
    monkeypatch.undo()  # the package importable again: Embree is back
    assert rtcore.embree_available()
    assert load_scene("tank", raycast_backend="embree").raycast_backend == "embree"
