"""The structure of a cloud file, as a JSON schema."""

_NAME = {"type": "string", "minLength": 1, "maxLength": 200}
_UUID = {"type": "string",
         "pattern": "^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                    "[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"}
_INT = {"type": "integer", "minimum": 0, "maximum": 2147483647}
_POS = {"type": "integer", "minimum": 1, "maximum": 2147483647}
_CLASS = {"type": "string", "pattern": "^[A-Z0-9_]+$", "maxLength": 255}

_INVENTORY = {
    "oneOf": [
        _POS,
        {"type": "object",
         "properties": {"total": _POS, "reserved": _INT, "min_unit": _POS,
                        "max_unit": _POS, "step_size": _POS,
                        "allocation_ratio": {"type": "number",
                                             "exclusiveMinimum": 0}},
         "required": ["total"], "additionalProperties": False},
    ],
}

_PROVIDER = {
    "type": "object",
    "properties": {
        "name": _NAME,
        "uuid": _UUID,
        "parent": _NAME,
        "inventories": {"type": "object",
                        "propertyNames": _CLASS,
                        "additionalProperties": _INVENTORY},
        "traits": {"type": "array", "items": _CLASS, "uniqueItems": True},
        "aggregates": {"type": "array", "items": _NAME,
                       "uniqueItems": True},
        "children": {"type": "array", "items": {"$ref": "#/$defs/provider"}},
    },
    "required": ["name"],
    "additionalProperties": False,
}

_ALLOCATION = {
    "type": "object",
    "properties": {
        "consumer": _NAME,
        "project_id": {"type": "string", "minLength": 1, "maxLength": 255},
        "user_id": {"type": "string", "minLength": 1, "maxLength": 255},
        "consumer_type": {"type": "string", "minLength": 1,
                          "maxLength": 255},
        "resources": {
            "type": "object", "minProperties": 1,
            "propertyNames": _NAME,
            "additionalProperties": {
                "type": "object", "minProperties": 1,
                "propertyNames": _CLASS,
                "additionalProperties": _POS}},
    },
    "required": ["consumer", "project_id", "user_id", "resources"],
    "additionalProperties": False,
}

CLOUD = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"provider": _PROVIDER},
    "properties": {
        "aggregates": {"type": "object", "propertyNames": _NAME,
                       "additionalProperties": _UUID},
        "resource_classes": {"type": "array", "items": _CLASS,
                             "uniqueItems": True},
        "traits": {"type": "array", "items": _CLASS, "uniqueItems": True},
        "providers": {"type": "array", "items": {"$ref": "#/$defs/provider"}},
        "allocations": {"type": "array", "items": _ALLOCATION},
    },
    "required": ["providers"],
    "additionalProperties": False,
}
