"""providers.canonical_uuid: every spelling of a UUID to the dashed lower
case form (a canonical string is returned as it is, unparsed), anything
else a BadRequest."""

import uuid

import hypothesis
import pytest
from hypothesis import strategies as st

from placement import errors
from placement.objects import providers

U = "8d5e6b0c-1a7f-4f57-9b1e-2f0f3c5a1d11"


@pytest.mark.parametrize("given", [
    U, U.upper(), U.replace("-", ""), "{" + U + "}", "urn;uuid;" + U,
    uuid.UUID(U)], ids=["canonical", "upper", "bare", "braces", "urn",
                        "object"])
def test_spellings(given):
    if isinstance(given, str):
        given = given.replace(";", ":")
    assert providers.canonical_uuid(given) == U


@pytest.mark.parametrize("given", [
    "", "x", U[:-1], U + "0", U.replace("-", "_"), " " + U, U + "\n",
    U.replace("d", "g"), 7, None], ids=[
    "empty", "word", "short", "long", "underscores", "space", "newline",
    "not-hex", "int", "none"])
def test_not_a_uuid(given):
    with pytest.raises(errors.BadRequest):
        providers.canonical_uuid(given)


@hypothesis.given(st.uuids(), st.sampled_from(["lower", "upper", "bare"]))
def test_same_as_parsing(value, spelling):
    text = {"lower": str(value), "upper": str(value).upper(),
            "bare": value.hex}[spelling]
    assert providers.canonical_uuid(text) == str(uuid.UUID(text))
