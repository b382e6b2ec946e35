#!/usr/bin/env bash
# Creates, once, the Python virtualenv for tributary's tests from tests/requirements.txt and
# prints its path on stdout (all else goes to stderr), so callers can do:
#   VENV=$(tests/bed/venv.sh) && "$VENV/bin/pytest" ...
# The venv is rebuilt when requirements.txt or the Python interpreter changes (hash marker).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REQS=$HERE/../requirements.txt
VENV=${TRIBUTARY_CACHE:-$HOME/.cache/tributary}/venv
PYTHON=${TRIBUTARY_PYTHON:-python3}
MARKER=$VENV/.requirements.sha256

stamp=$({ cat "$REQS"; "$PYTHON" -c 'import sys; print(sys.executable, sys.version)'; } | sha256sum | cut -d' ' -f1)
if [[ -x $VENV/bin/python && -f $MARKER && $(<"$MARKER") == "$stamp" ]]; then
  echo "$VENV"
  exit 0
fi

echo "venv.sh: creating $VENV from $REQS" >&2
# A fresh venv rather than an upgrade in place: no packages left over from older pins.
# The marker is written last, so an interrupted install is redone on the next call.
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
"$PYTHON" -m venv "$VENV" >&2
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQS" >&2
echo "$stamp" >"$MARKER"
echo "$VENV"
