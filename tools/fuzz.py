"""Long fuzz run of every loader (USD text, OBJ/PLY/STL, YAML configs and rigs, dataset manifests).

Runs ``tests/test_fuzz.py`` with ``OCEANSIM_FUZZ_EXAMPLES`` examples per property (CI runs 25)::

    python tools/fuzz.py            # 5000 examples per property
    python tools/fuzz.py 20000 -k rig

Extra arguments go to pytest. Every input must give a result or an ``OceanSimError``; a failure prints the
shrunk input that triggers it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    examples = argv[0] if argv and argv[0].isdigit() else "5000"
    rest = argv[1:] if argv and argv[0].isdigit() else argv
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "OCEANSIM_FUZZ_EXAMPLES": examples}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root / "tests" / "test_fuzz.py"), *rest]
    return subprocess.call(cmd, cwd=root, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
