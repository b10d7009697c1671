"""ImagePropertiesWeigher: prefer hosts whose instances were built from
images sharing properties with the requested image.

Nova's rule: take the request image's properties as (key, str(value))
pairs; for each pair also found among the host's instances' image
properties, add how many of those instances have it, times the
property's ratio in ``[filter_scheduler] image_props_weight_setting``
(``name=ratio``; properties it leaves out count 0), or times 1 when the
setting is empty. Nova reads each instance's image properties from the
instance's system metadata in the cell database.

What gantt can compute: the request side (:func:`requested_properties`)
and the sum (:func:`score`) given per-instance properties. What it
cannot: the host state knows each instance only by uuid, flavor_id and
project_id (what compute services report through instance info sync);
no image properties reach the scheduler. So every host's instances
count as having no properties, and every host weighs 0: the weigher is
a no-op, as Nova's is at the default multiplier of 0.0. It is kept so
that a nova.conf naming it loads, and so that the rule is ready once
instance image properties are recorded.
"""

import collections

import numpy as np

from weighers import base, metrics


def requested_properties(spec):
    """The request image's properties as hashable (key, str) pairs."""
    props = spec.image.properties if spec.image else {}
    return {(key, str(value)) for key, value in (props or {}).items()}


def score(requested, instance_props, setting):
    """Nova's sum for one host: ``instance_props`` holds one set of
    (key, str) pairs per instance; ``setting`` {name: ratio} or empty."""
    seen = collections.Counter(
        pair for props in instance_props for pair in props)
    total = 0.0
    for pair in requested & seen.keys():
        ratio = setting.get(pair[0], 0.0) if setting else 1.0
        total += ratio * seen[pair]
    return total


def instance_properties(table, row):
    """Image properties of the instances on ``row``'s host: unknown to
    the host state (see the module docstring), so none."""
    return []


class ImagePropertiesWeigher(base.BaseWeigher):
    name = "ImagePropertiesWeigher"
    multiplier_option = "image_props_weight_multiplier"

    def raw(self, request, rows):
        # Nova skips the work when the configured multiplier is 0.
        if self.configured_multiplier() == 0.0:
            return np.zeros(len(rows))
        requested = requested_properties(request.spec)
        if not requested:
            return np.zeros(len(rows))
        setting = dict(metrics.parse_setting(
            self.conf.filter_scheduler.image_props_weight_setting,
            "filter_scheduler.image_props_weight_setting"))
        return np.fromiter(
            (score(requested, instance_properties(request.table, r),
                   setting) for r in rows),
            np.float64, count=len(rows))
