"""Policy enforcement: one oslo.policy Enforcer per application.

The defaults are in placement/api/policies.py; a policy file named by
``[oslo_policy] policy_file`` overrides any of them.
"""

import logging

from oslo_config import cfg
from oslo_policy import opts as policy_opts
from oslo_policy import policy

from placement.api import policies

LOG = logging.getLogger(__name__)

MODES = ("legacy", "secure", "open")


class NotAuthorized(Exception):
    def __init__(self, rule):
        super().__init__(f"Policy does not allow {rule} to be performed.")
        self.rule = rule


def register_opts(conf):
    policy_opts.set_defaults(conf)


def apply_mode(conf, mode):
    """``legacy``: the old admin-only defaults also pass; ``secure``: only
    the new role-based defaults; ``open``: see make_enforcer."""
    if mode in ("legacy", "secure"):
        conf.set_override("enforce_new_defaults", mode == "secure",
                          group="oslo_policy")


def make_enforcer(conf, mode=None):
    """An Enforcer with the default rules registered and the policy file,
    if any, loaded. ``mode='open'`` allows every rule to anyone
    authenticated except admin_api."""
    register_opts(conf)
    apply_mode(conf, mode)
    enforcer = policy.Enforcer(conf)
    # The new defaults are documented; one warning per rule at start-up
    # would only bury the log.
    enforcer.suppress_default_change_warnings = True
    enforcer.suppress_deprecation_warnings = True
    rules = policies.open_rules() if mode == "open" else policies.list_rules()
    enforcer.register_defaults(rules)
    enforcer.load_rules()
    return enforcer


def get_enforcer():
    """The Enforcer of oslo.policy's commands (entry point
    ``oslo.policy.enforcer``: oslopolicy-policy-generator,
    oslopolicy-list-redundant, oslopolicy-validator with ``--namespace
    gantt``). Those commands parse oslo.config's global ConfigOpts (their
    ``--config-file``) before they ask for it, so that one is used here:
    the only place gantt reads the global, for their protocol."""
    return make_enforcer(cfg.CONF)


def authorize(enforcer, context, rule, target):
    """NotAuthorized unless ``context`` may apply ``rule`` to ``target``."""
    try:
        allowed = enforcer.authorize(rule, target, context, do_raise=False)
    except policy.InvalidScope:
        allowed = False
    if not allowed:
        LOG.debug("policy refused %s to %s", rule,
                  context.to_policy_values())
        raise NotAuthorized(rule)
