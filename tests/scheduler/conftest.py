import random

import pytest

from placement import direct
from scheduler import manager
from tests.scheduler import cloud as cloud_mod


@pytest.fixture
def cloud(sqlite_store):
    """A host cloud in a fresh SQLite file (filters and weighers are
    pure computations over the table: one engine is enough)."""
    c = cloud_mod.Cloud(sqlite_store)
    yield c
    c.close()


@pytest.fixture
def placement(cloud):
    return direct.PlacementDirect(cloud.store)


@pytest.fixture
def make(cloud):
    """make(overrides=None): a Scheduler over ``cloud`` after setting
    {(group, option): value}; closed at the end of the test."""
    made = []

    def build(overrides=None):
        for (group, name), value in (overrides or {}).items():
            cloud.set(group, name, value)
        s = manager.Scheduler(cloud.conf, store=cloud.store,
                              rng=random.Random(7),
                              clock=lambda: cloud_mod.NOW)
        made.append(s)
        return s

    yield build
    for s in made:
        s.close()
