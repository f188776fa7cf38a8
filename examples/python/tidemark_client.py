"""A small synchronous tidemark protocol client (protocol 1), standard library only.

See docs/protocol.md; every message is described by schema/protocol.schema.json (JSON
Schema), which a consumer's own tests can validate against. The harness starts the consumer
as a child process and talks to it
in JSON lines: stdout is the protocol, so log to stderr. The client says hello, waits for
`start`, and then each `call(method, *args)` writes one call and reads lines until its
reply, answering any `inspect` request that arrives meanwhile through a callback.

    from tidemark_client import Client, WorldError

    client = Client("my-consumer", {"delivery": "at-least-once"})
    start = client.start()            # hello, then wait for the start message
    generation = client.lease()
    state = client.load()
    ...
    client.caught_up()                # never returns: the harness ends the process

One call is in flight at a time; that is all protocol 1 allows.

Sessions: `Client(..., sessions=True).serve(run)` offers to serve successive incarnations in
one process. `serve` calls `run(client, start)` for each start; when the harness sends
`crash`, the call in progress raises `Crashed`, which unwinds `run` (it is not an Exception,
so `except Exception` does not catch it; never catch BaseException), the client forgets the
incarnation, answers `crashed` and waits for the next start. Offer it only if everything
`run` keeps lives in its own frames: module-level caches, open files and buffers would
survive a session crash, where a real kill would lose them.
"""

import json
import sys

PROTOCOL = 1


class WorldError(Exception):
    """A world call failed. `definite`: it did not happen; otherwise it may have happened."""

    def __init__(self, code, definite, message, cause=None, ref=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.definite = definite
        # A conflict's guard ("fence", "expect", "unless-completed", "lease-held"), else None.
        self.cause = cause
        # A rejected effect's event ref {"id", "version"}, else None.
        self.ref = ref
        self.message = message


class Crashed(BaseException):
    """The harness ended this incarnation with a session crash: unwind, keep nothing."""


class ProtocolError(Exception):
    """The harness said something this client does not understand, or went away."""


class Client:
    """One consumer process's connection to the harness.

    `inspect(start)` is for blackbox consumers: it is called with the start message whenever
    the harness asks what the consumer's own store durably holds, and must return
    {"watermark": ..., "effects": [{"event": {"id", "version"}, "payload"}, ...]}, or for
    state kept per binding {"watermarks": {fingerprint: watermark, ...}, "effects": [...]}.
    """

    def __init__(self, name, capabilities, kind="whitebox", inspect=None, stdin=None, stdout=None, sessions=False):
        self.name = name
        self.capabilities = capabilities
        self.kind = kind
        self.sessions = sessions
        self.said_hello = False
        self.inspect = inspect
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout
        self.start_message = None
        self.next_id = 1
        # Inspections asked for before start: answered as soon as start arrives.
        self.deferred = []

    # -- the wire ------------------------------------------------------------------------

    def send(self, message):
        self.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        self.stdout.flush()

    def receive(self):
        """The next message from the harness; a closed stdin means the harness is gone."""
        while True:
            line = self.stdin.readline()
            if line == "":
                raise ProtocolError("the harness closed stdin")
            if line.strip():
                message = json.loads(line)
                if self.sessions and message.get("type") == "crash":
                    raise Crashed()
                return message

    def answer_inspect(self, message):
        if self.start_message is None:
            self.deferred.append(message)
            return
        if self.inspect is None:
            raise ProtocolError("the harness asked for an inspection, but this consumer gave no inspect callback")
        seen = self.inspect(self.start_message)
        answer = {"type": "inspection", "id": message["id"], "watermark": seen.get("watermark"), "effects": seen.get("effects", [])}
        # State kept per binding: every binding's watermark by fingerprint; the harness reads its own.
        if "watermarks" in seen:
            answer["watermarks"] = seen["watermarks"]
        self.send(answer)

    # -- the session ---------------------------------------------------------------------

    def start(self):
        """Says hello (once per process) and waits for the start message, which it returns."""
        if not self.said_hello:
            hello = {"type": "hello", "protocol": PROTOCOL, "name": self.name, "capabilities": self.capabilities, "kind": self.kind}
            if self.sessions:
                hello["sessions"] = True
            self.send(hello)
            self.said_hello = True
        while True:
            message = self.receive()
            if message.get("type") == "start":
                if message.get("protocol") != PROTOCOL:
                    raise ProtocolError(f"the harness speaks protocol {message.get('protocol')}; this client speaks protocol {PROTOCOL}")
                self.start_message = message
                for waiting in self.deferred:
                    self.answer_inspect(waiting)
                self.deferred = []
                return message
            if message.get("type") == "inspect":
                self.answer_inspect(message)
                continue
            raise ProtocolError(f"expected start, got {json.dumps(message)[:200]}")

    def serve(self, run):
        """Runs `run(client, start)` for each incarnation this process serves.

        Without sessions that is one incarnation, as `run(client, client.start())` would be.
        With sessions, a crash unwinds `run`; the client drops the incarnation's state,
        answers `crashed` and runs the next start. When `run` returns, the process ends.
        """
        while True:
            try:
                run(self, self.start())
                return
            except Crashed:
                self.start_message = None
                self.deferred = []
                self.send({"type": "crashed"})

    def call(self, method, *args):
        """One world call: returns the reply's value, or raises WorldError."""
        call_id = self.next_id
        self.next_id += 1
        self.send({"type": "call", "id": call_id, "method": method, "args": list(args)})
        while True:
            message = self.receive()
            kind = message.get("type")
            if kind == "inspect":
                self.answer_inspect(message)
            elif kind == "reply" and message.get("id") == call_id:
                if message.get("ok"):
                    return message.get("value")
                error = message.get("error") or {}
                raise WorldError(error.get("code", "bad-request"), error.get("definite", True), error.get("message", ""), error.get("cause"), error.get("ref"))
            else:
                raise ProtocolError(f"waiting for the reply to call {call_id}, got {json.dumps(message)[:200]}")

    # -- the world's methods, by name ----------------------------------------------------

    def fetch(self, request):
        return self.call("fetch", request)

    def load(self):
        return self.call("load")

    def completed(self, events):
        return self.call("completed", events)

    def commit(self, ops, fence=None):
        return self.call("commit", ops, {} if fence is None else {"fence": fence})

    def emit(self, event, payload):
        return self.call("emit", event, payload)

    def lease(self):
        return self.call("lease")

    def caught_up(self):
        return self.call("caughtUp")

    def fail(self, reason):
        return self.call("fail", reason)
