#!/usr/bin/env bash
# Creates the end-to-end test's virtual environment at .venv-e2e (repository root) and
# installs tests/e2e/requirements.txt into it. Idempotent: does nothing when every pinned
# requirement is already installed at its version. Needs CPython >= 3.11 with venv and
# pip, and PyPI. Prints the interpreter to use on its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/.venv-e2e"
requirements="$root/tests/e2e/requirements.txt"
python="${PYTHON:-python3}"

"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "tests/e2e needs Python >= 3.11")'
if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi
# Every `name==version` line must be installed at exactly that version.
installed() {
    "$venv/bin/python" - "$requirements" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version

for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, _, pinned = line.partition("==")
    try:
        if version(name.strip()) != pinned.strip():
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
}
if installed; then
    echo "setup.sh: $venv is up to date" >&2
else
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    installed || { echo "setup.sh: requirements still not satisfied after pip install" >&2; exit 1; }
fi
echo "$venv/bin/python"
