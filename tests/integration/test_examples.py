"""Every example under examples/ runs against a real worker, so none can
rot."""
import os
import pathlib
import subprocess

import pytest

pytestmark = pytest.mark.integration

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_lifecycle_script(worker, bed):
    result = subprocess.run(
        [str(EXAMPLES / "lifecycle.sh")], capture_output=True, text=True, timeout=120,
        env={**os.environ, "TRIBUTARY_URL": worker.url,
             "TOPIC": bed.unique_topic("lifecycle")})
    assert result.returncode == 0, result.stderr + result.stdout
    for step in ["> POST /connectors", "> PUT /connectors/lifecycle-demo/pause",
                 "> DELETE /connectors/lifecycle-demo"]:
        assert step in result.stderr
    assert result.stdout.strip().endswith("[]"), "the connector was deleted"
