"""The package version, on its own so that any module (the dataset manifest, the CLI) can read it without
importing the package root and with it the whole public API."""

__version__ = "0.1.0"
