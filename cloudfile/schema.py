"""The structure of a cloud file, as a JSON schema."""

_NAME = {"type": "string", "minLength": 1, "maxLength": 200}
_UUID = {"type": "string",
         "pattern": "^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                    "[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"}
_INT = {"type": "integer", "minimum": 0, "maximum": 2147483647}
_POS = {"type": "integer", "minimum": 1, "maximum": 2147483647}
_CLASS = {"type": "string", "pattern": "^[A-Z0-9_]+$", "maxLength": 255}
_TEXT = {"type": "string", "minLength": 1, "maxLength": 255}

# A root provider that is a compute node: its host records.
_COMPUTE = {
    "type": "object",
    "properties": {
        "host": _TEXT,
        "nodename": _TEXT,
        "cell": _TEXT,
        "hypervisor_type": _TEXT,
        # 8002000, or "8.2.0" (each part up to three digits)
        "hypervisor_version": {"oneOf": [
            _INT, {"type": "string",
                   "pattern": r"^[0-9]{1,3}(\.[0-9]{1,3}){0,2}$"}]},
        "host_ip": {"type": "string", "minLength": 1, "maxLength": 39},
        "cpu_info": {"type": "object"},
        "supported_instances": {
            "type": "array",
            "items": {"type": "array", "items": {"type": "string"},
                      "minItems": 3, "maxItems": 3}},
        "enabled": {"type": "boolean"},
        "disabled_reason": _TEXT,
        "forced_down": {"type": "boolean"},
    },
    "additionalProperties": False,
}

# An aggregate: its uuid, or its uuid and Nova host aggregate metadata.
_AGGREGATE = {
    "oneOf": [
        _UUID,
        {"type": "object",
         "properties": {
             "uuid": _UUID,
             "metadata": {
                 "type": "object", "propertyNames": _TEXT,
                 "additionalProperties": {
                     "oneOf": [{"type": "string", "maxLength": 255},
                               {"type": "number"}, {"type": "boolean"}]}}},
         "additionalProperties": False},
    ],
}

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
        "compute": _COMPUTE,
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
                       "additionalProperties": _AGGREGATE},
        "resource_classes": {"type": "array", "items": _CLASS,
                             "uniqueItems": True},
        "traits": {"type": "array", "items": _CLASS, "uniqueItems": True},
        "providers": {"type": "array", "items": {"$ref": "#/$defs/provider"}},
        "allocations": {"type": "array", "items": _ALLOCATION},
    },
    "required": ["providers"],
    "additionalProperties": False,
}
