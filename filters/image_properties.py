"""ImagePropertiesFilter: the image's architecture, hypervisor type and
VM mode against what the node says it can run.

Image properties read: ``hw_architecture`` (default: [filter_scheduler]
image_properties_default_architecture), ``img_hv_type``, ``hw_vm_mode``
and ``img_hv_requested_version``. An image that sets none of the first
three passes everywhere (the version alone is then not checked, as in
Nova). Otherwise the node needs a supported_instances entry
``[arch, hv_type, vm_mode]`` in which each property the image sets
appears (anywhere in the entry, as Nova compares), and,
when both the node reports a hypervisor version and the image asks for
one, a version that satisfies the request (``>= 2.6, < 3.0``: comma
separated comparisons; the node's integer 2006001 reads 2.6.1).

Names are put in canonical form on both sides (lower case; i386..i586
are i686, amd64 is x86_64, xapi is xen, pv is xen and hv or baremetal
are hvm). Differences from Nova: names Nova does not know are compared
as they are, not rejected; an unreadable version request fails the
hosts that reach the check instead of failing the whole request.
"""

import operator
import re

import numpy as np

from filters import base

_ARCH_ALIASES = {"i386": "i686", "i486": "i686", "i586": "i686",
                 "x86_32": "i686", "x86_32p": "i686", "amd64": "x86_64"}
_HV_ALIASES = {"xapi": "xen"}
_MODE_ALIASES = {"pv": "xen", "hv": "hvm", "baremetal": "hvm"}
_COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq,
            "!=": operator.ne, ">": operator.gt, ">=": operator.ge}
_CLAUSE = re.compile(r"^\s*(<=|>=|==|!=|<|>)\s*(\d+(?:\.\d+)*)\s*$")


def _canonical(value, aliases):
    if value is None or value == "":
        return None
    value = str(value).lower()
    return aliases.get(value, value)


def _version_tuple(text):
    return tuple(int(part) for part in text.split("."))


def parse_version_request(text):
    """[(compare, version tuple)] of ``>= 2.6, < 3``; None when
    unreadable."""
    clauses = []
    for clause in str(text).split(","):
        found = _CLAUSE.match(clause)
        if not found:
            return None
        clauses.append((_COMPARE[found.group(1)],
                        _version_tuple(found.group(2))))
    return clauses


def version_of(number):
    """A hypervisor's integer version as a tuple: 2006001 -> (2, 6, 1)."""
    parts = []
    while number:
        number, part = divmod(number, 1000)
        parts.insert(0, part)
    return tuple(parts)


def _satisfies(version, clauses):
    for compare, wanted in clauses:
        width = max(len(version), len(wanted))
        have = version + (0,) * (width - len(version))
        want = wanted + (0,) * (width - len(wanted))
        if not compare(have, want):
            return False
    return True


class _Wanted:
    """What the image asks for, parsed once per request."""

    def __init__(self, request):
        props = request.spec.image.properties
        opts = request.conf.filter_scheduler
        default_arch = opts.image_properties_default_architecture
        self.props = (
            _canonical(props.get("hw_architecture", default_arch),
                       _ARCH_ALIASES),
            _canonical(props.get("img_hv_type"), _HV_ALIASES),
            _canonical(props.get("hw_vm_mode"), _MODE_ALIASES))
        self.version_text = props.get("img_hv_requested_version")
        self.version = (parse_version_request(self.version_text)
                        if self.version_text else None)

    @property
    def any(self):
        return any(self.props)

    def supported(self, entries):
        """Whether one of the node's supported_instances entries has all
        the properties the image sets."""
        for entry in entries or ():
            have = (_canonical(entry[0], _ARCH_ALIASES),
                    _canonical(entry[1], _HV_ALIASES),
                    _canonical(entry[2], _MODE_ALIASES))
            # Nova asks only that each value appear in the entry, not at
            # its own position.
            if all(w is None or w in have for w in self.props):
                return True
        return False

    def version_ok(self, number):
        if not (number and self.version_text):
            return True
        return self.version is not None and _satisfies(
            version_of(number), self.version)


def _wanted(request):
    key = ("ImagePropertiesFilter", "wanted")
    wanted = request.memo.get(key)
    if wanted is None:
        wanted = request.memo[key] = _Wanted(request)
    return wanted


class ImagePropertiesFilter(base.BaseFilter):
    name = "ImagePropertiesFilter"
    run_filter_once_per_request = True
    RUN_ON_REBUILD = True

    def mask(self, request, rows):
        wanted = _wanted(request)
        if not wanted.any:
            return base.all_pass(rows)
        table = request.table
        # The version test, once per distinct hypervisor version.
        out = np.ones(len(rows), bool)
        if wanted.version_text and len(rows):
            distinct, where = np.unique(table.hypervisor_version[rows],
                                        return_inverse=True)
            ok = np.fromiter((wanted.version_ok(int(v)) for v in distinct),
                             bool, count=len(distinct))
            out = ok[where.reshape(-1)]
        for i in np.flatnonzero(out):
            node = table.node(rows[i])
            out[i] = node is not None and wanted.supported(
                node.supported_instances)
        return out

    def why(self, request, row):
        wanted = _wanted(request)
        table = request.table
        node = table.node(row)
        entries = node.supported_instances if node is not None else None
        asked = "/".join(p or "*" for p in wanted.props)
        if not entries:
            return (f"image needs {asked}; the host lists no supported "
                    f"instances")
        if not wanted.supported(entries):
            return f"image needs {asked}; the host supports {entries}"
        number = int(table.hypervisor_version[row])
        if not wanted.version_ok(number):
            have = ".".join(map(str, version_of(number)))
            return (f"image needs hypervisor version "
                    f"{wanted.version_text!r}; the host has {have}")
        return super().why(request, row)
