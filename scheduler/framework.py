"""The filter and weigher framework: which plugins exist, and how the
enabled ones run over the candidate rows.

Filters and weighers are plugins: they know filters.base and
weighers.base, never the scheduler. This module is the other side:

- :class:`Registry`: filter and weigher classes by name, the built-in
  ones (every module of the filters/ and weighers/ packages) and the
  third-party ones of the ``gantt.scheduler.filters`` and
  ``gantt.scheduler.weighers`` entry point groups. Built once, by the
  Scheduler, and passed: there is no registry behind anyone's back.
- :class:`FilterChain`: the enabled filters, in order, each on the rows
  the previous ones left, keeping what explain and NoValidHost need
  (how many hosts each filter took out and, when asked, why).
- :class:`WeigherChain`: each row's total weight. Per weigher, as
  Nova's weight handler does: the raw values are clamped to the
  weigher's minval/maxval where it sets them, normalised to [0, 1]
  over the candidates (weighers.base.normalize, one weigher at a
  time), multiplied by the per-row multiplier and added to the total.
  With one candidate or none Nova weighs nothing (every weight stays 0)
  and neither do we.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import pkgutil
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from filters import base as filters_base
from placement import option_values
from scheduler import errors
from weighers import base as weighers_base

FILTER_GROUP = "gantt.scheduler.filters"
WEIGHER_GROUP = "gantt.scheduler.weighers"
# Nova's spelling of "every weigher", and its weighers' module prefix:
# accepted so that a nova.conf's weight_classes carries over.
_NOVA_ALL = "nova.scheduler.weights.all_weighers"
_NOVA_PREFIX = "nova.scheduler.weights."

Plugin = TypeVar("Plugin", filters_base.BaseFilter, weighers_base.BaseWeigher)
Rows = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
# {weigher: {"raw" | "normalized" | "multiplier" | "weighted": array}}
WeighExplanation = dict[str, dict[str, Floats]]


# -- the registry ------------------------------------------------------------

class Registry:
    """Filter and weigher classes by the names config gives them."""

    def __init__(self,
                 filters: Mapping[str, type[filters_base.BaseFilter]],
                 weighers: Mapping[str, type[weighers_base.BaseWeigher]],
                 builtin_weighers: Iterable[str] = ()) -> None:
        self.filters = dict(filters)
        self.weighers = dict(weighers)
        # What weight_classes "all" means: the built-in weighers only,
        # as in Nova (a plugin is named to be used).
        self.builtin_weighers = sorted(builtin_weighers)

    @classmethod
    def discover(cls) -> Registry:
        """The built-in plugins and those of the entry point groups (a
        registered one replaces a built-in of the same name)."""
        weighers = builtin("weighers", weighers_base.BaseWeigher)
        return cls(
            {**builtin("filters", filters_base.BaseFilter),
             **registered(FILTER_GROUP, filters_base.BaseFilter)},
            {**weighers,
             **registered(WEIGHER_GROUP, weighers_base.BaseWeigher)},
            weighers)

    def filter_chain(self, conf: Any) -> FilterChain:
        """The filters of ``[filter_scheduler] enabled_filters``, in
        order; an unknown name raises errors.ConfigError."""
        return FilterChain(_instances(
            "filter", "enabled_filters", self.filters,
            conf.filter_scheduler.enabled_filters, conf))

    def weigher_chain(self, conf: Any) -> WeigherChain:
        """The weighers of ``[filter_scheduler] weight_classes``, in
        order; an unknown name raises errors.ConfigError."""
        return WeigherChain(_instances(
            "weigher", "weight_classes", self.weighers,
            self.weigher_names(conf), conf))

    def weigher_names(self, conf: Any) -> list[str]:
        """Weigher names of ``[filter_scheduler] weight_classes``, "all"
        expanded to every built-in weigher (sorted), duplicates
        dropped."""
        wanted = []
        for entry in conf.filter_scheduler.weight_classes:
            entry = entry.strip()
            if entry in ("all", _NOVA_ALL):
                wanted.extend(self.builtin_weighers)
            elif entry.startswith(_NOVA_PREFIX):
                wanted.append(entry.rsplit(".", 1)[-1])
            elif entry:
                wanted.append(entry)
        return list(dict.fromkeys(wanted))


def _instances(kind: str, option: str, known: Mapping[str, type[Plugin]],
               names: Sequence[str], conf: Any) -> list[Plugin]:
    """Instances of the classes called ``names``, in that order; an
    unknown name is an error that names the option and lists the known
    ones."""
    missing = [n for n in names if n not in known]
    if missing:
        raise errors.ConfigError(
            f"[filter_scheduler] {option}: unknown {kind} "
            f"{', '.join(missing)}; known: "
            f"{', '.join(sorted(known))}")
    return [known[n](conf) for n in names]


def builtin(package_name: str, base: type[Plugin]) -> dict[str, type[Plugin]]:
    """{name: class} of the concrete ``base`` subclasses defined in the
    modules of ``package_name``."""
    package = importlib.import_module(package_name)
    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package_name}.{info.name}")
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, base)
                    and value.__module__ == module.__name__
                    and value.name):
                found[value.name] = value
    return found


def registered(group: str, base: type[Plugin]) -> dict[str, type[Plugin]]:
    """{name: class} of the entry points of ``group``."""
    found = {}
    for point in importlib.metadata.entry_points(group=group):
        cls = point.load()
        if not (isinstance(cls, type) and issubclass(cls, base)):
            raise errors.SchedulerError(
                f"entry point {point.name} of {group} is not a "
                f"{base.__name__} subclass")
        found[cls.name or point.name] = cls
    return found


def enabled_filters(conf: Any,
                    registry: Registry | None = None
                    ) -> list[filters_base.BaseFilter]:
    """The filters ``enabled_filters`` names (a check of the config)."""
    return (registry or Registry.discover()).filter_chain(conf).filters


def enabled_weighers(conf: Any,
                     registry: Registry | None = None
                     ) -> list[weighers_base.BaseWeigher]:
    """The weighers ``weight_classes`` names (a check of the config)."""
    return (registry or Registry.discover()).weigher_chain(conf).weighers


# -- the filter chain --------------------------------------------------------

@dataclasses.dataclass
class FilterRun:
    name: str | None  # None: a plugin that gives itself no name
    before: int
    after: int
    # {row: reason}, only when explaining
    reasons: dict[int, str] = dataclasses.field(default_factory=dict)
    # The first rows it removed, when asked (the decision log's): as
    # many as ``keep_removed``.
    removed: Rows | None = None


class FilterChain:
    """The enabled filters, run in order. It keeps nothing between
    calls: what one request's later instances reuse (the masks of
    run-once filters) is the caller's ``once``."""

    def __init__(self, filters: Iterable[filters_base.BaseFilter]) -> None:
        self.filters = list(filters)

    def run(self, request: filters_base.Request, rows: Rows,
            once: dict[str | None, Rows | Mask], first: bool,
            explain: bool = False,
            keep_removed: int = 0) -> tuple[Rows, list[FilterRun]]:
        """(rows that pass, [FilterRun]) for the candidate ``rows``.

        ``once``: the rows that passed each run-once filter, filled for
        the ``first`` instance of a request and read for the others (as
        a mask by row number from the first read on).
        ``keep_removed``: each run keeps that many of the rows its filter
        removed (no reasons: that is ``explain``'s, and costs a call a
        row). A filter's RequestError fails the request as the
        scheduler's InvalidRequestSpec (errors.from_filter)."""
        try:
            return self._run(request, rows, once, first, explain,
                             keep_removed)
        except filters_base.RequestError as exc:
            raise errors.from_filter(exc) from None

    def _run(self, request: filters_base.Request, rows: Rows,
             once: dict[str | None, Rows | Mask], first: bool,
             explain: bool,
             keep_removed: int) -> tuple[Rows, list[FilterRun]]:
        runs = []
        for f in self.filters:
            if request.rebuild and not f.RUN_ON_REBUILD:
                continue
            if not len(rows):
                runs.append(FilterRun(f.name, 0, 0))
                continue
            if f.run_filter_once_per_request and not first:
                passed = once.get(f.name)
                if passed is None:
                    continue
                if passed.dtype != np.bool_:
                    # Looked up by every later instance: a mask, built
                    # once (a one-instance request never builds it).
                    passed = once[f.name] = _rows_mask(passed, rows)
                mask = _passed_before(passed, rows)
            else:
                mask = np.asarray(f.mask(request, rows), bool)
            after = int(np.count_nonzero(mask))
            run = FilterRun(f.name, len(rows), after)
            if explain:
                run.reasons = {int(r): f.why(request, int(r))
                               for r in rows[~mask]}
            if keep_removed and after != len(rows):
                run.removed = rows[~mask][:keep_removed]
            runs.append(run)
            if after != len(rows):  # most filters pass every row
                rows = rows[mask]
            if f.run_filter_once_per_request and first:
                once[f.name] = rows
        return rows, runs


def _rows_mask(passed: npt.NDArray[Any], rows: Rows) -> Mask:
    """``passed`` as a mask over row numbers up to the largest of both
    (``rows``: a later instance's): what later instances look their
    rows up in, ten times cheaper than np.isin over the rows."""
    top = max(int(passed.max()) if len(passed) else -1,
              int(rows.max()) if len(rows) else -1)
    mask = np.zeros(top + 1, bool)
    mask[passed] = True
    return mask


def _passed_before(passed: npt.NDArray[Any], rows: Rows) -> Mask:
    """Which of ``rows`` the run-once filter passed for the request's
    first instance (``passed``: from :func:`_rows_mask`)."""
    try:
        return passed[rows]
    except IndexError:  # a row past the mask (another caller's rows)
        return np.isin(rows, np.flatnonzero(passed))


def hosts(count: int, what: str = "candidate host") -> str:
    """``count`` and ``what`` in words: 1 candidate host, 2 candidate
    hosts."""
    return f"{count} {what}{'' if count == 1 else 's'}"


def summary(runs: Sequence[FilterRun], total: int) -> str:
    """One line for NoValidHost: where the hosts went."""
    taken = [f"{r.name} removed {r.before - r.after}" for r in runs
             if r.before != r.after]
    if not taken:
        return hosts(total)
    return f"{hosts(total)}; " + ", ".join(taken)


# -- the weigher chain -------------------------------------------------------

class WeigherChain:
    """The enabled weighers; ``weigh`` adds their weights up."""

    def __init__(self,
                 weighers: Iterable[weighers_base.BaseWeigher]) -> None:
        self.weighers = list(weighers)
        self.names = weigher_names(self.weighers)
        for weigher in self.weighers:
            # Its multiplier option, read once until oslo.config may
            # have changed it (placement.option_values): every request
            # asks each weigher.
            conf = getattr(weigher, "conf", None)
            if conf is not None:
                weigher.read_multiplier = option_values.Options(
                    conf, weigher.multiplier_in).get

    def weigh(self, request: weighers_base.Request, rows: Rows,
              explain: bool = False, keep: bool = False
              ) -> tuple[Floats, WeighExplanation | None, Weighing | None]:
        """See :func:`weigh`; also, with ``keep``, the :class:`Weighing`
        that gives any row's share of each weigher afterwards (None
        without, or when there was at most one row to weigh)."""
        return _weigh(request, rows, self.weighers, explain,
                      self.names if keep else None)


@dataclasses.dataclass(eq=False)
class Weighing:
    """What a weighing kept, to tell afterwards how much each weigher
    gave a few of its rows, without weighing again (the decision log):
    the weighers' values as normalised (``values``, a line per weigher
    weighed: clamped to the weigher's bounds), and for each weigher
    that told the rows apart (its values were not all equal) its line
    there, its name, the minimum and span its values were normalised
    with and its multiplier (a float, or an array over the rows;
    ``per_row``: one of them is). Its share of a row's weight is
    (value - low) / span * multiplier, the operations the weighing
    added up, in its order: the shares add up to the weight to the
    last bit (scheduler.decision_log works them out when it reads a
    record). Kept for every logged decision, so it only holds what the
    weighing had at hand; :meth:`columns` does the rest for the
    record."""

    values: Floats
    # The weighers that told the rows apart: their lines, names, lows,
    # spans and multipliers.
    lines: list[int] = dataclasses.field(default_factory=list)
    names: list[str] = dataclasses.field(default_factory=list)
    lows: list[float] = dataclasses.field(default_factory=list)
    spans: list[float] = dataclasses.field(default_factory=list)
    multipliers: list[float | Floats] = dataclasses.field(
        default_factory=list)
    per_row: bool = False

    def columns(self, positions: Sequence[int]) -> dict[str, Any]:
        """The weighing of the rows at ``positions`` (in the weighed
        rows' order): names, lows, spans, multipliers (each a float, or
        a list over those rows) and values (lists, weighers x those
        rows)."""
        factors = self.multipliers
        if self.per_row:
            factors = [m if isinstance(m, float)
                       else m.take(positions).tolist() for m in factors]
        # A value at a time: for the few rows a record shows, faster
        # than numpy's take and tolist (half the instructions, but their
        # code is cold after a decision: 0.3 us more a record, measured
        # right after each decision, the two alternating).
        value = self.values.item
        return {"names": self.names, "lows": self.lows,
                "spans": self.spans, "multipliers": factors,
                "values": [[value(k, at) for at in positions]
                           for k in self.lines]}


def weigher_names(weighers: Sequence[weighers_base.BaseWeigher]
                  ) -> list[str]:
    """Each weigher's name, as explanations and records give it
    (numbered when listed twice)."""
    names: list[str] = []
    for weigher in weighers:
        names.append(_unique_name(names, weigher))
    return names


def weigh(request: weighers_base.Request, candidates: npt.ArrayLike,
          weighers: Sequence[weighers_base.BaseWeigher],
          explain: bool = False
          ) -> tuple[Floats, WeighExplanation | None]:
    """(total weight per row of ``candidates``, explanation or None).

    The explanation maps each weigher's name to its ``raw``,
    ``normalized``, ``multiplier`` and ``weighted`` (multiplier times
    normalised) arrays, in row order; it is empty when there was at most
    one row to weigh.
    """
    total, details, _ = _weigh(request, candidates, weighers, explain)
    return total, details


def _weigh(request: weighers_base.Request, candidates: npt.ArrayLike,
           weighers: Sequence[weighers_base.BaseWeigher],
           explain: bool = False, keep: Sequence[str] | None = None
           ) -> tuple[Floats, WeighExplanation | None, Weighing | None]:
    # ``keep``: the weighers' names (weigher_names) to keep a Weighing
    # under; None: keep none.
    rows = np.asarray(candidates, np.int64)
    count = len(rows)
    total = np.zeros(count)
    details: WeighExplanation | None = {} if explain else None
    if count <= 1:
        return total, details, None
    used, used_at, multipliers, raws = [], [], [], []
    for j, weigher in enumerate(weighers):
        multiplier = _multiplier(weigher, request, rows)
        if not explain and not (multiplier if isinstance(multiplier, float)
                                else multiplier.any()):
            continue  # weighs every row 0: no need to compute it
        used.append(weigher)
        used_at.append(j)
        multipliers.append(multiplier)
        raws.append(weigher.raw(request, rows))
    if not used:
        return total, details, None
    # A line per weigher, a copy of their own: minima and maxima of all
    # lines in two calls; the rest line by line, on 1-D views (numpy
    # runs broadcast operations over a 2-D temporary many times slower).
    raw = np.array(raws, np.float64).reshape(len(used), count)
    # The explanation shows the raw values before Nova's clamping.
    kept = raw.copy() if explain else raw
    for k, weigher in enumerate(used):
        # Nova keeps raw values within the weigher's bounds first, so
        # that e.g. overcommitted (negative) free RAM counts as none.
        weighers_base.bound(kept[k], weigher.minval, weigher.maxval)
    lows, highs = kept.min(axis=1).tolist(), kept.max(axis=1).tolist()
    scratch = np.empty(count)
    weighing = None if keep is None else Weighing(kept)
    named: Sequence[str] = keep or ()
    for k, weigher in enumerate(used):
        low = lows[k] if weigher.minval is None else float(weigher.minval)
        high = highs[k] if weigher.maxval is None else float(weigher.maxval)
        span = high - low
        if span != 0:  # all values equal: every row weighs 0, as in Nova
            _add_weighted(total, kept[k], low, span, multipliers[k],
                          scratch)
        if details is not None:
            _explain(details, weigher, raw[k], kept[k], low, span,
                     multipliers[k])
        if weighing is not None and span != 0:
            multiplier = multipliers[k]
            weighing.lines.append(k)
            weighing.names.append(named[used_at[k]])
            weighing.lows.append(low)
            weighing.spans.append(span)
            weighing.multipliers.append(multiplier)
            if not isinstance(multiplier, float):
                weighing.per_row = True
    return total, details, weighing


def _add_weighted(total: Floats, line: Floats, low: float, span: float,
                  multiplier: float | Floats, scratch: Floats) -> None:
    """``total += (line - low) / span * multiplier``: the operations
    and their order of normalize(), then times the multiplier, so the
    same floats, without the temporaries. Subtracting 0 and multiplying
    by 1 or -1 are exact in floating point, so they are skipped (most
    weighers have a minval of 0 and a multiplier of 1 or -1)."""
    if low != 0:
        np.subtract(line, low, out=scratch)
        line = scratch
    np.divide(line, span, out=scratch)
    if isinstance(multiplier, float) and multiplier in (1.0, -1.0):
        if multiplier > 0:
            total += scratch
        else:
            total -= scratch
        return
    scratch *= multiplier
    total += scratch


def _unique_name(taken: Iterable[str],
                 weigher: weighers_base.BaseWeigher) -> str:
    """The weigher's name, numbered (#2, #3...) when it is listed
    twice."""
    key = str(weigher.name)
    n = 2
    while key in taken:
        key = f"{weigher.name}#{n}"
        n += 1
    return key


def _explain(details: WeighExplanation, weigher: weighers_base.BaseWeigher,
             raw: Floats, kept: Floats, low: float, span: float,
             multiplier: float | Floats) -> None:
    key = _unique_name(details, weigher)
    normalized = ((kept - low) / span if span != 0
                  else np.zeros(len(kept)))
    details[key] = {
        "raw": raw, "normalized": normalized,
        "multiplier": np.broadcast_to(
            np.asarray(multiplier, np.float64), (len(kept),)),
        "weighted": multiplier * normalized}


def _multiplier(weigher: weighers_base.BaseWeigher,
                request: weighers_base.Request,
                rows: Rows) -> float | Floats:
    """A float, or an array over ``rows`` when aggregates override it
    (or a plugin's own ``multipliers`` says so per row)."""
    if type(weigher).multipliers is not weighers_base.BaseWeigher.multipliers:
        return np.asarray(weigher.multipliers(request, rows), np.float64)
    return weigher.multiplier(request, rows)
