import pytest

from tests.scheduler import cloud as cloud_mod


@pytest.fixture
def cloud(sqlite_store):
    """A host cloud in a fresh SQLite file (filters and weighers are
    pure computations over the table: one engine is enough)."""
    c = cloud_mod.Cloud(sqlite_store)
    yield c
    c.close()
