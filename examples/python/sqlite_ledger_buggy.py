#!/usr/bin/env python3
"""sqlite_ledger_buggy.py: examples/python/sqlite_ledger.py with one realistic bug, marked BUG
below. `tidemark check --command "python3 examples/python/sqlite_ledger_buggy.py"` must catch
it: see test/process.test.ts.
"""

import json
import os
import sqlite3
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the example
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tidemark_client import Client, WorldError  # noqa: E402

SCHEMA = """
  CREATE TABLE IF NOT EXISTS progress (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    binding  TEXT NOT NULL,
    position TEXT NOT NULL            -- JSON { key, id }: the committed watermark
  );
  CREATE TABLE IF NOT EXISTS fence (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    epoch INTEGER NOT NULL            -- the newest lease generation that wrote here
  );
  CREATE TABLE IF NOT EXISTS completed (
    event   TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (event, version)
  );
  CREATE TABLE IF NOT EXISTS effects (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    event   TEXT NOT NULL,
    version INTEGER NOT NULL,
    payload TEXT NOT NULL
  );
  INSERT OR IGNORE INTO fence (id, epoch) VALUES (1, 0);
"""


def order(p):
    """The stable total order (R1): the ordering tuple, then the id as tie-break."""
    return (list(p["key"]), p["id"])


def position(event):
    return {"key": event["key"], "id": event["id"]}


class Stale(Exception):
    """A newer lease generation holds the ledger: this worker starts over."""


class Ledger:
    """The ledger: one SQLite file, opened once per process (so never before a fork)."""

    def __init__(self, directory):
        # Two workers may open the file at once; the busy timeout makes them take turns.
        # isolation_level=None: no implicit transactions; each one below is explicit.
        self.db = sqlite3.connect(os.path.join(directory, "ledger.db"), timeout=10, isolation_level=None)
        self.db.executescript(SCHEMA)

    def watermark(self, binding):
        """The committed watermark under this binding, or None."""
        row = self.db.execute("SELECT binding, position FROM progress WHERE id = 1").fetchone()
        return json.loads(row[1]) if row is not None and row[0] == binding else None

    def transaction(self, write):
        # BEGIN IMMEDIATE: the write lock is taken up front, so the guards read what the write sees.
        self.db.execute("BEGIN IMMEDIATE")
        try:
            result = write()
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return result

    def book(self, event, generation, binding, advance):
        """One transaction: the effect and its completion record unless the event is already
        booked, and the watermark if `advance` (never lowered). Returns False, writing
        nothing, when a newer lease generation has written here since: this worker is stale."""
        return self.transaction(lambda: self.book_now(event, generation, binding, advance))

    def book_now(self, event, generation, binding, advance):
        (epoch,) = self.db.execute("SELECT epoch FROM fence WHERE id = 1").fetchone()
        if generation < epoch:
            return False
        done = self.db.execute("SELECT 1 FROM completed WHERE event = ? AND version = ?", (event["id"], event["version"])).fetchone()
        if done is None:
            self.db.execute("INSERT INTO effects (event, version, payload) VALUES (?, ?, ?)", (event["id"], event["version"], event["payload"]))
            self.db.execute("INSERT INTO completed (event, version) VALUES (?, ?)", (event["id"], event["version"]))
        if advance:
            self.advance(binding, position(event))
        self.db.execute("UPDATE fence SET epoch = ? WHERE id = 1", (generation,))
        return True

    def advance(self, binding, value):
        current = self.watermark(binding)
        # The watermark never decreases (R3); another binding's progress says nothing about ours.
        if current is None or order(value) > order(current):
            self.db.execute(
                "INSERT INTO progress (id, binding, position) VALUES (1, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET binding = excluded.binding, position = excluded.position",
                (binding, json.dumps(value)),
            )

    def inspect(self):
        """What the harness's inspection sees: the watermark as stored, and every effect, oldest first."""
        row = self.db.execute("SELECT position FROM progress WHERE id = 1").fetchone()
        effects = self.db.execute("SELECT event, version, payload FROM effects ORDER BY seq").fetchall()
        return {
            "watermark": json.loads(row[0]) if row is not None else None,
            "effects": [{"event": {"id": e, "version": v}, "payload": p} for (e, v, p) in effects],
        }


ledgers = {}


def open_ledger(directory):
    """The process's one connection to its ledger, opened on first use (in the incarnation's own process)."""
    if directory not in ledgers:
        ledgers[directory] = Ledger(directory)
    return ledgers[directory]


def settled(contract, event, head):
    """Whether the source's contract says nothing can still appear at or before this event."""
    kind = contract["kind"]
    if kind in ("snapshot", "insertion-stable"):
        return True
    if kind == "replay-window":
        return head is not None and event["key"][0] < head - contract["window"]
    return False


def traverse(client, start, db, generation):
    """One traversal from the ledger's watermark to the end of the bound stream."""
    source = start["source"]
    binding = start["fingerprint"]
    watermark = db.watermark(binding)
    resume = {"kind": "after", "position": watermark} if watermark is not None and "after" in source["resumes"] else {"kind": "start"}
    head = None
    while True:
        page = client.fetch({"resume": resume, "limit": source["pageSize"]})
        if page["head"] is not None:
            head = page["head"] if head is None else max(head, page["head"])
        # Pages may overlap, repeat or arrive out of order: sort, and drop what is committed.
        events = [e for e in sorted(page["events"], key=order) if watermark is None or order(e) > order(watermark)]
        # BUG (R6, R7): the watermark for the whole page is committed first, in a transaction
        # of its own, before any of the page's events is booked. A crash or a lost lease
        # before the last one is booked leaves the watermark past events with no outcome, and
        # the next incarnation resumes after it. The fix: delete these lines; the watermark
        # moves only in each event's own transaction, below.
        if events:
            db.transaction(lambda: db.advance(binding, position(events[-1])))
        passable = True
        for event in events:
            # The heartbeat: still the lease holder? Nothing else runs between its reply and
            # the transaction below, so a worker that lost the lease never books.
            if client.lease() != generation:
                raise Stale()
            passable = passable and settled(source["contract"], event, head)
            if not db.book(event, generation, binding, passable):
                raise Stale()
            if passable:
                watermark = position(event)
        if page["next"] is None:
            return
        # The token only continues this traversal; it is never the watermark (R8).
        resume = {"kind": "token", "token": page["next"]}


def run(client, start):
    db = open_ledger(start["store"])
    while True:
        try:
            generation = client.lease()
            traverse(client, start, db, generation)
            if start["source"]["contract"]["kind"] == "none":
                client.fail("the source promises no stability (contract none): the ledger cannot prove it missed nothing")
            else:
                client.caught_up()
            return
        except (WorldError, Stale):
            # A world error or a lost lease: start over from what the ledger holds.
            continue


def main():
    # Effect and completion record share one SQLite transaction: each event is booked once.
    # No sessions: the connection lives for the process, so only a real kill loses it. Forks:
    # importing this file opens nothing, so each incarnation's child opens its own connection.
    client = Client("sqlite-ledger-buggy", {"delivery": "exactly-once"}, kind="blackbox", inspect=lambda start: open_ledger(start["store"]).inspect(), forks=True)
    client.serve(run)


if __name__ == "__main__":
    main()
