"""Hand-number audit of the positioning and communication sensors (USBL, LBL, acoustic and optical modems) and
the current fields, on geometries the other tests do not use."""

from __future__ import annotations

import numpy as np
import pytest

from oceansim_py.sensors.acoustic_modem import AcousticModem, AcousticModemConfig
from oceansim_py.sensors.modem_common import EVENT_COLUMNS

COL = {name: k for k, name in enumerate(EVENT_COLUMNS)}
STILL = np.array([0.0, 0.0, -10.0, 0.0, 0.0, 0.0, 1.0])


def _one_message_modem(distance: float, send: float, header_bits: float) -> AcousticModem:
    return AcousticModem(AcousticModemConfig(node_positions=((distance, 0.0, -10.0),), header_bits=header_bits,
                                             messages=((send, "topside", "vehicle", "0x"),), bit_rate=640.0,
                                             noise=False))


@pytest.mark.parametrize("split", [None, 3, 4])
def test_modem_event_on_a_sample_boundary_lands_in_exactly_that_sample(split) -> None:
    # Samples every 0.1 s (t_m = m / 10). Message A: sent at 0 s over 300 m at 1500 m/s (0.2 s) with 64 header bits
    # at 640 bit/s (0.1 s): received at 0.2 + 0.1 = 0.30000000000000004 in binary, i.e. at 0.3 s -> sample 3.
    # Message B: sent at 0.1 s over 150 m (0.1 s), no header: received at exactly 0.2 s -> sample 2 only.
    # (Before the fix A fell in no sample: 0.30000000000000004 > t_3 = 0.3 and <= t_4 - 0.1 = 0.30000000000000004;
    # and B fell in samples 2 and 3: 0.2 > t_3 - 0.1 = 0.19999999999999998.)
    times = np.arange(10) / 10.0
    for modem, expected in ((_one_message_modem(300.0, 0.0, 64.0), 3), (_one_message_modem(150.0, 0.1, 0.0), 2)):
        if split is None:
            events = modem.measure(STILL, times, rate_hz=10.0).events
        else:
            events = (modem.measure(STILL, times[:split], rate_hz=10.0).events
                      + modem.measure(STILL, times[split:], frame_index=split, rate_hz=10.0).events)
        counts = [len(e) for e in events]
        assert counts == [int(m == expected) for m in range(10)]


def test_modem_events_follow_a_pose_array_changed_in_place() -> None:
    # Topside 1500 m away at 1500 m/s: the first bit arrives 1.0 s after sending; move the vehicle (the same array,
    # changed in place) to 750 m from it: 0.5 s. (Before the fix the cached 1.0 s came back.)
    modem = AcousticModem(AcousticModemConfig(node_positions=((1500.0, 0.0, -10.0),), noise=False,
                                              messages=((0.0, "topside", "vehicle", "hi"),)))
    pose = STILL.copy()
    assert modem.events(pose)[0][0, COL["arrival_time"]] == pytest.approx(1.0)
    pose[0] = 750.0
    assert modem.events(pose)[0][0, COL["arrival_time"]] == pytest.approx(0.5)
