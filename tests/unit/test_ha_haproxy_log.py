"""benchmarks.ha_haproxy reads back the API requests HAProxy answered
with a 5xx, which a three-controller run reports (benchmarks.ha_run's
proxy_5xx) so that a failure outside the faults says which side ended
the request."""

from benchmarks import ha_haproxy

# Lines as HAProxy 2.6 writes them with option httplog (a redispatch
# while a controller was down, a server that closed before its
# answer's headers, and a check's state change).
REDISPATCHED = (
    '10.77.0.14:38186 [30/Nov/2026:19:21:31.816] placement_api '
    'placement_api/c1 0/0/0/13/13 204 211 - - ---- 15/2/0/0/+1 0/0 '
    '"DELETE /allocations/d50206c4-7494-4cea-86b2-ff9592cfc84f HTTP/1.1"')
CLOSED = (
    '10.77.0.14:40112 [30/Nov/2026:19:22:01.101] placement_api '
    'placement_api/c3 0/0/0/-1/4 502 209 - - SH-- 16/3/1/0/0 0/0 '
    '"DELETE /allocations/40bed77c-f375-49b4-94ce-34cd6c568430 HTTP/1.1"')
CHECK = ('[WARNING]  (6760) : Server placement_api/c2 is DOWN, reason: '
         'Layer4 connection problem, info: "Connection refused"')


def test_only_the_requests_answered_with_a_5xx(tmp_path):
    (tmp_path / "haproxy.log").write_text(
        "\n".join([CHECK, REDISPATCHED, CLOSED, CHECK]) + "\n")
    proxy = ha_haproxy.HAProxy(None, tmp_path, ["c1", "c2", "c3"])
    assert proxy.failed_requests() == [CLOSED]
    assert proxy.failed_requests(limit=0) == []


def test_no_log_no_lines(tmp_path):
    proxy = ha_haproxy.HAProxy(None, tmp_path, ["c1"])
    assert proxy.failed_requests() == []
