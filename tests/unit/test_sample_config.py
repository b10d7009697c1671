"""etc/gantt.conf.sample is what oslo-config-generator makes of the code."""

import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).parents[2]


def test_sample_config_is_current(tmp_path):
    out = tmp_path / "sample.conf"
    generator = pathlib.Path(sys.executable).parent / "oslo-config-generator"
    subprocess.run(
        [str(generator), "--config-file",
         str(REPO / "etc/gantt-config-generator.conf"),
         "--output-file", str(out)], check=True, cwd=REPO)
    assert out.read_text() == (REPO / "etc/gantt.conf.sample").read_text(), (
        "run 'make sample-config' and commit etc/gantt.conf.sample")
