"""gantt-simulate --from-placement authenticates as OpenStack clients do:
a keystoneauth session from clouds.yaml, OS_CLOUD or the OS_* variables,
the placement endpoint from the service catalog when no URL is given,
and a raw --token with a URL as before.

Keystone is a small one on a real socket (tests/fake_keystone.py) in
front of gantt's real REST API, which takes only tokens it issued. The
command runs as a subprocess with a clean environment: HOME and the
working directory are empty temporary directories, so no clouds.yaml is
found but the one a test names."""

import json
import socket
import subprocess
import sys
import types

import pytest
import requests
import yaml

from cloudfile import loader
from placement.db import store as store_mod
from tests import databases, fake_keystone

CLOUD = {"providers": [
    {"name": f"h{i}", "compute": {},
     "inventories": {"VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 200}}
    for i in range(3)]}
WORKLOAD = {
    "flavors": {"small": {"vcpus": 2, "memory_mb": 2048, "root_gb": 10}},
    "synthetic": {"seed": 3, "creates": 6,
                  "arrival": {"process": "fixed", "interval_s": 1},
                  "lifetime": {"distribution": "forever"}}}
FLAVOR = ["--flavor", "vcpus=2,memory_mb=2048,root_gb=10"]

_env = fake_keystone.client_env
_os_vars = fake_keystone.os_variables


@pytest.fixture(scope="module")
def cloud(tmp_path_factory):
    """Keystone, gantt's API behind it (its URL in the catalog) and a
    Keystone whose catalog has no placement."""
    work = tmp_path_factory.mktemp("placement")
    store = store_mod.Store.open(
        databases.make_conf(f"sqlite:///{work / 'p.sqlite'}"))
    loader.load(store, loader.parse(CLOUD, "cloud.yaml"))
    keystone = fake_keystone.Keystone()
    url, guard, stop = fake_keystone.guarded_placement(store, keystone)
    keystone.placement = url
    bare = fake_keystone.Keystone(placement=None)
    yield types.SimpleNamespace(keystone=keystone, url=url, guard=guard,
                                bare=bare)
    bare.stop()
    stop()
    keystone.stop()
    store.dispose()


@pytest.fixture
def home(tmp_path):
    """An empty directory to be HOME and the working directory."""
    path = tmp_path / "home"
    path.mkdir()
    return path


def _clouds_yaml(home, keystone, password=fake_keystone.PASSWORD,
                 auth_url=None, filename="clouds.yaml"):
    """A clouds.yaml defining the cloud 'lab' of ``keystone``."""
    path = home / "etc" / filename
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump({"clouds": {"lab": {
        "auth": {"auth_url": auth_url or keystone.auth_url,
                 "username": fake_keystone.USER, "password": password,
                 "project_name": fake_keystone.PROJECT,
                 "user_domain_name": "Default",
                 "project_domain_name": "Default"},
        "region_name": "RegionOne", "interface": "public",
        "identity_api_version": 3}}}))
    return str(path)


def simulate(home, env, *args):
    return subprocess.run(
        [sys.executable, "-m", "simulation.cli", *args], cwd=home, env=env,
        capture_output=True, text=True, timeout=300)


def _capacity(result):
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # keystoneauth's and openstacksdk's quiet
    return json.loads(result.stdout)


def _tokens_sent_since(cloud, start):
    return set(cloud.guard.seen[start:])


def test_capacity_from_the_catalog_with_os_variables(cloud, home):
    seen = len(cloud.guard.seen)
    result = simulate(home, _env(home, **_os_vars(cloud.keystone)),
                      "capacity", *FLAVOR, "--from-placement",
                      "--format", "json")
    report = _capacity(result)
    everything = report["groups"][0]
    assert (everything["group"], everything["hosts"]) == ("all hosts", 3)
    assert everything["fits"] == 12  # 3 hosts x 8 VCPU / 2
    # Keystone was asked with the OS_* credentials, and only its token
    # reached placement.
    post = cloud.keystone.posts[-1]["auth"]
    assert post["identity"]["password"]["user"]["name"] == "alice"
    assert post["scope"]["project"]["name"] == "demo"
    assert _tokens_sent_since(cloud, seen) == {cloud.keystone.issued[-1]}


def test_run_with_clouds_yaml_and_os_cloud(cloud, home):
    config = _clouds_yaml(home, cloud.keystone)
    (home / "w.yaml").write_text(yaml.safe_dump(WORKLOAD))
    seen = len(cloud.guard.seen)
    result = simulate(
        home, _env(home, OS_CLIENT_CONFIG_FILE=config, OS_CLOUD="lab"),
        "run", "--from-placement", "--workload", "w.yaml",
        "--out", "report", "--no-progress")
    assert result.returncode == 0, result.stderr
    report = json.loads((home / "report" / "report.json").read_text())
    # The run read the cloud behind the catalog's endpoint.
    assert report["inputs"]["cloud"] == cloud.url
    assert report["inputs"]["hosts"] == 3
    assert report["figures"]["placed"] == 6
    assert _tokens_sent_since(cloud, seen) == {cloud.keystone.issued[-1]}


def test_a_url_with_os_cloud_given_on_the_command_line(cloud, home):
    config = _clouds_yaml(home, cloud.keystone)
    seen = len(cloud.guard.seen)
    result = simulate(home, _env(home, OS_CLIENT_CONFIG_FILE=config),
                      "capacity", *FLAVOR, "--from-placement",
                      cloud.url + "/", "--os-cloud", "lab",
                      "--format", "json")
    assert _capacity(result)["groups"][0]["hosts"] == 3
    assert _tokens_sent_since(cloud, seen) == {cloud.keystone.issued[-1]}


def test_a_raw_token_with_a_url_still_works(cloud, home):
    token = requests.post(
        cloud.keystone.auth_url + "/auth/tokens", timeout=10,
        json={"auth": {"identity": {"methods": ["password"], "password": {
            "user": {"name": "alice", "password": "s3cret"}}}}}
    ).headers["X-Subject-Token"]
    # OS_* variables are there, and ignored: --token says what to send.
    env = _env(home, **_os_vars(cloud.keystone, password="wrong"))
    seen = len(cloud.guard.seen)
    result = simulate(home, env, "capacity", *FLAVOR, "--from-placement",
                      cloud.url, "--token", token, "--format", "json")
    assert _capacity(result)["groups"][0]["hosts"] == 3
    assert _tokens_sent_since(cloud, seen) == {token}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _refusals(cloud, home):
    """(env, argv after the command, the one line expected) of each
    refusal."""
    config = _clouds_yaml(home, cloud.keystone)
    wrong = _clouds_yaml(home, cloud.keystone, password="wrong",
                         filename="wrong.yaml")
    port = _free_port()
    away = _clouds_yaml(home, cloud.keystone, filename="away.yaml",
                        auth_url=f"http://127.0.0.1:{port}/v3")
    bare = _clouds_yaml(home, cloud.bare, filename="bare.yaml")
    missing = str(home / "nowhere" / "clouds.yaml")
    return {
        "unknown-os-cloud": (
            {"OS_CLIENT_CONFIG_FILE": config, "OS_CLOUD": "nope"},
            ["--from-placement"],
            f"OS_CLOUD names cloud 'nope' that {config} does not define "
            f"(it has: lab)"),
        "unknown-flag-cloud-no-file": (
            {}, ["--from-placement", "--os-cloud", "nope"],
            "--os-cloud names cloud 'nope' that no clouds.yaml defines "
            "(none found; looked at $OS_CLIENT_CONFIG_FILE, ./clouds.yaml,"
            " ~/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml)"),
        "config-file-missing": (
            {"OS_CLIENT_CONFIG_FILE": missing, "OS_CLOUD": "lab"},
            ["--from-placement"],
            f"OS_CLOUD names cloud 'lab' that no clouds.yaml defines "
            f"(OS_CLIENT_CONFIG_FILE names {missing}, which does not "
            f"exist)"),
        "wrong-password": (
            {"OS_CLIENT_CONFIG_FILE": wrong, "OS_CLOUD": "lab"},
            ["--from-placement"],
            f"Keystone at {cloud.keystone.auth_url} refused the "
            f"credentials of cloud 'lab' from OS_CLOUD (HTTP 401)"),
        "wrong-password-os-vars": (
            _os_vars(cloud.keystone, password="wrong"),
            ["--from-placement"],
            f"Keystone at {cloud.keystone.auth_url} refused the "
            f"credentials of the cloud of the OS_* variables (HTTP 401)"),
        "keystone-unreachable": (
            {"OS_CLIENT_CONFIG_FILE": away, "OS_CLOUD": "lab"},
            ["--from-placement"],
            f"cannot reach Keystone at http://127.0.0.1:{port}/v3 "
            f"(cloud 'lab' from OS_CLOUD): connection refused"),
        "no-placement-in-catalog": (
            {"OS_CLIENT_CONFIG_FILE": bare, "OS_CLOUD": "lab"},
            ["--from-placement"],
            "the service catalog of cloud 'lab' has no placement "
            "endpoint (interface public, region RegionOne); give "
            "--from-placement URL"),
        "other-region": (
            {"OS_CLIENT_CONFIG_FILE": config},
            ["--from-placement", "--os-cloud", "lab",
             "--os-region-name", "RegionTwo"],
            "cloud 'lab' from --os-cloud: Region RegionTwo is not a valid "
            "region name for cloud lab. Valid choices are RegionOne. "
            "Please note that region names are case sensitive."),
        "no-password": (
            {k: v for k, v in _os_vars(cloud.keystone).items()
             if k != "OS_PASSWORD"},
            ["--from-placement"],
            "the cloud of the OS_* variables: password is a required "
            "attribute"),
        "token-without-url": (
            {}, ["--from-placement", "--token", "abc"],
            "--token needs --from-placement URL: a raw token comes with "
            "no service catalog to find placement in"),
        "token-and-cloud": (
            {"OS_CLIENT_CONFIG_FILE": config},
            ["--from-placement", cloud.url, "--token", "abc",
             "--os-cloud", "lab"],
            "--token and --os-cloud: give one (a raw token or the cloud's "
            "credentials)"),
        "nothing-to-go-by": (
            {}, ["--from-placement"],
            "no placement endpoint: give --from-placement URL, or a cloud "
            "(--os-cloud NAME, OS_CLOUD, or OS_AUTH_URL and the other OS_* "
            "variables)"),
        "placement-refuses-the-token": (
            {}, ["--from-placement", cloud.url, "--token", "forged"],
            f"GET {cloud.url}/resource_providers: HTTP 401 Unauthorized: "
            f"Unauthorized no valid token"),
    }


REFUSALS = ["unknown-os-cloud", "unknown-flag-cloud-no-file",
            "config-file-missing", "wrong-password",
            "wrong-password-os-vars", "keystone-unreachable",
            "no-placement-in-catalog", "other-region", "no-password",
            "token-without-url", "token-and-cloud", "nothing-to-go-by",
            "placement-refuses-the-token"]


@pytest.mark.parametrize("case", REFUSALS)
def test_refusals_are_one_line_and_exit_2(cloud, home, case):
    variables, argv, line = _refusals(cloud, home)[case]
    result = simulate(home, _env(home, **variables), "capacity", *FLAVOR,
                      *argv)
    assert result.stdout == ""
    assert result.stderr == f"gantt-simulate: {line}\n"
    assert result.returncode == 2


def test_run_refuses_the_same_way(cloud, home):
    (home / "w.yaml").write_text(yaml.safe_dump(WORKLOAD))
    result = simulate(home, _env(home, OS_CLOUD="nope"), "run",
                      "--from-placement", "--workload", "w.yaml",
                      "--no-progress")
    assert result.returncode == 2
    assert result.stderr.startswith(
        "gantt-simulate: OS_CLOUD names cloud 'nope' that no clouds.yaml "
        "defines")
    assert len(result.stderr.splitlines()) == 1
    assert not (home / "simulation-report").exists()


def test_without_openstacksdk_a_cloud_says_how_to_install_it(cloud, home):
    code = ("import sys; sys.modules['openstack'] = None; "
            "from simulation import cli; sys.exit(cli.main(sys.argv[1:]))")
    result = subprocess.run(
        [sys.executable, "-c", code, "capacity", *FLAVOR,
         "--from-placement", "--os-cloud", "lab"], cwd=home,
        env=_env(home), capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr == (
        "gantt-simulate: openstacksdk is not installed (openstack); "
        "reading a cloud (--os-cloud, OS_CLOUD, OS_*) needs gantt's "
        "'openstack' extra: pip install 'gantt[openstack]'\n")
    # A raw token with a URL does without it.
    result = subprocess.run(
        [sys.executable, "-c", code, "capacity", *FLAVOR,
         "--from-placement", cloud.url, "--token", "forged"], cwd=home,
        env=_env(home), capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "HTTP 401" in result.stderr
