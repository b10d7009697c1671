"""The error of an input file (cloud, workload, config) that cannot be
used: it names the file and the field, so that commands can print it as
``path: field: message`` and exit 2."""

import yaml


class InputFileError(Exception):
    """``path``: the file; ``field``: where in it (None: the file as a
    whole); ``message``: what is wrong."""

    def __init__(self, path, field, message):
        super().__init__(f"{path}: {field}: {message}" if field
                         else f"{path}: {message}")
        self.path = path
        self.field = field
        self.message = message


def read_yaml(path, error=InputFileError):
    """The document in the YAML (or JSON, a subset) file at ``path``;
    ``error(path, None, why)`` when it cannot be read or parsed."""
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except OSError as exc:
        raise error(path, None, exc.strerror or str(exc)) from exc
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise error(path, None, f"not valid YAML or JSON: {exc}") from exc


def field_path(parts):
    """``providers[1].inventories.VCPU`` from ("providers", 1,
    "inventories", "VCPU"): how errors name a place in a document."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (
            f".{part}" if out else str(part))
    return out
