"""Reading files under a root path (``/`` on a real host, a fake tree in
tests). Missing or unreadable files read as None: discovery takes what
the kernel exposes."""

import os


def path(root, rel):
    return os.path.join(root, rel.lstrip("/"))


def read(root, rel):
    """The stripped text of ``root/rel``, or None."""
    try:
        with open(path(root, rel), encoding="utf-8",
                  errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def read_int(root, rel, base=10):
    text = read(root, rel)
    if text is None:
        return None
    try:
        return int(text, base)
    except ValueError:
        return None


def listdir(root, rel):
    """Sorted entries of the directory ``root/rel`` ([] if none)."""
    try:
        return sorted(os.listdir(path(root, rel)))
    except OSError:
        return []


def link_name(root, rel):
    """The last part of the symlink target at ``root/rel``, or None."""
    try:
        return os.path.basename(os.readlink(path(root, rel)))
    except OSError:
        return None
