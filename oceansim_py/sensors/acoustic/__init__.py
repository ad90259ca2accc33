"""The device chain every acoustic sensor shares (docs/PHYSICS.md §1b, docs/PHYSICS_ACOUSTIC_CHAIN.md).

- :mod:`.absorption`: sea-water absorption (Francois & Garrison 1982).
- :mod:`.beam_pattern`: line-array tapers, beam patterns and the range/bearing point-spread kernels.
- :mod:`.chain`: the device parameters (sonar equation, receiver, TVG) and the render chain that turns a fan
  of cast rays into a coherent, point-spread, noisy, time-varying-gained image.
- :mod:`.display`: 8-bit display mapping from dB (gain, dynamic range), gamma and colour maps.

Kernels live in :mod:`oceansim_py.kernels.acoustic_chain`.
"""
