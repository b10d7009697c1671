"""Local disk: ``os.statvfs`` of the configured instances path (the
function is a parameter so tests give their own)."""

import os

from compute.discovery.model import Disk

GB = 1024 ** 3


def discover_disk(path, reserved_mb=0, statvfs=os.statvfs):
    st = statvfs(path)
    return Disk(path=path,
                total_gb=st.f_blocks * st.f_frsize // GB,
                free_gb=st.f_bavail * st.f_frsize // GB,
                reserved_gb=-(-reserved_mb // 1024))
