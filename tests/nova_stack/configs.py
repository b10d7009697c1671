"""The configuration files of the Nova stack.

One nova.conf serves every Nova process; each process adds a small file
of its own after it (``--config-file nova.conf --config-file <own>``):
its host name and, for a compute, its driver and state directory. gantt-
scheduler reads nova.conf and the scheduler's own file as nova-scheduler
does, plus a gantt.conf with what gantt adds, so that both schedulers see
the same service_down_time, filters and weighers.
"""

import configparser
import io

# Heartbeats every REPORT_INTERVAL seconds; a service silent for
# SERVICE_DOWN_TIME seconds is down. Short, so that the stopped-compute
# scenario waits seconds rather than Nova's default minute.
REPORT_INTERVAL = 2
SERVICE_DOWN_TIME = 10
MAX_ATTEMPTS = 3
# gantt-scheduler reads what changed in Nova's cell database this often
# (its default, written out): a heartbeat that could pass
# SERVICE_DOWN_TIME before the next read is judged at each decision.
HOST_STATE_POLL_INTERVAL = 1.0
# Nova's default filters, named for both schedulers.
ENABLED_FILTERS = ("ComputeFilter,ComputeCapabilitiesFilter,"
                   "ImagePropertiesFilter,ServerGroupAntiAffinityFilter,"
                   "ServerGroupAffinityFilter")
# One deliberate build failure would otherwise push its host to the
# bottom of the weights for good (Nova's BuildFailureWeigher), and the
# later scenarios rely on the large host staying the favourite.
BUILD_FAILURE_WEIGHT_MULTIPLIER = 0

# Nova's compute API pipeline without keystonemiddleware: the test
# sends the headers the middleware would set (X-User-Id, X-Project-Id,
# X-Roles), and NovaKeystoneContext makes the request context of them.
API_PASTE = """\
[composite:osapi_compute]
use = call:nova.api.openstack.urlmap:urlmap_factory
/: versions
/v2.1: versions_v21
/v2.1/+: compute_v21

[pipeline:versions]
pipeline = faultwrap versions_app

[pipeline:versions_v21]
pipeline = compute_req_id faultwrap versions_v21_app

[pipeline:compute_v21]
pipeline = compute_req_id faultwrap request_log keystonecontext compute_app

[app:versions_app]
paste.app_factory = nova.api.openstack.compute.versions:Versions.factory

[app:versions_v21_app]
paste.app_factory = nova.api.openstack.compute.versions:VersionsV2.factory

[app:compute_app]
paste.app_factory = nova.api.openstack.compute:APIRouterV21.factory

[filter:compute_req_id]
paste.filter_factory = nova.api.compute_req_id:ComputeReqIdMiddleware.factory

[filter:faultwrap]
paste.filter_factory = nova.api.openstack:FaultWrapper.factory

[filter:request_log]
paste.filter_factory = nova.api.openstack.requestlog:RequestLog.factory

[filter:keystonecontext]
paste.filter_factory = nova.api.auth:NovaKeystoneContext.factory
"""


def render(sections):
    """INI text of {section: {option: value}}."""
    parser = configparser.RawConfigParser()
    parser.optionxform = str
    for section, options in sections.items():
        if section != "DEFAULT":
            parser.add_section(section)
        for name, value in options.items():
            parser.set(section, name, _value(value))
    out = io.StringIO()
    parser.write(out)
    return out.getvalue()


def _value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def nova_conf(urls, ports, work, scheduler_workers=1, extra=None):
    """The nova.conf every Nova process reads.

    ``urls``: api_db, cell_db, transport_url; ``ports``: placement,
    standins; ``work``: the stack's directory (locks, state);
    ``scheduler_workers``: processes of the scheduler (either kind
    reads ``[scheduler] workers``); ``extra``: {section: {option:
    value}} added over the rest (e.g. [filter_scheduler]
    host_subset_size, which both schedulers read).
    """
    placement = f"http://127.0.0.1:{ports['placement']}"
    standins = f"http://127.0.0.1:{ports['standins']}"
    sections = {
        "DEFAULT": {
            "debug": True,
            "transport_url": urls["transport_url"],
            "state_path": work / "nova-state",
            "my_ip": "127.0.0.1",
            "report_interval": REPORT_INTERVAL,
            "service_down_time": SERVICE_DOWN_TIME,
            "allow_resize_to_same_host": True,
            "graceful_shutdown_timeout": 5,
            # Periodic work the test does not look at, off: fewer
            # wake-ups on a small shared machine.
            "heal_instance_info_cache_interval": -1,
            "sync_power_state_interval": -1,
            "instance_usage_audit": False,
        },
        "api_database": {"connection": urls["api_db"]},
        "database": {"connection": urls["cell_db"]},
        "conductor": {"workers": 1},
        "scheduler": {"workers": scheduler_workers,
                      "max_attempts": MAX_ATTEMPTS,
                      "discover_hosts_in_cells_interval": -1},
        "filter_scheduler": {
            "enabled_filters": ENABLED_FILTERS,
            "build_failure_weight_multiplier":
                BUILD_FAILURE_WEIGHT_MULTIPLIER,
        },
        # No Keystone: a fixed token, which gantt-placement-api's noauth2
        # takes for an admin, and a fixed endpoint.
        "placement": {"auth_type": "admin_token", "token": "admin",
                      "endpoint": placement,
                      "endpoint_override": placement},
        "glance": {"api_servers": f"{standins}/image"},
        "neutron": {"auth_type": "admin_token", "token": "admin",
                    "endpoint": f"{standins}/network",
                    "endpoint_override": f"{standins}/network"},
        "oslo_concurrency": {"lock_path": work / "locks"},
        "oslo_messaging_rabbit": {"rabbit_retry_interval": 1,
                                  "rabbit_retry_backoff": 1},
        "notifications": {"notification_format": "unversioned"},
    }
    for section, options in (extra or {}).items():
        sections.setdefault(section, {}).update(options)
    return render(sections)


def service_conf(host, extra=None):
    """A process's own file: its host name, and ``extra`` sections."""
    sections = {"DEFAULT": {"host": host}}
    for section, options in (extra or {}).items():
        sections.setdefault(section, {}).update(options)
    return render(sections)


def compute_conf(host, driver, state_path, cell=None):
    """A nova-compute's file; ``cell``: the urls of a cell other than
    cell1 (see cell_sections)."""
    return service_conf(host, {**cell_sections(cell), "DEFAULT": {
        **cell_sections(cell).get("DEFAULT", {}),
        "compute_driver": driver,
        "state_path": state_path,
        "instances_path": state_path / "instances",
    }})


def cell_sections(cell):
    """What a service of another cell reads over nova.conf: that cell's
    database and message broker (``cell``: cell_db, transport_url;
    None: nothing, the service is in cell1)."""
    if cell is None:
        return {}
    return {"DEFAULT": {"transport_url": cell["transport_url"]},
            "database": {"connection": cell["cell_db"]}}


def gantt_conf(urls):
    """gantt-scheduler's own file, read after nova.conf and the
    scheduler's file (``--config-file nova.conf --config-file
    scheduler.conf --config-file gantt.conf``, as the README tells an
    operator to run it): nova.conf gives the broker, Nova's API
    database, service_down_time and the scheduler sections as they are;
    this file only what gantt adds.

    ``urls``: placement_db (the database gantt-placement-api serves).
    """
    return render({
        "placement_database": {"connection": urls["placement_db"]},
        "scheduler": {"host_state_source": "nova",
                      "host_state_poll_interval": HOST_STATE_POLL_INTERVAL},
    })
