"""One module per ``oceansim-py`` subcommand, each with ``register(subparsers)``."""
