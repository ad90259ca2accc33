"""Every ``@wp.kernel`` and ``@wp.func`` of the package: the math, no Python-side policy.

Modules: ``raycast`` (ray/BVH queries shared by all sensors), ``random`` (counter-based noise streams),
``geometry`` (vertex transforms for animated geometry), ``embree_cast`` (the batch cast of the ``embree`` ray-cast
backend), and one module per sensor family.
"""
