"""IsolatedHostsFilter: keep the isolated images on the isolated hosts.

With restrict_isolated_hosts_to_isolated_images (the default) it works
both ways: isolated images go only to isolated hosts and isolated hosts
take only isolated images. Without it, isolated hosts take any image.
With no isolated_images at all, the restricting form still keeps every
request off the isolated hosts (Nova does the same)."""

from filters import base, host_utils


class IsolatedHostsFilter(base.BaseFilter):
    name = "IsolatedHostsFilter"
    # Options and image do not change within a request.
    run_filter_once_per_request = True
    # A rebuild may bring a new image: check it against the host.
    RUN_ON_REBUILD = True

    def _state(self, request, rows):
        opts = self.conf.filter_scheduler
        host_isolated = host_utils.hosts_mask(
            request.table, opts.isolated_hosts, rows)
        image_isolated = (bool(opts.isolated_images)
                          and request.spec.image.id in opts.isolated_images)
        return opts.restrict_isolated_hosts_to_isolated_images, \
            image_isolated, host_isolated

    def mask(self, request, rows):
        restrict, image_isolated, host_isolated = self._state(request, rows)
        if restrict:
            return host_isolated == image_isolated
        return host_isolated | (not image_isolated)

    def why(self, request, row):
        image = request.spec.image.id
        host = request.table.hosts[row]
        _restrict, image_isolated, host_isolated = self._state(
            request, [row])
        if image_isolated:
            return (f"image {image} is isolated and host {host} is not in "
                    f"isolated_hosts")
        return (f"host {host} is isolated and image {image} is not in "
                f"isolated_images")
