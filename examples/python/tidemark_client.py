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

Fork server: `Client(..., forks=True)`, with `serve(run)` or `start()`, offers to run as a
fork server where `os.fork` exists (Linux, macOS, the BSDs). The harness then starts the
consumer once: the interpreter starts and imports everything once, and every incarnation is
a child forked from that process, killed for real, with SIGKILL to its own process group, as
a newly started process would be. The server runs none of the consumer's code after its
imports: it only forks children and reaps them. Each child starts from the memory the server
had after the imports, as a new process would, and what a child changes dies with it. Offer
it only if importing the consumer opens nothing a child may not share: open connections,
files and threads in `run` (or after `start()`), not at import.
"""

import gc
import json
import os
import select
import signal
import socket
import sys

PROTOCOL = 1

# One encoder for every message: json.dumps with separators builds a new encoder per call,
# which was a fifth of what a world call cost this client.
_encode = json.JSONEncoder(separators=(",", ":")).encode


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

    def __init__(self, name, capabilities, kind="whitebox", inspect=None, stdin=None, stdout=None, sessions=False, forks=False):
        self.name = name
        self.capabilities = capabilities
        self.kind = kind
        self.sessions = sessions
        # A fork server needs fork(2) and the process's own stdio (it hands its children sockets in their place).
        self.forks = forks and hasattr(os, "fork") and stdin is None and stdout is None
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
        self.stdout.write(_encode(message) + "\n")
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
            if self.forks:
                hello["forks"] = True
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
            if message.get("type") == "fork-server" and self.forks:
                # Returns only in a forked child, connected to the harness in place of
                # stdin and stdout: it waits for its start like any new process.
                ForkServer(self, message["socket"]).serve()
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


class ForkServer:
    """The harness's fork server (docs/protocol.md, Fork servers): forks one child per
    `fork` request and reports it, and reports each child's exit when it reaps it.

    It runs no consumer code: nothing of `run`, no inspection. Its only state is which
    children it has forked and not yet reaped. It reads its requests from fd 0 directly, not
    through sys.stdin, so that no request sits in a buffer a child would inherit; the
    harness sends none before `serving`, so sys.stdin's buffer is empty when it starts.
    """

    def __init__(self, client, path):
        self.client = client
        self.path = path
        self.children = {}  # pid -> fork id
        self.buffer = b""

    def serve(self):
        """Serves until stdin closes; returns only in a forked child."""
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        # A child's end wakes the select below; it is reaped there, never in a handler.
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        self.wake = (wake_r, wake_w)
        # What the imports built is never collected in a child: its collector leaves those
        # pages shared with the server instead of touching (and so copying) every one.
        if hasattr(gc, "freeze"):
            gc.freeze()
        self.client.send({"type": "serving"})
        while True:
            try:
                readable, _, _ = select.select([0, wake_r], [], [])
            except InterruptedError:
                readable = []
            if wake_r in readable:
                os.read(wake_r, 4096)
            self.reap()
            if 0 not in readable:
                continue
            data = os.read(0, 65536)
            if not data:
                # The harness is gone: so are the children it can no longer kill.
                for pid in self.children:
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        pass
                os._exit(0)
            self.buffer += data
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                message = json.loads(line)
                if message.get("type") != "fork":
                    raise ProtocolError(f"a fork server reads only fork requests, got {line[:200]!r}")
                if self.fork(message["id"]):
                    return

    def fork(self, fork_id):
        """Forks one child; True in the child, once it is connected to the harness."""
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self.become_child(fork_id)
            return True
        try:
            # Also set in the child: whichever runs first, the group exists before the
            # harness hears of the pid and may signal it.
            os.setpgid(pid, pid)
        except OSError:
            pass  # it already ended: its exit is reported when it is reaped
        self.children[pid] = fork_id
        self.client.send({"type": "forked", "id": fork_id, "pid": pid})
        return False

    def reap(self):
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            fork_id = self.children.pop(pid, None)
            if fork_id is None:
                continue
            if os.WIFSIGNALED(status):
                code, name = None, signal.Signals(os.WTERMSIG(status)).name
            else:
                code, name = os.WEXITSTATUS(status), None
            self.client.send({"type": "exited", "id": fork_id, "code": code, "signal": name})

    def become_child(self, fork_id):
        """In the child: its own process group, the server's signal set-up undone, and the
        harness's socket in place of stdin, stdout and stderr."""
        try:
            os.setpgid(0, 0)
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for fd in self.wake:
                os.close(fd)
            # stderr first, so that whatever goes wrong from here on is the child's own.
            errors = self.connect(fork_id, "stderr")
            os.dup2(errors.fileno(), 2)
            errors.close()
            channel = self.connect(fork_id, "protocol")
            os.dup2(channel.fileno(), 0)
            os.dup2(channel.fileno(), 1)
            channel.close()
        except BaseException as error:  # noqa: B902 - the child must not return into the server's loop
            sys.stderr.write(f"fork {fork_id}: cannot connect to the harness: {error!r}\n")
            sys.stderr.flush()
            os._exit(1)
        # sys.stdin, sys.stdout and sys.stderr now read and write the socket: their buffers
        # were empty at the fork. The client waits for its start, as a new process does.
        self.client.deferred = []
        self.client.start_message = None

    def connect(self, fork_id, stream):
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        channel.connect(self.path)
        channel.sendall((_encode({"type": "child", "id": fork_id, "stream": stream}) + "\n").encode())
        return channel
