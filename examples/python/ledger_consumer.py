#!/usr/bin/env python3
"""ledger_consumer.py: a correct at-least-once whitebox consumer, speaking the tidemark
protocol over stdio (docs/protocol.md). The logic of examples/node/consumer.mjs, in Python.

Run it under the harness:  tidemark check --command "python3 examples/python/ledger_consumer.py"

Progress is a position {key, id} stored with the binding's fingerprint. Each event's
effect goes to the sink, followed by its completion record; the watermark moves only
through the handled prefix of settled events, fenced by the lease generation and a
compare-and-set on the value read. The page token only continues the live traversal.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the example
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tidemark_client import Client, WorldError  # noqa: E402


def order(p):
    """The stable total order (R1): the ordering tuple, then the id as tie-break."""
    return (list(p["key"]), p["id"])


def position(event):
    return {"key": event["key"], "id": event["id"]}


def ref(event):
    return {"id": event["id"], "version": event["version"]}


def settled(contract, event, head):
    """Whether the source's contract says nothing can still appear at or before this event."""
    kind = contract["kind"]
    if kind in ("snapshot", "insertion-stable"):
        return True
    if kind == "replay-window":
        return head is not None and event["key"][0] < head - contract["window"]
    return False


def post(client, event):
    """The effect, then its completion record. A crash between the two repeats the effect."""
    try:
        client.emit(ref(event), event["payload"])
    except WorldError as error:
        if error.code != "rejected":
            raise
        # A poison event is refused every time: park it, as its durable outcome.
        client.commit([{"op": "dead-letter", "event": ref(event), "reason": error.message}, {"op": "complete", "event": ref(event)}])
        return
    client.commit([{"op": "complete", "event": ref(event)}])


def run(client, start):
    source = start["source"]
    contract = source["contract"]
    fingerprint = start["fingerprint"]
    while True:
        try:
            generation = client.lease()
            state = client.load()
            mark = state["watermark"]
            # Progress stored under another binding says nothing about ours (R2).
            stored = mark["value"] if mark is not None and mark["binding"] == fingerprint else None
            if stored is not None and "after" in source["resumes"]:
                resume = {"kind": "after", "position": stored}
            else:
                resume = {"kind": "start"}
            head = None
            while True:
                page = client.fetch({"resume": resume, "limit": source["pageSize"]})
                if page["head"] is not None:
                    head = page["head"] if head is None else max(head, page["head"])
                # Pages may overlap, repeat or arrive out of order: sort, drop what is committed.
                events = sorted(page["events"], key=order)
                if stored is not None:
                    events = [e for e in events if order(e) > order(stored)]
                done = client.completed([ref(e) for e in events])
                last = -1
                for i, event in enumerate(events):
                    if not done[i]:
                        post(client, event)
                    if settled(contract, event, head) and last == i - 1:
                        last = i
                if last >= 0:
                    value = position(events[last])
                    client.commit([{"op": "watermark", "binding": fingerprint, "value": value, "expect": stored}], fence=generation)
                    stored = value
                if page["next"] is None:
                    break
                if client.lease() != generation:
                    # Another worker holds the lease now: this incarnation ends (the process
                    # exits 1) and the next starts from durable state, as in ledger.mjs.
                    raise RuntimeError("lost the lease")
                # The token only continues this traversal; it is never the watermark (R8).
                resume = {"kind": "token", "token": page["next"]}
            if contract["kind"] == "none":
                client.fail("the source promises no stability: no hole can be proven empty")
            else:
                client.caught_up()
            return
        except WorldError:
            # Any world error sends us back to durable state; completion records dedupe.
            continue


def main():
    # Everything run() keeps lives in its own frames, so a session crash drops all of it; and
    # importing this file opens nothing, so the children of a fork server share nothing live.
    Client("python-ledger", {"delivery": "at-least-once"}, sessions=True, forks=True).serve(run)


if __name__ == "__main__":
    main()
