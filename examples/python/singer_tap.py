#!/usr/bin/env python3
"""singer_tap.py: a blackbox tap that keeps one bookmark per stream, as Singer taps do, in
its own durable store; it speaks the tidemark protocol over stdio (docs/protocol.md).

Run it under the harness:  tidemark check --command "python3 examples/python/singer_tap.py"

Its state file (in the `store` directory the start message names) holds a bookmark per
binding fingerprint, the completion records and the booked effects. Each event is booked in
one atomic write of that file (write a temporary file, fsync, rename), effect, completion
record and, when it may move, the stream's bookmark together, so it claims exactly-once.
After a rebind the new stream has no bookmark yet: its inspection reports every stream's
bookmark under `watermarks`, and the harness reads the current one's.
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the example
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tidemark_client import Client, WorldError  # noqa: E402


def order(p):
    """The stable total order (R1): the ordering tuple, then the id as tie-break."""
    return (list(p["key"]), p["id"])


def settled(contract, event, head):
    """Whether the source's contract says nothing can still appear at or before this event."""
    kind = contract["kind"]
    if kind in ("snapshot", "insertion-stable"):
        return True
    if kind == "replay-window":
        return head is not None and event["key"][0] < head - contract["window"]
    return False


class State:
    """The tap's durable state: one JSON file, replaced atomically."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "state.json")
        if os.path.exists(self.path):
            with open(self.path) as f:
                self.data = json.load(f)
        else:
            self.data = {"bookmarks": {}, "epoch": 0, "completed": [], "effects": []}

    def save(self):
        temporary = self.path + ".tmp"
        with open(temporary, "w") as f:
            json.dump(self.data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, self.path)

    def book(self, stream, event, generation, bookmark):
        """One transaction: the effect and its completion record, and the stream's bookmark if it may move."""
        if generation < self.data["epoch"]:
            return  # a newer lease generation has written here: a stale worker writes nothing
        key = f'{event["id"]}@{event["version"]}'
        if key not in self.data["completed"]:
            self.data["effects"].append({"event": {"id": event["id"], "version": event["version"]}, "payload": event["payload"]})
            self.data["completed"].append(key)
        if bookmark is not None:
            self.data["bookmarks"][stream] = bookmark
        self.data["epoch"] = generation
        self.save()


def main():
    client = Client("python-singer-tap", {"delivery": "exactly-once"}, kind="blackbox", inspect=lambda start: inspect(start), forks=True)
    start = client.start()
    stream = start["fingerprint"]
    source = start["source"]
    while True:
        try:
            generation = client.lease()
            if not sync(client, State(start["store"]), stream, source, generation):
                continue
            if source["contract"]["kind"] == "none":
                client.fail("the source promises no stability (contract none), so the tap cannot prove it missed nothing")
            client.caught_up()
        except WorldError:
            continue


def inspect(start):
    state = State(start["store"]).data
    return {"watermarks": state["bookmarks"], "effects": state["effects"]}


def sync(client, state, stream, source, generation):
    """One pass from this stream's bookmark to the end. False: the lease moved on, start over."""
    bookmark = state.data["bookmarks"].get(stream)
    resume = {"kind": "after", "position": bookmark} if bookmark is not None and "after" in source["resumes"] else {"kind": "start"}
    head = None
    while True:
        try:
            page = client.fetch({"resume": resume, "limit": source["pageSize"]})
        except WorldError as error:
            if error.code != "stale-token":
                raise
            resume = {"kind": "after", "position": bookmark} if bookmark is not None and "after" in source["resumes"] else {"kind": "start"}
            continue
        if page["head"] is not None:
            head = page["head"] if head is None else max(head, page["head"])
        # Renew the lease, then write without another call: no other worker runs in between.
        if client.lease() != generation:
            return False
        events = sorted(page["events"], key=order)
        passable = True
        for event in events:
            if bookmark is not None and order(event) <= order(bookmark):
                continue
            passable = passable and settled(source["contract"], event, head)
            moved = {"key": event["key"], "id": event["id"]} if passable else None
            state.book(stream, event, generation, moved)
            if moved is not None:
                bookmark = moved
        if page["next"] is None:
            return True
        resume = {"kind": "token", "token": page["next"]}


if __name__ == "__main__":
    main()
