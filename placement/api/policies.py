"""Default policy rules of the REST API.

The rule names and check strings are those OpenStack Placement defines,
so that operators' policy files work unchanged. Each API rule points at
one of the base rules below. With ``[oslo_policy] enforce_new_defaults``
off (legacy mode) a base rule also accepts its deprecated form,
``role:admin``; with it on, only the new role-based form applies.
"""

from oslo_log import versionutils
from oslo_policy import policy

ADMIN_API = "admin_api"
ADMIN_OR_SERVICE = "rule:admin_or_service_api"
SERVICE = "rule:service_api"
ADMIN_OR_PROJECT_READER_OR_SERVICE = (
    "rule:admin_or_project_reader_or_service_api")

_LEGACY = policy.DeprecatedRule(
    name="rule:admin_api",
    check_str="role:admin",
    deprecated_reason=(
        "Placement policies moved to the admin, service and reader roles "
        "with project scope; the admin-only default is kept only while "
        "[oslo_policy] enforce_new_defaults is off."),
    deprecated_since=versionutils.deprecated.WALLABY,
)

BASE_RULES = [
    policy.RuleDefault(
        ADMIN_API, "role:admin",
        description="Administrators only.", scope_types=["project"]),
    policy.RuleDefault(
        "service_api", "role:service",
        description="Other OpenStack services (role service).",
        scope_types=["project"], deprecated_rule=_LEGACY),
    policy.RuleDefault(
        "admin_or_service_api", "role:admin or role:service",
        description="Administrators or other services; the default of "
                    "most placement operations.",
        scope_types=["project"], deprecated_rule=_LEGACY),
    policy.RuleDefault(
        "project_reader_api",
        "role:reader and project_id:%(project_id)s",
        description="Readers of the project the request is about.",
        deprecated_rule=_LEGACY),
    policy.RuleDefault(
        "admin_or_project_reader_or_service_api",
        "role:admin or rule:project_reader_api or role:service",
        description="Administrators, services, or readers of the project "
                    "the request is about.",
        scope_types=["project"], deprecated_rule=_LEGACY),
]

# (rule name, check, description, [(method, path), ...])
_API_RULES = [
    ("placement:resource_providers:list", ADMIN_OR_SERVICE,
     "List resource providers.", [("GET", "/resource_providers")]),
    ("placement:resource_providers:create", ADMIN_OR_SERVICE,
     "Create a resource provider.", [("POST", "/resource_providers")]),
    ("placement:resource_providers:show", ADMIN_OR_SERVICE,
     "Show a resource provider.", [("GET", "/resource_providers/{uuid}")]),
    ("placement:resource_providers:update", ADMIN_OR_SERVICE,
     "Rename or re-parent a resource provider.",
     [("PUT", "/resource_providers/{uuid}")]),
    ("placement:resource_providers:delete", ADMIN_OR_SERVICE,
     "Delete a resource provider.",
     [("DELETE", "/resource_providers/{uuid}")]),
    ("placement:resource_classes:list", ADMIN_OR_SERVICE,
     "List resource classes.", [("GET", "/resource_classes")]),
    ("placement:resource_classes:create", ADMIN_OR_SERVICE,
     "Create a custom resource class.", [("POST", "/resource_classes")]),
    ("placement:resource_classes:show", ADMIN_OR_SERVICE,
     "Show a resource class.", [("GET", "/resource_classes/{name}")]),
    ("placement:resource_classes:update", ADMIN_OR_SERVICE,
     "Create (1.7+) or rename (before 1.7) a custom resource class.",
     [("PUT", "/resource_classes/{name}")]),
    ("placement:resource_classes:delete", ADMIN_OR_SERVICE,
     "Delete a custom resource class.",
     [("DELETE", "/resource_classes/{name}")]),
    ("placement:resource_providers:inventories:list", ADMIN_OR_SERVICE,
     "List the inventories of a resource provider.",
     [("GET", "/resource_providers/{uuid}/inventories")]),
    ("placement:resource_providers:inventories:create", ADMIN_OR_SERVICE,
     "Add one inventory to a resource provider.",
     [("POST", "/resource_providers/{uuid}/inventories")]),
    ("placement:resource_providers:inventories:show", ADMIN_OR_SERVICE,
     "Show one inventory of a resource provider.",
     [("GET", "/resource_providers/{uuid}/inventories/"
              "{resource_class}")]),
    ("placement:resource_providers:inventories:update", ADMIN_OR_SERVICE,
     "Replace all inventories, or change one, of a resource provider.",
     [("PUT", "/resource_providers/{uuid}/inventories"),
      ("PUT", "/resource_providers/{uuid}/inventories/{resource_class}")]),
    ("placement:resource_providers:inventories:delete", ADMIN_OR_SERVICE,
     "Delete all inventories, or one, of a resource provider.",
     [("DELETE", "/resource_providers/{uuid}/inventories"),
      ("DELETE",
       "/resource_providers/{uuid}/inventories/{resource_class}")]),
    ("placement:resource_providers:aggregates:list", ADMIN_OR_SERVICE,
     "List the aggregates of a resource provider.",
     [("GET", "/resource_providers/{uuid}/aggregates")]),
    ("placement:resource_providers:aggregates:update", ADMIN_OR_SERVICE,
     "Set the aggregates of a resource provider.",
     [("PUT", "/resource_providers/{uuid}/aggregates")]),
    ("placement:resource_providers:usages", ADMIN_OR_SERVICE,
     "Show what is used of a resource provider.",
     [("GET", "/resource_providers/{uuid}/usages")]),
    ("placement:usages", ADMIN_OR_PROJECT_READER_OR_SERVICE,
     "Show what a project (and user) uses.", [("GET", "/usages")]),
    ("placement:traits:list", ADMIN_OR_SERVICE,
     "List traits.", [("GET", "/traits")]),
    ("placement:traits:show", ADMIN_OR_SERVICE,
     "Check that a trait exists.", [("GET", "/traits/{name}")]),
    ("placement:traits:update", ADMIN_OR_SERVICE,
     "Create a custom trait.", [("PUT", "/traits/{name}")]),
    ("placement:traits:delete", ADMIN_OR_SERVICE,
     "Delete a custom trait.", [("DELETE", "/traits/{name}")]),
    ("placement:resource_providers:traits:list", ADMIN_OR_SERVICE,
     "List the traits of a resource provider.",
     [("GET", "/resource_providers/{uuid}/traits")]),
    ("placement:resource_providers:traits:update", ADMIN_OR_SERVICE,
     "Set the traits of a resource provider.",
     [("PUT", "/resource_providers/{uuid}/traits")]),
    ("placement:resource_providers:traits:delete", ADMIN_OR_SERVICE,
     "Remove every trait of a resource provider.",
     [("DELETE", "/resource_providers/{uuid}/traits")]),
    ("placement:allocations:manage", ADMIN_OR_SERVICE,
     "Write the allocations of several consumers at once.",
     [("POST", "/allocations")]),
    ("placement:allocations:list", ADMIN_OR_SERVICE,
     "Show the allocations of a consumer.",
     [("GET", "/allocations/{consumer_uuid}")]),
    ("placement:allocations:update", ADMIN_OR_SERVICE,
     "Replace the allocations of a consumer.",
     [("PUT", "/allocations/{consumer_uuid}")]),
    ("placement:allocations:delete", ADMIN_OR_SERVICE,
     "Delete the allocations of a consumer.",
     [("DELETE", "/allocations/{consumer_uuid}")]),
    ("placement:resource_providers:allocations:list", ADMIN_OR_SERVICE,
     "List the allocations against a resource provider.",
     [("GET", "/resource_providers/{uuid}/allocations")]),
    ("placement:allocation_candidates:list", ADMIN_OR_SERVICE,
     "Find allocation candidates for a request.",
     [("GET", "/allocation_candidates")]),
    ("placement:reshaper:reshape", SERVICE,
     "Move inventories and allocations between providers atomically.",
     [("POST", "/reshaper")]),
]

API_RULES = [
    policy.DocumentedRuleDefault(
        name=name, check_str=check, description=description,
        operations=[{"method": m, "path": p} for m, p in operations],
        scope_types=["project"])
    for name, check, description, operations in _API_RULES
]


def list_rules():
    """Every default rule (also the oslo.policy.policies entry point)."""
    return BASE_RULES + API_RULES


def open_rules():
    """Every rule allowed to anyone authenticated, except admin_api: for
    test harnesses that exercise the API without roles."""
    return [policy.RuleDefault(
        rule.name, rule.check_str if rule.name == ADMIN_API else "@",
        scope_types=rule.scope_types) for rule in list_rules()]
