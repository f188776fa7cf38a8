#!/usr/bin/env python3
"""tap_events.py: a Singer tap for a REST API of events, in plain Python (standard library only).

The API (examples/singer/api.json describes it to tidemark):

    GET {base_url}/v1/events?updated_since=ISO-8601&cursor=TOKEN&limit=N
    -> {"data": [{"id", "updated_at", "kind", "payload"}, ...], "next_cursor": TOKEN or null}

`updated_since` is inclusive; `next_cursor` continues the same query. Statuses 429 and 503
are retried after a backoff, 410 means the cursor expired.

The tap syncs one stream, `events`, incrementally: from the bookmark in its state (the
newest `updated_at` it has written), following `next_cursor` to the end. After each page it
writes the page's RECORDs, then a STATE whose bookmark is the newest `updated_at` written.
The next sync asks for `updated_since` = the bookmark again, inclusively: records that share
the bookmark's timestamp and were not yet read come back (with some already written: a
Singer target deduplicates by the key properties). An expired cursor restarts the query
from the bookmark.

With `lookback_seconds` in its config (default 0), every sync asks for `updated_since` that
many seconds before the bookmark, to read again the records an API with late arrivals put
behind it since (a replay window). Its bookmark then claims only what lies that far behind
it, and the API description says so: `state.lookback` (and `source.window`, how far back the
real API puts a late record), as examples/singer/api-lookback.json does.

Run it as any Singer tap:  python3 tap_events.py --config config.json --catalog catalog.json [--state state.json]
Check it with tidemark:    npx tidemark check --singer "python3 examples/singer/tap_events.py" --api examples/singer/api.json
"""

import argparse
import datetime
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

STREAM = "events"


class CursorExpired(Exception):
    """The API no longer accepts the next-page cursor."""


def write(message):
    """One Singer message on stdout, flushed: a target reads it at once."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def get(config, path, params):
    """GET a page, retrying 429 and 503 with a backoff; 410 raises CursorExpired."""
    url = config["base_url"] + path + "?" + urllib.parse.urlencode(params)
    retries = int(config.get("max_retries", 5))
    for attempt in range(retries + 1):
        try:
            with urllib.request.urlopen(url, timeout=float(config.get("timeout_seconds", 30))) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            if error.code == 410:
                raise CursorExpired() from error
            if error.code not in (429, 503) or attempt == retries:
                raise
        time.sleep(float(config.get("backoff_seconds", 1)) * (2 ** attempt))
    raise AssertionError("unreachable")


def state_bookmark(bookmark):
    """The bookmark as the STATE keeps it: the newest updated_at written."""
    return bookmark


def resume_from(bookmark, config):
    """Where a query starts: the bookmark, less the lookback (as the API writes timestamps: UTC, milliseconds)."""
    lookback = float(config.get("lookback_seconds", 0))
    if bookmark is None or lookback <= 0:
        return bookmark
    at = datetime.datetime.strptime(bookmark, "%Y-%m-%dT%H:%M:%S.%fZ") - datetime.timedelta(seconds=lookback)
    since = at.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (at.microsecond // 1000)
    # Never before the configured start date, where there is nothing to read.
    return max(since, config["start_date"]) if "start_date" in config else since


def log(message):
    """A log line, on stderr as Singer taps log: stdout is for messages only."""
    print("INFO " + message, file=sys.stderr, flush=True)


def sync(config, state):
    bookmark = state.get("bookmarks", {}).get(STREAM, {}).get("updated_at")
    log("syncing %s from %s" % (STREAM, bookmark or "the beginning"))
    write({
        "type": "SCHEMA",
        "stream": STREAM,
        "key_properties": ["id"],
        "bookmark_properties": ["updated_at"],
        "schema": {"type": "object", "properties": {"id": {"type": "string"}, "updated_at": {"type": "string", "format": "date-time"}, "payload": {"type": "string"}}},
    })
    since = resume_from(bookmark, config)
    cursor = None
    while True:
        params = {"limit": config.get("page_size", 100)}
        if since is not None:
            params["updated_since"] = since
        if cursor is not None:
            params["cursor"] = cursor
        try:
            body = get(config, "/v1/events", params)
        except CursorExpired:
            # Start the query again from what is written: nothing before it is lost.
            since, cursor = resume_from(bookmark, config), None
            continue
        for record in body["data"]:
            write({"type": "RECORD", "stream": STREAM, "record": record})
            if bookmark is None or record["updated_at"] > bookmark:
                bookmark = record["updated_at"]
        if bookmark is not None:
            state = {"bookmarks": {STREAM: {"updated_at": state_bookmark(bookmark)}}}
            write({"type": "STATE", "value": state})
        cursor = body.get("next_cursor")
        if cursor is None:
            break
    write({"type": "STATE", "value": state})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--catalog")
    parser.add_argument("--state")
    args = parser.parse_args()
    with open(args.config) as f:
        config = json.load(f)
    state = {}
    if args.state:
        with open(args.state) as f:
            state = json.load(f)
    sync(config, state)


if __name__ == "__main__":
    main()
