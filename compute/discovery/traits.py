"""Traits: CPU flags of ``/proc/cpuinfo`` as os-traits names, and traits
from config (checked: a standard os-traits name or CUSTOM_*).

The table maps the kernel's flag names (which differ from libvirt's:
``pni`` is SSE3, ``sse4_2`` is SSE4.2, ``pclmulqdq`` is CLMUL) to the
HW_CPU_X86_* traits Nova's libvirt driver reports for the same
features."""

import re

import os_traits

from compute.discovery import sysfs

_X86 = {
    "3dnow": "3DNOW", "abm": "ABM", "aes": "AESNI", "avx": "AVX",
    "avx2": "AVX2", "avx512f": "AVX512F", "avx512cd": "AVX512CD",
    "avx512pf": "AVX512PF", "avx512er": "AVX512ER", "avx512vl": "AVX512VL",
    "avx512bw": "AVX512BW", "avx512dq": "AVX512DQ",
    "avx512_vnni": "AVX512VNNI", "avx512vbmi": "AVX512VBMI",
    "avx512ifma": "AVX512IFMA", "avx512_vbmi2": "AVX512VBMI2",
    "avx512_bitalg": "AVX512BITALG", "vaes": "AVX512VAES",
    "gfni": "AVX512GFNI", "vpclmulqdq": "AVX512VPCLMULQDQ",
    "avx512_vpopcntdq": "AVX512VPOPCNTDQ", "bmi1": "BMI", "bmi2": "BMI2",
    "pclmulqdq": "CLMUL", "f16c": "F16C", "fma": "FMA3", "fma4": "FMA4",
    "mmx": "MMX", "mpx": "MPX", "sha_ni": "SHA", "sse": "SSE",
    "sse2": "SSE2", "pni": "SSE3", "ssse3": "SSSE3", "sse4_1": "SSE41",
    "sse4_2": "SSE42", "sse4a": "SSE4A", "tbm": "TBM", "xop": "XOP",
    "sgx": "SGX", "rtm": "TSX", "pdpe1gb": "PDPE1GB", "stibp": "STIBP",
    "amx_bf16": "AMXBF16", "amx_int8": "AMXINT8", "amx_tile": "AMXTILE",
    # Old generic traits kept beside the vendor ones, as Nova does.
    "svm": ("SVM", "AMD_SVM"), "vmx": ("VMX", "INTEL_VMX"),
}

CPU_FLAG_TRAITS = {
    flag: tuple(f"HW_CPU_X86_{n}" for n in
                (names if isinstance(names, tuple) else (names,)))
    for flag, names in _X86.items()}

_CUSTOM = re.compile(r"^CUSTOM_[A-Z0-9_]+$")


class TraitError(ValueError):
    """A configured trait that is neither standard nor CUSTOM_*."""


def cpu_flags(root):
    """The flags of the first CPU in ``/proc/cpuinfo`` (x86 ``flags``,
    arm ``Features``)."""
    for line in (sysfs.read(root, "proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def traits_from_flags(flags):
    return sorted({t for f in flags for t in CPU_FLAG_TRAITS.get(f, ())})


def check_trait(name):
    if not isinstance(name, str) or not (
            _CUSTOM.match(name) or name in _standard()):
        raise TraitError(f"{name!r} is not a standard trait (os-traits) "
                         "nor a custom one (CUSTOM_ and A-Z, 0-9, _)")
    return name


def _standard():
    global _STANDARD
    if _STANDARD is None:
        _STANDARD = frozenset(os_traits.get_traits())
    return _STANDARD


_STANDARD = None


def custom_trait(text):
    """CUSTOM_<TEXT> with what a trait name cannot hold as ``_``."""
    return "CUSTOM_" + re.sub(r"[^A-Z0-9_]", "_", text.upper())
