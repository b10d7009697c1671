"""Where a reader stands in a change log whose sequence numbers may
commit out of order.

Kept by every cache that follows a change log (placement.db.follower:
placement's provider index, the scheduler's host state table). On
PostgreSQL and MySQL a transaction can commit sequence number 7 after
another committed 8, so numbers below the highest seen that are still
missing ("gaps": transactions in flight) are asked for again until they
show up or time out (a rolled-back transaction never shows up). Numbers
this process committed itself and already applied (through a store
listener) are not applied twice.
"""

import time

# A missing sequence number older than this is taken as rolled back.
GAP_TIMEOUT = 120.0
# How far back a full load looks for sequence numbers still in flight.
GAP_WINDOW = 10000


class ChangeCursor:
    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self.start(0, set())

    def start(self, top, present, pruned_below=0):
        """After a full load that saw the log up to ``top``; ``present``:
        the numbers found in the last GAP_WINDOW below it; numbers below
        ``pruned_below`` were pruned, not in flight, so they are no gaps
        (else the next catch-up would take them as lost and reload
        everything again)."""
        now = self._clock()
        top = max(top, pruned_below - 1)
        self.watermark = top
        self.gaps = {s: now for s in range(
            max(1, top - GAP_WINDOW + 1, pruned_below), top)
            if s not in present}
        self.applied_above = set()

    def low(self):
        """Read the log above this number."""
        return min(self.gaps) - 1 if self.gaps else self.watermark

    def lost(self, pruned_below):
        """Whether rows this reader still needs were pruned: reload all."""
        return pruned_below > self.watermark + 1 or bool(
            self.gaps and min(self.gaps) < pruned_below)

    def is_new(self, seq):
        return seq in self.gaps or (seq > self.watermark
                                    and seq not in self.applied_above)

    def advance(self, seqs):
        """The log rows ``seqs`` (all read above :meth:`low`) are applied."""
        for seq in seqs:
            self.gaps.pop(seq, None)
        top = max(seqs, default=self.watermark)
        if top > self.watermark:
            now = self._clock()
            for seq in range(self.watermark + 1, top):
                if seq not in seqs and seq not in self.applied_above:
                    self.gaps[seq] = now
            self.watermark = top
            self.applied_above = {s for s in self.applied_above if s > top}
        expired = self._clock() - GAP_TIMEOUT
        self.gaps = {s: t for s, t in self.gaps.items() if t > expired}

    def take_own(self, seqs):
        """This process committed ``seqs`` and applies them now; returns
        the ones not applied before (a sync may have read them first)."""
        fresh = [s for s in seqs if self.is_new(s)]
        for seq in fresh:
            if seq in self.gaps:
                del self.gaps[seq]
            else:
                self.applied_above.add(seq)
        # Own numbers right above the watermark leave nothing missing
        # below them: the watermark moves up instead of remembering them
        # (a process that writes and never syncs, such as the simulator,
        # would otherwise keep every number it ever committed).
        while self.watermark + 1 in self.applied_above:
            self.watermark += 1
            self.applied_above.remove(self.watermark)
        return fresh
