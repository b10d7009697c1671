"""gantt-manage placement verify reads the other service as OpenStack
clients do: a keystoneauth session from clouds.yaml, OS_CLOUD or the
OS_* variables, placement from the service catalog when --against is
not given, and a raw --token with --against as before.

The other service is gantt's own REST API on the same database, behind
a small Keystone on a real socket (tests/fake_keystone.py) and taking
only the tokens it issued: verify finds no difference once it is let
in. gantt-manage runs as a subprocess with a clean environment (HOME
and the working directory empty temporary directories). The last tests
are of placement.adopt.cloud_auth in this process: which cloud is read
when none is named."""

import os
import subprocess
import sys
import types

import pytest
import requests
import yaml

from cloudfile import loader
from placement.adopt import cloud_auth
from placement.db import store as store_mod
from tests import databases, fake_keystone

CLOUD = {
    "traits": ["CUSTOM_GOLD"],
    "providers": [
        {"name": "h1", "compute": {}, "traits": ["CUSTOM_GOLD"],
         "inventories": {"VCPU": 8, "MEMORY_MB": 16384}},
        {"name": "h2", "compute": {},
         "inventories": {"VCPU": 4, "MEMORY_MB": 8192}}],
    "allocations": [
        {"consumer": "vm-1", "project_id": "demo", "user_id": "alice",
         "resources": {"h1": {"VCPU": 2, "MEMORY_MB": 1024}}}]}

_env = fake_keystone.client_env
_os_vars = fake_keystone.os_variables


@pytest.fixture(scope="module")
def cloud(tmp_path_factory):
    """gantt's database, its API behind Keystone (in the catalog), the
    config file naming the database."""
    work = tmp_path_factory.mktemp("verify")
    url = f"sqlite:///{work / 'gantt.sqlite'}"
    store = store_mod.Store.open(databases.make_conf(url))
    loader.load(store, loader.parse(CLOUD, "cloud.yaml"))
    keystone = fake_keystone.Keystone()
    endpoint, guard, stop = fake_keystone.guarded_placement(store, keystone)
    keystone.placement = endpoint
    conf = work / "gantt.conf"
    conf.write_text(f"[placement_database]\nconnection = {url}\n")
    yield types.SimpleNamespace(keystone=keystone, url=endpoint,
                                guard=guard, conf=str(conf))
    stop()
    keystone.stop()
    store.dispose()


@pytest.fixture
def home(tmp_path):
    path = tmp_path / "home"
    path.mkdir()
    return path


def _clouds_yaml(path, keystone, names=("lab",),
                 password=fake_keystone.PASSWORD):
    auth = {"auth_url": keystone.auth_url,
            "username": fake_keystone.USER, "password": password,
            "project_name": fake_keystone.PROJECT,
            "user_domain_name": "Default",
            "project_domain_name": "Default"}
    path.write_text(yaml.safe_dump({"clouds": {
        name: {"auth": auth, "region_name": "RegionOne"}
        for name in names}}))
    return str(path)


def verify(cloud, home, env, *args):
    return subprocess.run(
        [sys.executable, "-m", "gantt.cmd.manage", "--config-file",
         cloud.conf, "placement", "verify", *args], cwd=home, env=env,
        capture_output=True, text=True, timeout=300)


def _agreed(cloud, result):
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    last = result.stdout.splitlines()[-1]
    assert last.startswith("compared ")
    assert last.endswith(f" answers with {cloud.url}: none differ")


def test_against_the_catalogs_placement_with_os_variables(cloud, home):
    seen = len(cloud.guard.seen)
    result = verify(cloud, home, _env(home, **_os_vars(cloud.keystone)))
    _agreed(cloud, result)
    # Every GET carried the token Keystone gave for these credentials.
    assert set(cloud.guard.seen[seen:]) == {cloud.keystone.issued[-1]}
    assert len(cloud.guard.seen) - seen > 10
    identity = cloud.keystone.posts[-1]["auth"]["identity"]
    assert identity["password"]["user"]["name"] == fake_keystone.USER


def test_against_a_url_with_os_cloud(cloud, home):
    config = _clouds_yaml(home / "clouds.yaml", cloud.keystone,
                          names=("lab", "other"))
    seen = len(cloud.guard.seen)
    result = verify(cloud, home, _env(home, OS_CLIENT_CONFIG_FILE=config),
                    "--against", cloud.url, "--os-cloud", "lab")
    _agreed(cloud, result)
    assert set(cloud.guard.seen[seen:]) == {cloud.keystone.issued[-1]}


def test_a_raw_token_still_works(cloud, home):
    # A token from Keystone, given as is; the clouds are not read.
    token = requests.post(
        cloud.keystone.auth_url + "/auth/tokens", timeout=10,
        json={"auth": {"identity": {"methods": ["password"], "password": {
            "user": {"name": fake_keystone.USER,
                     "password": fake_keystone.PASSWORD}}}}}
    ).headers["X-Subject-Token"]
    seen = len(cloud.guard.seen)
    result = verify(cloud, home, _env(home, OS_CLOUD="not-read"),
                    "--against", cloud.url, "--token", token)
    _agreed(cloud, result)
    assert set(cloud.guard.seen[seen:]) == {token}


@pytest.mark.parametrize("case", [
    "unknown-cloud", "refused", "nothing", "token-refused", "no-token"])
def test_refusals_are_one_line_and_exit_2(cloud, home, case):
    # Not in the working directory: "nothing" names no cloud.
    (home / "etc").mkdir()
    config = _clouds_yaml(home / "etc" / "clouds.yaml", cloud.keystone,
                          password="wrong")
    env, argv, line = {
        "unknown-cloud": (
            {"OS_CLIENT_CONFIG_FILE": config, "OS_CLOUD": "prod"}, [],
            f"OS_CLOUD names cloud 'prod' that {config} does not define "
            f"(it has: lab)"),
        "refused": (
            {"OS_CLIENT_CONFIG_FILE": config}, ["--os-cloud", "lab"],
            f"Keystone at {cloud.keystone.auth_url} refused the "
            f"credentials of cloud 'lab' from --os-cloud (HTTP 401)"),
        "nothing": (
            {}, [],
            "no placement endpoint: give --against URL, or a cloud "
            "(--os-cloud NAME, OS_CLOUD, or OS_AUTH_URL and the other OS_* "
            "variables)"),
        "token-refused": (
            {}, ["--against", cloud.url, "--token", "forged"],
            f"GET {cloud.url}/resource_classes: 401 (check the token of "
            f"--token)"),
        "no-token": (
            {}, ["--against", cloud.url],
            f"GET {cloud.url}/resource_classes: 401 (check --token or "
            f"--os-cloud: none was sent)"),
    }[case]
    result = verify(cloud, home, _env(home, **env), *argv)
    assert result.stderr == f"gantt-manage: {line}\n"
    assert result.stdout == ""
    assert result.returncode == 2


# -- which cloud, in this process --------------------------------------------

@pytest.fixture
def clean(monkeypatch, tmp_path):
    """No OS_* variables, HOME and the working directory empty, and no
    clouds.yaml searched for but OS_CLIENT_CONFIG_FILE (openstacksdk
    takes its search path, the working directory first, when imported)."""
    from openstack.config import loader as sdk_loader
    monkeypatch.setattr(sdk_loader, "CONFIG_FILES", [])
    for name in list(os.environ):
        if name.startswith("OS_"):
            monkeypatch.delenv(name)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_a_lone_cloud_in_clouds_yaml_is_read_without_naming_it(
        cloud, clean, tmp_path):
    # As the openstack client does: one cloud, no need to name it.
    clean.setenv("OS_CLIENT_CONFIG_FILE", _clouds_yaml(
        tmp_path / "clouds.yaml", cloud.keystone))
    endpoint = cloud_auth.connect(url_option="--against")
    assert endpoint.url == cloud.url
    assert endpoint.source == "cloud 'lab'"
    assert endpoint.token() == cloud.keystone.issued[-1]


def test_several_clouds_and_none_named(cloud, clean, tmp_path):
    clean.setenv("OS_CLIENT_CONFIG_FILE", _clouds_yaml(
        tmp_path / "clouds.yaml", cloud.keystone, names=("a", "b")))
    with pytest.raises(cloud_auth.AuthError) as caught:
        cloud_auth.connect(url_option="--against")
    assert str(caught.value) == (
        f"{tmp_path / 'clouds.yaml'} defines clouds a, b: choose one with "
        "--os-cloud or OS_CLOUD")


def test_a_url_and_no_cloud_sends_nothing(clean):
    endpoint = cloud_auth.connect("http://placement.example/",
                                  url_option="--against")
    assert (endpoint.url, endpoint.token) == ("http://placement.example/",
                                              None)
    assert not cloud_auth.wants_cloud(environ={"OS_CLOUD": ""})
    assert not cloud_auth.wants_cloud(environ={"OS_REGION_NAME": "r",
                                               "OS_TEST_TIMEOUT": "9"})
    assert cloud_auth.wants_cloud(environ={"OS_AUTH_URL": "http://k/v3"})


def test_a_clouds_yaml_that_is_not_yaml(clean, tmp_path):
    path = tmp_path / "clouds.yaml"
    path.write_text("clouds: [unclosed\n")
    clean.setenv("OS_CLIENT_CONFIG_FILE", str(path))
    clean.setenv("OS_CLOUD", "lab")
    with pytest.raises(cloud_auth.AuthError) as caught:
        cloud_auth.connect(url_option="--against")
    message = str(caught.value)
    assert message.startswith(
        f"OS_CLOUD names cloud 'lab' that no clouds.yaml defines ({path} "
        f"cannot be read: while parsing a flow sequence")
    assert "\n" not in message
