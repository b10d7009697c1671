"""The change feed: processes on one database tell each other, through
Redis, that they committed something.

Without it a scheduler on PostgreSQL or MySQL reads the change logs (one
read transaction) before every decision, to catch what other processes
wrote (on SQLite the database's data_version tells it when to:
placement.db.data_version). With
[placement_database] change_feed_url set, every store publishes a short
message on a Redis channel after each commit that changed something
(from a thread of its own: a commit never waits on Redis), and listens
on that channel. The read before a decision then happens
only when another process announced a commit since the last read, while
the subscription is not confirmed (starting, or Redis unreachable: then
every decision reads, as without a feed), or when the last read is older
than change_feed_max_age seconds. That last rule covers a message that
never came: a process that died between its commit and its publish.

A commit announced a moment after a decision started can only make that
decision use a view one commit old, and the claim's generation checks
catch that: nothing is over-committed, at worst a claim is retried.
"""

import logging
import threading
import time
import uuid

from placement.db import announcements

try:
    import redis
except ImportError:  # the redis extra is not installed
    redis = None

LOG = logging.getLogger(__name__)

# How long the listener waits for a message before it looks whether it
# was told to stop; and between two attempts to reach Redis.
_POLL_S = 0.2
_RETRY_S = 1.0


class ChangeFeed(announcements.Announcements):
    """One process's end of the feed: publish its commits, note the
    others'."""

    def __init__(self, url, channel, max_age, clock=time.monotonic,
                 client=None):
        super().__init__(max_age, clock)
        self.channel = channel
        # Our own messages come back to us: the token tells them apart.
        self._token = uuid.uuid4().hex.encode()
        # ``client``: a redis.Redis made elsewhere (the fault tests give
        # fakeredis's, which can be made to fail).
        self._client = client or redis.Redis.from_url(
            url, socket_connect_timeout=2, socket_timeout=2)
        self._warned = False
        # Since the subscription was lost (one warning an outage).
        self._outage = False
        self._stop = threading.Event()
        self._commits = threading.Event()
        self._threads = [
            threading.Thread(target=self._listen, daemon=True,
                             name="gantt-change-feed-listen"),
            threading.Thread(target=self._publish, daemon=True,
                             name="gantt-change-feed-publish")]
        for thread in self._threads:
            thread.start()

    # -- this process -----------------------------------------------------

    def publish(self):
        """Announce a commit of this process. The message leaves from a
        thread of its own, so that a commit never waits on Redis; commits
        made while one is on its way share the next message."""
        self._commits.set()

    def close(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)
        self._client.close()

    # -- the threads ----------------------------------------------------

    def _publish(self):
        while not self._stop.is_set():
            if not self._commits.wait(_POLL_S):
                continue
            self._commits.clear()
            try:
                self._client.publish(self.channel, self._token)
                self._warned = False
            except redis.RedisError as exc:
                # The others read on their max_age rule meanwhile.
                if not self._warned:
                    LOG.warning("change feed: cannot publish to %s: %s",
                                self.channel, exc)
                    self._warned = True

    def _listen(self):
        while not self._stop.is_set():
            pubsub = self._client.pubsub()
            try:
                pubsub.subscribe(self.channel)
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=_POLL_S)
                    if message is not None:
                        self._on_message(message)
            except redis.RedisError as exc:
                if not self._outage:
                    LOG.warning("change feed: lost %s (%s); reading the "
                                "database before every decision until it "
                                "is back", self.channel, exc)
                self._outage = True
            finally:
                self._lost()
                try:
                    pubsub.close()
                except redis.RedisError:
                    pass
            self._stop.wait(_RETRY_S)

    def _on_message(self, message):
        if message["type"] == "subscribe":
            # Anything before this moment was missed: read once.
            if self._outage:
                LOG.info("change feed: %s is back", self.channel)
            self._outage = False
            self._joined()
        elif (message["type"] == "message"
              and message["data"] != self._token):
            self._heard()


def open_feed(conf):
    """The feed [placement_database] configures, or None."""
    db = conf.placement_database
    if not db.change_feed_url:
        return None
    if redis is None:
        raise RuntimeError(
            "[placement_database] change_feed_url is set but the redis "
            "package is missing: pip install 'gantt[redis]'")
    return ChangeFeed(db.change_feed_url, db.change_feed_channel,
                      db.change_feed_max_age)
