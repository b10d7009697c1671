"""AllHostsFilter: lets every host through (a placeholder filter list)."""

from filters import base


class AllHostsFilter(base.BaseFilter):
    name = "AllHostsFilter"
    run_filter_once_per_request = True

    def mask(self, request, rows):
        return base.all_pass(rows)

    def why(self, request, row):
        return "AllHostsFilter rejects nothing"
