"""The issue-17 navigation and communication kinds in a rig: written by ``generate``, read back with the schema's
shapes, dtypes and units, byte-identical whatever the batch and shard sizes, and exported to a ROS 2 bag read
back with the rosbags typestore."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from oceansim_py.cli import main
from oceansim_py.dataset import load
from oceansim_py.sensors import registry
from oceansim_py.sensors.modem_common import decode_events

NEW_KINDS = {"magnetometer", "usbl", "lbl", "acoustic_modem", "optical_modem"}

#: transect along +x at 0.5 m/s from (-1, 0, -1.5) in the tank, 6 ticks at 2 Hz
RIG = {
    "name": "nav", "scene": "tank", "seed": 3, "frames": 6, "tick_rate_hz": 2.0, "shard_size": 3, "batch_size": 2,
    "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [1.5, 0.0, -1.5], "speed": 0.5},
    "sensors": [
        {"name": "mag", "type": "magnetometer", "preset": "mems", "rate_hz": 2.0, "products": ["field", "true_field"]},
        {"name": "usbl", "type": "usbl", "rate_hz": 1.0, "mount": [0, 0, 0, 0, 90, 0],
         "config": {"beacon_ids": [4, 9], "beacon_positions": [[0.0, 0.0, -3.0], [30.0, 0.0, -2.0]]},
         "products": ["slant_range", "bearing", "elevation", "position", "fix", "travel_time", "reply_time",
                      "outlier", "occluded", "true_range", "true_bearing", "true_elevation"]},
        {"name": "lbl", "type": "lbl", "rate_hz": 1.0, "preset": "mf_lbl",
         "config": {"beacon_ids": [1, 2], "beacon_positions": [[0.0, 0.0, -3.0], [0.5, 0.5, -3.0]]},
         "products": ["range", "travel_time", "reply_time", "fix", "outlier", "occluded", "true_range"]},
        {"name": "modem", "type": "acoustic_modem", "rate_hz": 2.0,
         "config": {"node_positions": [[0.0, 0.0, 0.0]], "bit_rate": 1000.0,
                    "messages": [[0.2, "vehicle", "topside", "depth 1.5"], [1.0, "topside", "vehicle", "0xbeef"]]}},
        {"name": "optic", "type": "optical_modem", "rate_hz": 2.0,
         "config": {"node_ids": ["dock"], "node_positions": [[3.0, 0.0, -1.5]], "node_directions": [[-1, 0, 0]],
                    "messages": [[0.5, "vehicle", "dock", "ping"]]}},
        {"name": "dvl", "type": "dvl", "rate_hz": 2.0,
         "config": {"water_track": True, "current": "uniform", "current_velocity": [0.2, 0.0, 0.0], "blanking_distance": 0.1,
                    "water_layer": 0.2},
         "products": ["velocity", "valid", "water_velocity", "water_valid", "water_beam_velocity"]},
    ],
}


def generate(folder: Path, **changes) -> Path:
    rig = folder / "rig.yaml"
    rig.write_text(yaml.safe_dump({**RIG, **changes}))
    out = folder / "ds"
    assert main(["generate", "--rig", str(rig), "--out", str(out), "--no-progress", "--device", "cpu"]) == 0
    return out


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return generate(tmp_path_factory.mktemp("nav"))


def test_new_kinds_are_built_in_and_described() -> None:
    assert NEW_KINDS <= set(registry.kind_names())
    for name in NEW_KINDS:
        text = registry.get(name).describe()
        assert text.startswith(f"{name}: ") and "products" in text


def test_schema_is_what_the_dataset_holds(dataset: Path) -> None:
    reader = load(dataset, verify=True)
    manifest = json.loads((dataset / "manifest.json").read_text())
    for meta in manifest["sensors"].values():
        kind = registry.get(meta["type"])
        config = kind.make_config(meta["config"], "manifest")
        for name, spec in meta["arrays"].items():
            product = kind.product(name)
            expected = list(product.shape_for(config))
            assert [None if e is None else s for s, e in zip(spec["shape"], expected)] == expected, (kind.name, name)
            if "dtype" in spec:
                assert spec["dtype"] == product.dtype, (kind.name, name)
            assert spec["unit"] == product.unit
    frame = reader[2]                                       # t = 1.0 s, vehicle at x = -0.5 m
    assert frame["usbl"]["slant_range"].shape == (2,) and frame["usbl"]["position"].shape == (2, 3)
    assert frame["lbl"]["range"].shape == (2,)
    assert frame["mag"]["field"].shape == (3,)
    # the magnetometer's default field (D 0, I 60, 50 uT) seen by a level sensor facing east: (0, 25, -43.3) uT
    np.testing.assert_allclose(frame["mag"]["true_field"], [0.0, 25.0, -43.30127], atol=1e-4)
    assert np.isfinite(frame["dvl"]["velocity"]).all()


def test_modem_events_read_back_with_their_payloads(dataset: Path) -> None:
    reader = load(dataset)
    got = {}
    for name in ("modem", "optic"):
        for sample in reader.samples(name):
            for event in decode_events(sample, reader.sensors[name]):
                assert sample["time"] - 0.5 < event["receive_time"] <= sample["time"]
                got[(name, event["message"])] = event
    hello, beef, ping = got[("modem", 0)], got[("modem", 1)], got[("optic", 0)]
    assert hello["payload"] == b"depth 1.5" and hello["sender"] == "vehicle" and hello["receiver"] == "topside"
    assert beef["payload_hex"] == "beef" and beef["reason"] == "delivered"
    # vehicle at (-0.9, 0, -1.5) at 0.2 s, topside at the origin: 1.749 m, 1.17 ms
    assert hello["distance"] == pytest.approx(math.hypot(0.9, 1.5), rel=1e-6)
    assert hello["arrival_time"] - hello["send_time"] == pytest.approx(math.hypot(0.9, 1.5) / 1500, rel=1e-6)
    assert ping["delivered"] and ping["distance"] == pytest.approx(3.75, abs=1e-6)


def test_bytes_do_not_depend_on_batch_or_shard_size(dataset: Path, tmp_path: Path) -> None:
    other = generate(tmp_path, batch_size=5, shard_size=4)

    def contents(root: Path) -> dict[str, bytes]:
        out = {}
        for p in sorted(root.glob("shard_*/*/*")):
            if p.name != "samples.csv":
                out[f"{p.parent.name}/{p.name}"] = p.read_bytes()
        return out

    a, b = contents(dataset), contents(other)
    assert a.keys() == b.keys() and a == b
    ra, rb = load(dataset), load(other)
    for name in ("mag", "usbl", "lbl", "dvl"):
        for sa, sb in zip(ra.samples(name), rb.samples(name)):
            for key in sa:
                np.testing.assert_array_equal(np.asarray(sa[key]), np.asarray(sb[key]))


def test_export_has_a_message_type_per_new_stream(dataset: Path, tmp_path: Path) -> None:
    pytest.importorskip("rosbags")
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    from oceansim_py.export import export_dataset

    bag = tmp_path / "bag"
    summary = export_dataset(dataset, bag)
    assert not summary.skipped
    msgs: dict[str, list] = {}
    types = {}
    with AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as rd:
        for conn, ns, raw in rd.messages():
            msgs.setdefault(conn.topic, []).append((ns, rd.deserialize(raw, conn.msgtype)))
            types[conn.topic] = conn.msgtype
    assert types["/mag/field"] == "sensor_msgs/msg/MagneticField"
    assert types["/usbl/beacon_4"] == "geometry_msgs/msg/PointStamped"
    assert types["/lbl/range_1"] == "sensor_msgs/msg/Range"
    assert types["/modem/events"] == types["/optic/events"] == "std_msgs/msg/String"
    assert types["/dvl/dvl_water"] == "marine_acoustic_msgs/msg/Dvl"
    reader = load(dataset)
    field = reader.sample("mag", 2)["field"]
    m = msgs["/mag/field"][2][1].magnetic_field
    np.testing.assert_allclose([m.x, m.y, m.z], field * 1e-6, rtol=1e-12)
    usbl = reader.sample("usbl", 1)
    ns, point = msgs["/usbl/beacon_4"][1]
    assert ns == 1_000_000_000 and point.header.frame_id == "usbl"
    np.testing.assert_allclose([point.point.x, point.point.y, point.point.z], usbl["position"][0])
    rng = [msg.range for _, msg in msgs["/lbl/range_1"]]
    np.testing.assert_allclose(rng, [s["range"][0] for s in reader.samples("lbl")])
    events = [json.loads(msg.data) for _, msg in msgs["/modem/events"]]
    assert [e["payload_hex"] for e in events] == ["depth 1.5".encode().hex(), "beef"]
    # each event is logged at its reception (a 2 Hz sample holds the events received in the half second before it;
    # they were logged at that sample's time, up to 0.5 s late)
    for (ns, _), event in zip(msgs["/modem/events"], events):
        assert event["receive_time"] % 0.5 > 1e-6
        assert ns == round(event["receive_time"] * 1e9)
    water = msgs["/dvl/dvl_water"][0][1]
    assert water.velocity_mode == 2


def test_every_preset_of_the_new_kinds_is_valid() -> None:
    for name in NEW_KINDS | {"dvl"}:
        kind = registry.get(name)
        for preset in kind.preset_names():
            assert kind.config_class.preset(preset).validate() is None, (name, preset)
