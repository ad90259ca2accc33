"""Diffuse-colour textures: images read into linear RGB texels, and their packing into one device atlas.

A :class:`Texture` is an image (row 0 = the top) in linear RGB, with a wrap mode per axis. Texture coordinates
follow USD, OBJ and trimesh (OpenGL): ``(u, v) = (0, 0)`` is the image's bottom-left corner, ``(1, 1)`` its
top-right; the centre of texel (row, col) of an H x W image is at ``u = (col + 0.5) / W``,
``v = 1 - (row + 0.5) / H``. The camera samples bilinearly between texel centres (kernels/camera.py).

Colour: 8-bit images are sRGB-encoded unless said otherwise (UsdUVTexture ``sourceColorSpace = "auto"`` or
``"sRGB"``, glTF base colour, OBJ ``map_Kd``) and are decoded to linear here; ``"raw"`` keeps the codes / 255;
16-bit images are divided by 65535 and taken as linear unless ``"sRGB"`` is given. UsdUVTexture's ``scale`` and
``bias`` (and glTF's ``baseColorFactor``) apply to the linear values (``texel * scale + bias``), then the result
is clipped to [0, 1] (an albedo).

Device layout (:class:`TextureAtlas`): every texture's texels are concatenated into one flat ``vec3`` array,
row-major per texture; ``info[t] = (offset, width, height, wrap_s * 4 + wrap_t)`` locates texture ``t``. One
packed array (rather than one Warp array per texture) lets a kernel take any number of textures as two
arguments; rectangles need no packing search, and each texture keeps its own wrap mode and exact texel grid
(no bleeding between neighbours in an atlas image). Texels are float32 linear RGB: 12 bytes each.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from oceansim_py.errors import SceneError

#: Wrap modes per texture axis, as the kernel numbers them (UsdUVTexture ``wrapS``/``wrapT`` tokens).
WRAP_MODES = {"repeat": 0, "clamp": 1, "mirror": 2, "black": 3}
#: Colour spaces of ``inputs:sourceColorSpace``.
COLOR_SPACES = ("auto", "sRGB", "raw")


def srgb_to_linear(code: np.ndarray) -> np.ndarray:
    """IEC 61966-2-1 sRGB decoding of values in [0, 1] (float64)."""
    c = np.asarray(code, dtype=np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


@dataclasses.dataclass(frozen=True, eq=False)
class Texture:
    """A diffuse-colour texture: ``texels`` (H, W, 3) float32 linear RGB in [0, 1] (row 0 = the image's top),
    the ``source`` file it came from, and the wrap modes along u (``wrap_s``) and v (``wrap_t``), each one of
    :data:`WRAP_MODES`. Compared and hashed by identity (one object per loaded image)."""

    texels: np.ndarray
    source: str
    wrap_s: str = "repeat"
    wrap_t: str = "repeat"

    def __post_init__(self) -> None:
        t = np.asarray(self.texels, dtype=np.float32)
        if t.ndim != 3 or t.shape[2] != 3 or t.shape[0] < 1 or t.shape[1] < 1:
            raise SceneError(f"{self.source}: texture texels must have shape (H, W, 3), got {t.shape}")
        for name in ("wrap_s", "wrap_t"):
            if getattr(self, name) not in WRAP_MODES:
                raise SceneError(f"{self.source}: {name} must be one of {sorted(WRAP_MODES)}, got "
                                 f"{getattr(self, name)!r}")
        t = np.ascontiguousarray(t)
        t.setflags(write=False)
        object.__setattr__(self, "texels", t)

    @property
    def width(self) -> int:
        return int(self.texels.shape[1])

    @property
    def height(self) -> int:
        return int(self.texels.shape[0])

    def wrap_code(self) -> int:
        return WRAP_MODES[self.wrap_s] * 4 + WRAP_MODES[self.wrap_t]


def read_texture(path: str | Path, *, color_space: str = "auto", scale: Any = (1.0, 1.0, 1.0),
                 bias: Any = (0.0, 0.0, 0.0), wrap_s: str = "repeat", wrap_t: str = "repeat",
                 where: str = "") -> Texture:
    """Read an image file into a :class:`Texture` (see the module docstring for colour handling). ``where``
    prefixes errors (the scene file and prim or material that names the image); a missing or unreadable file
    is a :class:`SceneError` naming it."""
    from PIL import Image

    p = Path(path)
    prefix = f"{where}: " if where else ""
    if color_space not in COLOR_SPACES:
        raise SceneError(f"{prefix}texture {p}: sourceColorSpace must be one of {list(COLOR_SPACES)}, got "
                         f"{color_space!r}")
    if not p.is_file():
        raise SceneError(f"{prefix}texture file {p} does not exist; fix the path or add the image")
    try:
        with Image.open(p) as img:
            img.load()
            mode = img.mode
            if mode in ("I;16", "I;16B", "I;16L", "I"):
                data = np.asarray(img, dtype=np.float64) / 65535.0
                data = np.repeat(data[..., None], 3, axis=2)
                bits = 16
            else:
                data = np.asarray(img.convert("RGB"), dtype=np.float64) / 255.0
                bits = 8
    except (OSError, ValueError) as exc:
        raise SceneError(f"{prefix}texture file {p} is not a readable image ({exc})") from None
    srgb = color_space == "sRGB" or (color_space == "auto" and bits == 8)
    linear = srgb_to_linear(data) if srgb else data
    s = np.asarray(scale, dtype=np.float64).reshape(-1)[:3]
    b = np.asarray(bias, dtype=np.float64).reshape(-1)[:3]
    if s.size != 3 or b.size != 3 or not (np.isfinite(s).all() and np.isfinite(b).all()):
        raise SceneError(f"{prefix}texture {p}: scale and bias must be finite RGB(A) values, got {scale!r}, {bias!r}")
    return Texture(np.clip(linear * s + b, 0.0, 1.0).astype(np.float32), str(p), wrap_s, wrap_t)


def texture_from_image(image: Any, source: str, factor: Any = (1.0, 1.0, 1.0)) -> Texture:
    """A :class:`Texture` from an in-memory 8-bit image (a PIL image or an (H, W, 3|4) uint8 array, sRGB, as
    glTF base-colour and OBJ ``map_Kd`` images are), multiplied by a linear RGB ``factor``."""
    data = np.asarray(image.convert("RGB") if hasattr(image, "convert") else image)
    if data.ndim != 3 or data.shape[2] < 3 or data.dtype != np.uint8:
        raise SceneError(f"{source}: texture image must be 8-bit RGB(A), got {data.dtype} of shape {data.shape}")
    linear = srgb_to_linear(data[..., :3] / 255.0) * np.asarray(factor, dtype=np.float64).reshape(1, 1, 3)
    return Texture(np.clip(linear, 0.0, 1.0).astype(np.float32), source)


def obj_texture_files(path: Path) -> list[tuple[Path, Path]]:
    """(material library, image) of every ``map_Kd`` of an OBJ file's ``mtllib`` libraries (image paths
    relative to the library's folder; options before the file name skipped). Libraries that do not exist are
    left to the OBJ reader."""
    out = []
    for line in path.read_text(errors="replace").splitlines():
        if not line.startswith("mtllib "):
            continue
        lib = path.parent / line[len("mtllib "):].strip()
        if not lib.is_file():
            continue
        for entry in lib.read_text(errors="replace").splitlines():
            words = entry.split()
            if len(words) >= 2 and words[0] == "map_Kd":
                out.append((lib, lib.parent / words[-1]))
    return out


@dataclasses.dataclass
class TextureAtlas:
    """Every texture of a scene packed for the device (module docstring): ``texels`` (N, 3) float32 and
    ``info`` (T, 4) int32 ``(offset, width, height, wrap code)``; ``index`` maps a :class:`Texture` (by
    identity) to its row of ``info``. An atlas without textures holds one black texel and one unused row, so
    the kernel's arrays are never empty."""

    texels: np.ndarray
    info: np.ndarray
    index: dict[int, int]

    @classmethod
    def pack(cls, textures: list[Texture]) -> "TextureAtlas":
        unique: list[Texture] = []
        index: dict[int, int] = {}
        for t in textures:
            if id(t) not in index:
                index[id(t)] = len(unique)
                unique.append(t)
        if not unique:
            return cls(np.zeros((1, 3), np.float32), np.array([[0, 1, 1, 0]], np.int32), {})
        sizes = [t.width * t.height for t in unique]
        if sum(sizes) >= 2**31:
            raise SceneError(f"the scene's textures hold {sum(sizes)} texels, more than the 2^31 a device atlas "
                             f"can index; downsample the texture images")
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        info = np.array([[o, t.width, t.height, t.wrap_code()] for o, t in zip(offsets, unique)], dtype=np.int32)
        texels = np.concatenate([t.texels.reshape(-1, 3) for t in unique]).astype(np.float32)
        return cls(texels, info, index)

    @property
    def count(self) -> int:
        return len(self.index)
