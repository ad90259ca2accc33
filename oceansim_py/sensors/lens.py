"""Lens model of the underwater camera: Brown-Conrady distortion with OpenCV's coefficients, and vignetting.

Distortion (OpenCV's ``distCoeffs = (k1, k2, p1, p2, k3)``, its camera model exactly): an undistorted normalised
image point (x, y) = (X / Z, Y / Z) in OpenCV's camera frame (x right, y down, z forward) is drawn at

    r^2 = x^2 + y^2,   radial = 1 + k1 r^2 + k2 r^4 + k3 r^6
    x_d = x radial + 2 p1 x y + p2 (r^2 + 2 x^2)
    y_d = y radial + p1 (r^2 + 2 y^2) + 2 p2 x y
    (u, v) = (fx x_d + cx, fy y_d + cy)

with K the camera's ``camera_matrix()`` (principal point (W - 1) / 2, (H - 1) / 2 by default). The renderer goes
the other way: each pixel centre (u, v) = (col, row) is undistorted by the fixed-point iteration OpenCV's
``cv2.undistortPoints`` uses (x <- (x_d - tangential(x, y)) / radial(x, y), from x = x_d), run to convergence
(at most :data:`UNDISTORT_ITERATIONS` steps, not OpenCV's default 5), and the pixel's ray is the direction of
(x, y, 1). So a world point seen by a pixel projects with ``cv2.projectPoints(K, dist)`` onto that pixel, and a
straight line in the world is drawn curved exactly as the real lens with those coefficients draws it.

A set of coefficients is refused (:func:`check_distortion`) when the radial map r -> r radial(r) is not
increasing over the field the image covers (the image would fold over itself: no real lens), or when the
iteration does not converge at a border pixel to within :data:`UNDISTORT_TOLERANCE_PX`.

Vignetting: the relative illumination of a pixel, a factor on the irradiance reaching it:

    V = cos^4(theta) (with ``cos4``) * (1 + a1 rho^2 + a2 rho^4 + a3 rho^6)

theta the angle between the pixel's ray and the optical axis (the natural cos^4 law of a thin lens), rho the
pixel's distance from the principal point divided by the image's half diagonal (0.5 sqrt(W^2 + H^2) pixels),
(a1, a2, a3) the polynomial of a measured falloff (the even polynomial of e.g. Kang & Weiss 2000, Goldman 2010).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

#: Iteration cap and convergence tolerance (pixels) of the undistortion.
UNDISTORT_ITERATIONS = 200
UNDISTORT_TOLERANCE_PX = 1e-4

Coefficients = Sequence[float]


def distort(x: np.ndarray, y: np.ndarray, k: Coefficients) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's forward model: undistorted normalised (x, y) -> distorted normalised (x_d, y_d)."""
    k1, k2, p1, p2, k3 = (float(c) for c in k)
    r2 = x * x + y * y
    radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
    xd = x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x)
    yd = y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y
    return xd, yd


def undistort(xd: np.ndarray, yd: np.ndarray, k: Coefficients, iterations: int = UNDISTORT_ITERATIONS,
              tolerance: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Distorted normalised (x_d, y_d) -> undistorted (x, y) by cv2.undistortPoints' fixed-point iteration,
    stopped when no point moves by more than ``tolerance`` (normalised units) or after ``iterations`` steps."""
    k1, k2, p1, p2, k3 = (float(c) for c in k)
    xd = np.asarray(xd, dtype=np.float64)
    yd = np.asarray(yd, dtype=np.float64)
    x, y = xd.copy(), yd.copy()
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(iterations):
            r2 = x * x + y * y
            icdist = 1.0 / (1.0 + r2 * (k1 + r2 * (k2 + r2 * k3)))
            dx = 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x)
            dy = p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y
            nx, ny = (xd - dx) * icdist, (yd - dy) * icdist
            step = np.nanmax(np.abs(np.concatenate([(nx - x).ravel(), (ny - y).ravel()]))) if nx.size else 0.0
            x, y = nx, ny
            if not np.isfinite(step) or step < tolerance:
                break
    return x, y


def has_distortion(k: Coefficients) -> bool:
    return any(float(c) != 0.0 for c in k)


def pixel_rays(width: int, height: int, intrinsics: tuple[float, float, float, float],
               k: Coefficients) -> np.ndarray:
    """(H, W, 3) float32 unit rays in the sensor frame (FLU: x forward, y left, z up) through every pixel centre
    (u, v) = (col, row) of a lens with distortion ``k`` (module docstring)."""
    fx, fy, cx, cy = intrinsics
    v, u = np.meshgrid(np.arange(height, dtype=np.float64), np.arange(width, dtype=np.float64), indexing="ij")
    x, y = undistort((u - cx) / fx, (v - cy) / fy, k)
    d = np.stack([np.ones_like(x), -x, -y], axis=-1)
    return (d / np.linalg.norm(d, axis=-1, keepdims=True)).astype(np.float32)


def check_distortion(width: int, height: int, intrinsics: tuple[float, float, float, float],
                     k: Coefficients) -> str | None:
    """Why the coefficients cannot describe a lens over this image, or ``None`` when they can (module
    docstring): the undistortion must converge at every border pixel (round trip within
    :data:`UNDISTORT_TOLERANCE_PX`) and r -> r radial(r) must increase up to the largest undistorted radius."""
    fx, fy, cx, cy = intrinsics
    cols, rows = np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64)
    u = np.concatenate([cols, cols, np.zeros(height), np.full(height, width - 1.0)])
    v = np.concatenate([np.zeros(width), np.full(width, height - 1.0), rows, rows])
    xd, yd = (u - cx) / fx, (v - cy) / fy
    x, y = undistort(xd, yd, k)
    with np.errstate(over="ignore", invalid="ignore"):
        rx, ry = distort(x, y, k)
        err = np.hypot((rx - xd) * fx, (ry - yd) * fy)
    if not np.isfinite(err).all() or err.max() > UNDISTORT_TOLERANCE_PX:
        worst = int(np.nanargmax(np.where(np.isfinite(err), err, np.inf)))
        return (f"cannot be inverted at the image border (pixel col {u[worst]:g}, row {v[worst]:g}: the "
                f"undistortion does not converge); the coefficients are too strong for this field of view")
    k1, k2, _, _, k3 = (float(c) for c in k)
    r_max = 1.05 * float(np.hypot(x, y).max())
    r = np.linspace(0.0, r_max, 2001)
    r2 = r * r
    slope = 1.0 + r2 * (3.0 * k1 + r2 * (5.0 * k2 + r2 * 7.0 * k3))   # d(r radial(r)) / dr
    if (slope <= 0).any():
        fold = float(r[np.argmax(slope <= 0)])
        return (f"fold the image: the radial map r (1 + k1 r^2 + k2 r^4 + k3 r^6) stops increasing at "
                f"normalised radius {fold:.3f}, inside the field the image covers (radius {r_max / 1.05:.3f}); "
                f"no real lens does that: use smaller |k1|, |k2|, |k3|")
    return None


def vignetting_map(width: int, height: int, intrinsics: tuple[float, float, float, float], rays: np.ndarray | None,
                   cos4: bool, polynomial: Coefficients) -> np.ndarray:
    """(H, W) float32 relative illumination V of every pixel (module docstring); ``rays`` the pixels' unit rays
    (FLU, x = the optical axis), ``None`` for pinhole rays."""
    fx, fy, cx, cy = intrinsics
    v, u = np.meshgrid(np.arange(height, dtype=np.float64), np.arange(width, dtype=np.float64), indexing="ij")
    out = np.ones((height, width), dtype=np.float64)
    if cos4:
        if rays is None:
            x, y = (u - cx) / fx, (v - cy) / fy
            cos_theta = 1.0 / np.sqrt(1.0 + x * x + y * y)
        else:
            cos_theta = rays[..., 0].astype(np.float64)
        out *= cos_theta ** 4
    a1, a2, a3 = (float(c) for c in polynomial)
    rho2 = ((u - cx) ** 2 + (v - cy) ** 2) / (0.25 * (width * width + height * height))
    out *= 1.0 + rho2 * (a1 + rho2 * (a2 + rho2 * a3))
    return out.astype(np.float32)
