"""Options of the scheduler: [scheduler], [filter_scheduler], [metrics]
and [workarounds], each under the name and default Nova gives it, so that a
nova.conf's scheduler sections carry over unchanged; and gantt's own
[decision_log] (scheduler.decision_log).

Declared once here; entry points register them with :func:`register_opts`
(registering twice is harmless) and the sample config lists them through
:func:`list_opts`. The host state options ([DEFAULT] service_down_time,
default_availability_zone) live in scheduler.host_options.
"""

from oslo_config import cfg

DEFAULT_FILTERS = [
    "ComputeFilter",
    "ComputeCapabilitiesFilter",
    "ImagePropertiesFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
]

SCHEDULER_OPTS = [
    cfg.IntOpt(
        "max_attempts", default=3, min=1,
        help="How many hosts a build may try: the chosen host plus "
             "max_attempts - 1 alternates from its cell, returned with "
             "each selection so that the cell can retry without calling "
             "the scheduler again."),
    cfg.IntOpt(
        "max_placement_results", default=1000, min=1,
        help="The limit sent with the allocation candidates query. Left "
             "out when the request has a same_host, different_host or "
             "server group hint, whose hosts a limit could cut off. When "
             "the filters leave no host among that many candidates, the "
             "query is asked once more without the limit."),
    cfg.BoolOpt(
        "limit_tenants_to_placement_aggregate", default=False,
        help="Restrict a project to the aggregates whose metadata has a "
             "filter_tenant_id* key naming it, through member_of in the "
             "candidates query."),
    cfg.BoolOpt(
        "placement_aggregate_required_for_tenants", default=False,
        help="With limit_tenants_to_placement_aggregate: a project that no "
             "aggregate names gets no host at all (default: any host)."),
    cfg.BoolOpt(
        "query_placement_for_image_type_support", default=False,
        help="Ask only for hosts whose root provider has the "
             "COMPUTE_IMAGE_TYPE_* trait of the image's disk_format."),
    cfg.BoolOpt(
        "enable_isolated_aggregate_filtering", default=False,
        help="Keep requests out of aggregates whose metadata requires a "
             "trait (trait:NAME=required) the flavor and image do not "
             "ask for: those aggregates are sent as forbidden member_of."),
    cfg.BoolOpt(
        "image_metadata_prefilter", default=False,
        help="Turn the image's hw_disk_bus, hw_vif_model, hw_video_model "
             "and hw_vm_mode properties into required COMPUTE_* traits."),
    cfg.BoolOpt(
        "strict_availability_zones", default=False,
        help="How a requested availability zone limits the hosts. False "
             "(Nova's rule): when some aggregates carry the zone, only "
             "their hosts; when none does (the default zone, or an "
             "unknown zone), any host. True (the rule of Nova's removed "
             "AvailabilityZoneFilter): the default zone "
             "([DEFAULT] default_availability_zone) means the hosts in no "
             "zone aggregate, and a zone no aggregate carries fails the "
             "request with no valid host."),
    cfg.IntOpt(
        "claim_group_size", default=8, min=1,
        help="gantt: when several single-instance requests wait for the "
             "scheduler at once, decide up to this many in a row and "
             "claim them in one transaction (one commit instead of one "
             "per request). The group is all-or-nothing; when its claim "
             "fails, each request is decided again alone. 1: every "
             "request is claimed on its own. A request never waits for "
             "others to arrive. With [recording] enabled, calls are "
             "served one at a time (the trace keeps the order of the "
             "decisions), so none are grouped."),
    cfg.BoolOpt(
        "query_placement_for_routed_network_aggregates", default=False,
        help="Nova's option: restrict hosts to the placement aggregates of "
             "the routed network segments of the requested networks, "
             "which Nova's scheduler asks Neutron for. gantt does not "
             "query Neutron: setting it changes nothing but a warning "
             "logged once, and a server with a port on a routed network "
             "may go to a host that cannot reach the port's segment, "
             "where binding the port fails."),
]

FILTER_SCHEDULER_OPTS = [
    cfg.IntOpt(
        "host_subset_size", default=1, min=1,
        help="Choose at random among this many of the best weighed "
             "hosts. More than 1 makes concurrent schedulers collide "
             "less, at the cost of a less optimal choice."),
    cfg.IntOpt(
        "max_io_ops_per_host", default=8, min=0,
        help="IoOpsFilter: hosts with more concurrent I/O heavy "
             "operations (builds, resizes, snapshots, ...) than this "
             "are rejected."),
    cfg.IntOpt(
        "max_instances_per_host", default=50, min=1,
        help="NumInstancesFilter: hosts with this many instances or more "
             "are rejected."),
    cfg.BoolOpt(
        "track_instance_changes", default=True,
        help="Keep the instances of each host in memory from compute "
             "reports (affinity filters and weighers read them)."),
    cfg.ListOpt(
        "enabled_filters", default=DEFAULT_FILTERS,
        help="Host filters to run, in this order. Names are those of "
             "Nova's filters, or of third-party filters registered under "
             "the gantt.scheduler.filters entry point group."),
    cfg.ListOpt(
        "weight_classes", default=["all"],
        help="Weighers to run: 'all' for every built-in weigher, or a "
             "list of names (RAMWeigher, CPUWeigher, ...)."),
    cfg.FloatOpt(
        "ram_weight_multiplier", default=1.0,
        help="RAMWeigher: positive spreads by free RAM, negative stacks. "
             "Aggregate metadata of the same name overrides it per host "
             "(the lowest value of its aggregates)."),
    cfg.FloatOpt(
        "cpu_weight_multiplier", default=1.0,
        help="CPUWeigher: positive spreads by free vCPUs, negative "
             "stacks. Aggregate metadata overrides it."),
    cfg.FloatOpt(
        "disk_weight_multiplier", default=1.0,
        help="DiskWeigher: positive spreads by free disk, negative "
             "stacks. Aggregate metadata overrides it."),
    cfg.FloatOpt(
        "io_ops_weight_multiplier", default=-1.0,
        help="IoOpsWeigher: negative prefers hosts with fewer concurrent "
             "I/O operations. Aggregate metadata overrides it."),
    cfg.FloatOpt(
        "pci_weight_multiplier", default=1.0, min=0.0,
        help="PCIWeigher: keeps hosts with PCI devices for requests that "
             "need them. Aggregate metadata overrides it."),
    cfg.FloatOpt(
        "soft_affinity_weight_multiplier", default=1.0, min=0.0,
        help="ServerGroupSoftAffinityWeigher. Aggregate metadata "
             "overrides it."),
    cfg.FloatOpt(
        "soft_anti_affinity_weight_multiplier", default=1.0, min=0.0,
        help="ServerGroupSoftAntiAffinityWeigher. Aggregate metadata "
             "overrides it."),
    cfg.FloatOpt(
        "build_failure_weight_multiplier", default=1000000.0,
        help="BuildFailureWeigher: how much recent failed builds count "
             "against a host. Aggregate metadata overrides it."),
    cfg.FloatOpt(
        "cross_cell_move_weight_multiplier", default=1000000.0,
        help="CrossCellWeigher: positive prefers hosts in the instance's "
             "current cell on a move. Aggregate metadata overrides it."),
    cfg.FloatOpt(
        "hypervisor_version_weight_multiplier", default=1.0,
        help="HypervisorVersionWeigher: positive prefers newer "
             "hypervisors. Aggregate metadata overrides it."),
    cfg.FloatOpt(
        "num_instances_weight_multiplier", default=0.0,
        help="NumInstancesWeigher: positive prefers hosts with more "
             "instances (packing), negative fewer. Aggregate metadata "
             "overrides it."),
    cfg.FloatOpt(
        "image_props_weight_multiplier", default=0.0,
        help="ImagePropertiesWeigher: positive prefers hosts whose "
             "instances share more image properties with the request. "
             "Aggregate metadata overrides it."),
    cfg.ListOpt(
        "image_props_weight_setting", default=[],
        help="ImagePropertiesWeigher: name=ratio pairs weighing each "
             "image property; empty counts every property once."),
    cfg.BoolOpt(
        "shuffle_best_same_weighed_hosts", default=False,
        help="Shuffle the hosts that share the best weight, so that "
             "identical hosts (ironic nodes) are not always tried in the "
             "same order."),
    cfg.StrOpt(
        "image_properties_default_architecture", default=None,
        choices=["alpha", "armv6", "armv7l", "armv7b", "aarch64", "cris",
                 "i686", "ia64", "lm32", "m68k", "microblaze",
                 "microblazeel", "mips", "mipsel", "mips64", "mips64el",
                 "openrisc", "parisc", "parisc64", "ppc", "ppcle", "ppc64",
                 "ppc64le", "ppcemb", "s390", "s390x", "sh4", "sh4eb",
                 "sparc", "sparc64", "unicore32", "x86_64", "xtensa",
                 "xtensaeb"],
        help="ImagePropertiesFilter: the architecture of images that do "
             "not set hw_architecture."),
    cfg.ListOpt(
        "isolated_images", default=[],
        help="IsolatedHostsFilter: images that may run only on "
             "isolated_hosts."),
    cfg.ListOpt(
        "isolated_hosts", default=[],
        help="IsolatedHostsFilter: hosts kept for isolated_images."),
    cfg.BoolOpt(
        "restrict_isolated_hosts_to_isolated_images", default=True,
        help="IsolatedHostsFilter: isolated hosts take only isolated "
             "images (false: any image)."),
    cfg.StrOpt(
        "aggregate_image_properties_isolation_namespace", default=None,
        help="AggregateImagePropertiesIsolation: compare only aggregate "
             "metadata keys in this namespace."),
    cfg.StrOpt(
        "aggregate_image_properties_isolation_separator", default=".",
        help="AggregateImagePropertiesIsolation: the separator between "
             "namespace and key."),
    cfg.BoolOpt(
        "pci_in_placement", default=False,
        help="PCI devices are tracked in placement: PciPassthroughFilter "
             "then also checks the devices placement allocated."),
]

METRICS_OPTS = [
    cfg.FloatOpt(
        "weight_multiplier", default=1.0,
        help="MetricsWeigher multiplier. Aggregate metadata "
             "metrics_weight_multiplier overrides it."),
    cfg.ListOpt(
        "weight_setting", default=[],
        help="MetricsWeigher: name=ratio pairs, e.g. cpu.percent=-1.0; the "
             "host's weight is the sum of metric times ratio."),
    cfg.BoolOpt(
        "required", default=True,
        help="MetricsWeigher: a host missing a metric of weight_setting "
             "is an error (true) or gets weight_of_unavailable (false)."),
    cfg.FloatOpt(
        "weight_of_unavailable", default=-10000.0,
        help="MetricsWeigher: the weight of a host missing a metric, when "
             "required is false."),
]


DECISION_LOG_GROUP = "decision_log"

DECISION_LOG_OPTS = [
    cfg.BoolOpt(
        "enabled", default=True,
        help="gantt: keep, for every select_destinations gantt-scheduler "
             "decides, what was decided and why (the placement query and "
             "its candidates, what each filter removed, the best weighed "
             "hosts with each weigher's share, the chosen host and "
             "alternates, claims and conflicts, or the cause of no valid "
             "host) in JSON lines files that 'gantt-manage decisions' "
             "reads and 'gantt-simulate replay' decides again. It costs "
             "a few percent of a decision's CPU (docs/scheduling.md, "
             "\"The decision log\")."),
    cfg.StrOpt(
        "directory", default="$state_path/decisions",
        help="Where the decision log is written: each gantt-scheduler "
             "process writes its own file, decisions.<pid>.jsonl, and its "
             "rotated backups (decisions.<pid>.jsonl.1, ...). Created "
             "when missing. A log that cannot be written is logged once "
             "and the requests are served all the same."),
    cfg.IntOpt(
        "max_bytes", default=64 * 1024 * 1024, min=0,
        help="Size at which a process's decision file is rotated "
             "(renamed .1, older backups shifted to .2 ...). 0: never "
             "rotated for its size."),
    cfg.IntOpt(
        "backup_count", default=8, min=0,
        help="Rotated decision files each process keeps; older ones are "
             "removed. A process's log takes at most max_bytes x "
             "(backup_count + 1) bytes."),
    cfg.IntOpt(
        "max_age", default=14 * 24 * 3600, min=0,
        help="Seconds a decision is kept (default 14 days), size "
             "allowing: a process's file is rotated once its first "
             "decision is half that old, and any decision file in the "
             "directory (those of processes that have stopped too) is "
             "removed once its last decision is that old, so a decision "
             "goes between max_age and 1.5 x max_age after it was made. "
             "0: no age bound."),
    cfg.IntOpt(
        "top_hosts", default=5, min=0, max=32,
        help="How many of the best weighed hosts each decision keeps, "
             "with each weigher's share of their weights."),
    cfg.IntOpt(
        "removed_hosts", default=10, min=0,
        help="How many of the hosts each filter removed a decision names "
             "(the count removed is always kept)."),
    cfg.FloatOpt(
        "flush_interval", default=1.0, min=0.01,
        help="Seconds between two writes of the buffered decisions to "
             "the file (no fsync): a crash loses at most this much of the "
             "log. Everything is written when the service stops."),
]


WORKAROUNDS_OPTS = [
    cfg.BoolOpt(
        "disable_fallback_pcpu_query", default=False,
        help="Do not ask again with VCPU when a request for dedicated CPUs "
             "(PCPU) finds no host: set once every compute node reports "
             "PCPU inventory."),
]


def register_opts(conf):
    conf.register_opts(WORKAROUNDS_OPTS, group="workarounds")
    conf.register_opts(SCHEDULER_OPTS, group="scheduler")
    conf.register_opts(FILTER_SCHEDULER_OPTS, group="filter_scheduler")
    conf.register_opts(METRICS_OPTS, group="metrics")
    conf.register_opts(DECISION_LOG_OPTS, group=DECISION_LOG_GROUP)


def list_opts():
    """Options for oslo-config-generator."""
    return [("scheduler", SCHEDULER_OPTS),
            ("filter_scheduler", FILTER_SCHEDULER_OPTS),
            ("metrics", METRICS_OPTS),
            (DECISION_LOG_GROUP, DECISION_LOG_OPTS),
            ("workarounds", WORKAROUNDS_OPTS)]
