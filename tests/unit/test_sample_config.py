"""etc/gantt.conf.sample and etc/policy.yaml.sample are what the
oslo generators make of the code."""

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


def test_policy_sample_is_current(tmp_path):
    out = tmp_path / "policy.yaml"
    generator = (pathlib.Path(sys.executable).parent
                 / "oslopolicy-sample-generator")
    subprocess.run([str(generator), "--namespace", "gantt",
                    "--output-file", str(out)], check=True, cwd=REPO)
    assert out.read_text() == (REPO / "etc/policy.yaml.sample").read_text(), (
        "run 'make sample-config' and commit etc/policy.yaml.sample")
