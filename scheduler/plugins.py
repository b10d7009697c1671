"""Finding filters and weighers by name: the built-in ones (every module
of the filters/ or weighers/ package) and third-party ones registered
under an entry point group."""

import importlib
import importlib.metadata
import pkgutil

from scheduler import errors

FILTER_GROUP = "gantt.scheduler.filters"
WEIGHER_GROUP = "gantt.scheduler.weighers"


def builtin(package_name, base):
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


def registered(group, base):
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


def load(names, conf, package_name, group, base):
    """Instances of the classes called ``names``, in that order; an
    unknown name is an error that lists the known ones."""
    known = builtin(package_name, base)
    known.update(registered(group, base))
    missing = [n for n in names if n not in known]
    if missing:
        raise errors.SchedulerError(
            f"unknown {package_name[:-1]} {', '.join(missing)}; known: "
            f"{', '.join(sorted(known))}")
    return [known[n](conf) for n in names]


def all_names(package_name, group, base):
    known = builtin(package_name, base)
    known.update(registered(group, base))
    return sorted(known)
