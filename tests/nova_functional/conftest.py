"""The terminal summary of the Nova functional selection: the counts per
module, the time against its budget, and where the logs are."""

from tests.nova_functional import test_nova_functional as selection_test


def pytest_terminal_summary(terminalreporter):
    report = selection_test.REPORT
    if not report:
        return
    terminalreporter.write_sep(
        "=", "Nova 34 functional tests, gantt-placement-api as placement")
    for line in report["lines"]:
        terminalreporter.write_line(line)
    terminalreporter.write_line(
        f"time: {report['seconds']:.0f} s (budget "
        f"{selection_test.BUDGET_S} s); logs in {report['logs']}")
