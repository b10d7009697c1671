"""Option values read once, until oslo.config may have changed them.

A read through oslo.config (``conf.group.name``) goes through two
``__getattr__`` calls and its own value cache: about 0.6 microseconds,
and a scheduling decision reads some thirty options, about 5 % of an
embedded decision. oslo.config empties that cache whenever a value may
have changed (an override set or cleared, a default, a reload, a
SIGHUP's mutation, an option registered), so a key of our own kept in
it says whether what was read from it still stands: :class:`Options`
keeps what its reader made of ``conf`` until that key is gone.

Where oslo.config keeps no such cache (another version), every
:meth:`Options.get` reads again: slower, never stale.
"""

import itertools
import threading
import weakref

# oslo.config's value cache, under its name-mangled attribute.
_CACHE = "_ConfigOpts__cache"
# Group names are option group names, never this: no option's key.
_MARK_GROUP = "gantt.option_values"
_marks = itertools.count()
_NONE: dict = {}


class _Kept:
    """What a reader made of a conf, and the mark that says it stands."""

    __slots__ = ("mark", "values", "valid")

    def __init__(self):
        self.mark = (_MARK_GROUP, next(_marks))
        self.values = None
        self.valid = False


def _get(conf, kept, reader):
    cache = getattr(conf, "__dict__", _NONE).get(_CACHE)
    if cache is None:
        return reader(conf)
    if not kept.valid or kept.mark not in cache:
        # The mark first: a change while reading removes it again, and
        # the next call reads once more.
        cache[kept.mark] = True
        kept.valid = False
        kept.values = reader(conf)
        kept.valid = True
    return kept.values


class Options:
    """``read(conf)`` (any value: a tuple of options, a parsed setting),
    made again only after oslo.config has emptied its cache."""

    def __init__(self, conf, read):
        self._conf = conf
        self._read = read
        self._kept = _Kept()

    def get(self):
        return _get(self._conf, self._kept, self._read)


# id(conf) -> {reader: _Kept}; a conf's entry goes with it (a ConfigOpts
# is a Mapping: unhashable, so no WeakKeyDictionary), and holds no
# reference to it.
_by_conf = {}
_lock = threading.Lock()


def read(conf, reader):
    """``reader(conf)``, kept as :class:`Options` does, one per ``conf``
    and ``reader`` (a function of the module that reads: the same
    object at every call)."""
    entries = _by_conf.get(id(conf))
    if entries is None:
        with _lock:
            entries = _by_conf.get(id(conf))
            if entries is None:
                entries = _by_conf[id(conf)] = {}
                weakref.finalize(conf, _by_conf.pop, id(conf), None)
    kept = entries.get(reader)
    if kept is None:
        kept = entries.setdefault(reader, _Kept())
    return _get(conf, kept, reader)
