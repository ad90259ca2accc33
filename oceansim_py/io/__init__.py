"""Input/output helpers: YAML configs, image helpers, writers and message exports."""
