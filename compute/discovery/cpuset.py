"""Nova-style CPU set strings: ``"0-3,8,^2"`` is {0, 1, 3, 8}.

Ranges and single ids separated by commas; ``^N`` (or ``^N-M``) takes
ids out. The kernel's cpulist files (``0-15,32-47``) are the same format
without exclusions."""


class CpuSetError(ValueError):
    """A CPU set string that cannot be read; the message says where."""


def _ids(part, spec):
    lo, sep, hi = part.partition("-")
    try:
        first = int(lo)
        last = int(hi) if sep else first
    except ValueError:
        raise CpuSetError(f"invalid CPU set {spec!r}: {part!r} is not a "
                          "CPU id or a range like 0-3") from None
    if first < 0 or last < 0:
        raise CpuSetError(f"invalid CPU set {spec!r}: negative id in "
                          f"{part!r}")
    if last < first:
        raise CpuSetError(f"invalid CPU set {spec!r}: range {part!r} "
                          "ends before it starts")
    return range(first, last + 1)


def parse_cpu_set(spec):
    """The frozenset of CPU ids in ``spec`` (a string; empty: none)."""
    if not isinstance(spec, str):
        raise CpuSetError(f"invalid CPU set {spec!r}: not a string")
    include, exclude = set(), set()
    for raw in spec.split(","):
        part = raw.strip()
        if not part:
            if spec.strip():
                raise CpuSetError(f"invalid CPU set {spec!r}: empty item")
            continue
        if part.startswith("^"):
            exclude.update(_ids(part[1:].strip(), spec))
        else:
            include.update(_ids(part, spec))
    if exclude and not include:
        raise CpuSetError(f"invalid CPU set {spec!r}: only exclusions")
    return frozenset(include - exclude)


def format_cpu_set(ids):
    """The shortest range string for ``ids``: {0,1,2,5} -> "0-2,5"."""
    out, run = [], []
    for i in sorted(ids):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(_run(run))
        run = [i]
    if run:
        out.append(_run(run))
    return ",".join(out)


def _run(run):
    return str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"
