import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { ConsumerUnrunnableError } from '../errors.js';
import { atExit } from './at-exit.js';
import { ConsumerProcess, EXIT_GRACE_MS, SpawnedProcess, type Hello, type SpawnOptions } from './consumer-process.js';
import { killGroup } from './group.js';
import { LineSplitter } from './lines.js';
import { socketScratchDir } from './scratch.js';

/**
 * Fork servers (docs/protocol.md, Fork servers). A consumer whose hello offers `forks` can
 * be started once and asked to fork: the interpreter starts and imports the consumer once,
 * and every incarnation is a child forked from that process, which is as new as a process
 * started from scratch would be after its imports, and is killed the same way, SIGKILL to
 * its own process group, by the harness itself.
 *
 * The server runs the command like any consumer process and says hello; the harness answers
 * `fork-server` with the path of a Unix socket it listens on, instead of `start`. The server
 * answers `serving`, and from then on reads only `fork` requests: for each it forks a child,
 * puts it in a process group of its own, and writes `forked` with its pid; when a child ends
 * it reaps it and writes `exited` with its status. The child connects to the socket twice,
 * once for its stderr and once for the protocol, each connection's first line naming the
 * fork it is, and from then on is an ordinary consumer process that has said its hello: it
 * waits for `start`. Its parent runs no consumer code at all, so it holds no state of any
 * incarnation: what a child changes in its memory dies with it.
 */

/** The fork server died or broke its side of the protocol: no incarnation can be forked any more, and the run stops. */
export class ForkServerError extends ConsumerUnrunnableError {
  override name = 'ForkServerError';
}

/**
 * How long a fork server with no child to fork is kept. Worlds follow each other within a
 * turn or two, and an incarnation that ended on its own is followed by the next a few turns
 * later: stopping the server at once would start the interpreter again, which is what the
 * server is there to avoid. An idle server never keeps the harness running.
 */
export const FORK_SERVER_IDLE_MS = 2000;

/** A fork's connection must name itself within this many characters. */
const HANDSHAKE_MAX = 1000;

/** How the harness sees a pid a fork server says it forked. */
type Forked = 'its-child' | 'not-its-child' | 'gone' | 'unknown';

/**
 * Whether `pid` is a child of a process in the group `group` and leads a group of its own,
 * from /proc (Linux): the harness will signal `-pid`, so a pid a broken server made up must
 * never be taken for one of its children. `gone`: no such process any more (it already ended
 * and was reaped); `unknown`: there is no /proc to ask.
 */
export function forkedChild(pid: number, group: number): Forked {
  const stat = (p: number): { ppid: number; pgrp: number } | null => {
    const text = readFileSync(`/proc/${p}/stat`, 'utf8');
    // The command name is in parentheses and may hold anything, parentheses included.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), pgrp: Number(fields[2]) };
  };
  let child: { ppid: number; pgrp: number } | null;
  try {
    child = stat(pid);
  } catch {
    try {
      readFileSync('/proc/self/stat');
    } catch {
      return 'unknown';
    }
    return 'gone';
  }
  if (child === null || child.pgrp !== pid) return 'not-its-child';
  try {
    return stat(child.ppid)?.pgrp === group ? 'its-child' : 'not-its-child';
  } catch {
    // Its parent is gone: it was reparented, so it is no server's child any more.
    return 'not-its-child';
  }
}

/**
 * One fork server of a command, started when the first fork is asked for and stopped when no
 * incarnation needs it (Pool.sweep); a later fork starts a new one. If it dies on its own,
 * every child it forked is killed and every fork asked of it fails with a ForkServerError,
 * which stops the run: a server that cannot stay up cannot be trusted to fork the next one.
 */
export class ForkServer {
  private server: SpawnedProcess | null = null;
  private listener: Server | null = null;
  private dir: string | null = null;
  private socketPath: string | null = null;
  private listening = false;
  /** The server process's hello; every child it forks has said it too. */
  private greeting: Hello | null = null;
  /** It answered `serving`: forks can be asked for. */
  private ready = false;
  /** Forks asked for before it was ready. */
  private readonly queued: string[] = [];
  /** Children asked for and not yet reported ended, by fork id. */
  private readonly children = new Map<string, ForkedProcess>();
  private next = 0;
  private broken: ForkServerError | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /**
   * What the server was asked and has not answered yet (`serving` to `fork-server`, `forked`
   * to each `fork`), each with the timer that stops the run when the answer is late. Without
   * them a server that never answers looks like an incarnation that never said hello: a
   * stall judged `unknown`, shrunk world after world, blamed on the consumer's code.
   */
  private readonly unanswered = new Map<string, NodeJS.Timeout>();
  /** Servers started and children forked, for tests and measurements. */
  readonly stats = { servers: 0, forks: 0 };

  constructor(
    private readonly command: string,
    private readonly spawnOptions: SpawnOptions,
    /** How long it may take to answer `fork-server` and each `fork` (half the hello limit, see processConsumer). */
    private readonly answerMs: number,
  ) {}

  /** The hello every child has said, through its server. */
  get hello(): Hello | null {
    return this.greeting;
  }

  /** The server process's pid (its group), while one runs. */
  get pid(): number | undefined {
    return this.server?.pid;
  }

  /** A new child for one incarnation; it says hello once it has connected. */
  fork(): ForkedProcess {
    const id = `f${this.next++}`;
    const child = new ForkedProcess(id, this);
    if (this.broken) {
      child.serverDied(this.broken);
      return child;
    }
    this.children.set(id, child);
    this.stats.forks++;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.server === null) this.start();
    if (this.ready) this.ask(id);
    else this.queued.push(id);
    return child;
  }

  /** The last of the server's stderr, for the error about a child that never connected. */
  tail(): string {
    return this.server?.tail() ?? '';
  }

  /** No incarnation needs a child now: the server is stopped unless a fork is asked for within FORK_SERVER_IDLE_MS. */
  idle(): void {
    if (this.server === null || this.idleTimer !== null) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      this.stop();
    }, FORK_SERVER_IDLE_MS);
    this.idleTimer.unref();
  }

  /**
   * Stops the server at once. Children already killed are forgotten:
   * their exits will not be reported by a dead server.
   */
  stop(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const server = this.server;
    if (server === null) return;
    this.server = null;
    server.detach();
    server.kill();
    server.drop();
    for (const child of this.children.values()) child.serverGone();
    this.reset();
  }

  private start(): void {
    this.stats.servers++;
    const dir = mkdtempSync(join(socketScratchDir(), 'tidemark-fork-'));
    socketDirs.add(dir);
    const path = join(dir, 's');
    this.dir = dir;
    this.socketPath = path;
    const listener = createServer((socket) => this.connected(socket));
    this.listener = listener;
    // Waiting for its next fork, it keeps nothing running: a child's connection does.
    listener.unref();
    listener.on('error', (error) => this.die(`cannot listen on ${path} for its children: ${error.message}`));
    listener.listen(path, () => {
      this.listening = true;
      this.announce();
    });
    const server = new SpawnedProcess(this.command, this.spawnOptions, (line) => this.control(line));
    this.server = server;
    server.unref();
    server.attach({
      hello: (hello) => {
        if (hello.forks !== true) return this.die('its hello no longer offers forks');
        this.greeting = hello;
        this.announce();
      },
      exit: (code, signal) => this.die(`exited with ${signal ?? `code ${code}`}`),
      fail: (error) => this.die(error.message),
      call: () => this.die('called the world: a fork server only forks'),
      inspection: () => this.die('answered an inspection: a fork server only forks'),
    });
  }

  /** Once it said hello and the socket listens: become a fork server. */
  private announce(): void {
    if (this.listening && this.greeting !== null && this.server !== null) {
      this.server.send({ type: 'fork-server', socket: this.socketPath });
      this.awaiting('serving', 'did not answer fork-server with serving');
    }
  }

  /** Asks for one child; the server must say it forked it in time. */
  private ask(id: string): void {
    this.server?.send({ type: 'fork', id });
    this.awaiting(id, `did not answer fork ${id} with forked`);
  }

  /** An answer the server owes, under `key`, and what it failed to do when it is late. */
  private awaiting(key: string, late: string): void {
    const timer = setTimeout(() => this.die(`${late} within ${this.answerMs} ms (docs/protocol.md, Fork servers)`), this.answerMs);
    // It bounds a wait the run is in; it never keeps an idle harness running.
    timer.unref();
    this.unanswered.set(key, timer);
  }

  private answered(key: string): void {
    const timer = this.unanswered.get(key);
    if (timer !== undefined) clearTimeout(timer);
    this.unanswered.delete(key);
  }

  /** A line the server wrote after its hello: `serving`, `forked` or `exited`. */
  private control(line: string): void {
    if (line.trim() === '') return;
    let message: { type?: unknown; id?: unknown; pid?: unknown; code?: unknown; signal?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return this.die(`wrote a line that is not JSON: ${JSON.stringify(line.slice(0, 200))}`);
    }
    if (typeof message !== 'object' || message === null) return this.die(`wrote ${line.slice(0, 200)}, not a message`);
    if (message.type === 'serving') {
      if (this.ready) return this.die('said serving twice');
      this.ready = true;
      this.answered('serving');
      for (const id of this.queued.splice(0)) this.ask(id);
      return;
    }
    const child = typeof message.id === 'string' ? this.children.get(message.id) : undefined;
    if (message.type === 'forked') {
      const pid = message.pid;
      if (child === undefined || child.pid !== undefined) return this.die(`said forked for ${JSON.stringify(message.id)}, which it was not asked to fork or already forked`);
      if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid) return this.die(`said it forked pid ${JSON.stringify(pid)}, which no child of it can have (a pid is an integer above 1, and not the harness's own)`);
      this.answered(child.id);
      const seen = forkedChild(pid, this.server?.pid ?? -1);
      if (seen === 'not-its-child') return this.die(`said it forked pid ${pid}, which is not its child leading a process group of its own (a child must call setpgid(0, 0), and the server setpgid(pid, pid))`);
      return child.forkedAs(pid, seen !== 'gone');
    }
    if (message.type === 'exited') {
      if (child === undefined || child.pid === undefined) return this.die(`said exited for ${JSON.stringify(message.id)}, which it has not forked`);
      const code = typeof message.code === 'number' ? message.code : null;
      const signal = typeof message.signal === 'string' ? (message.signal as NodeJS.Signals) : null;
      this.children.delete(child.id);
      return child.reported(code, signal);
    }
    return this.die(`wrote a message of unknown type: ${line.slice(0, 200)}`);
  }

  /** A connection to the socket: a child naming itself and the stream it is. */
  private connected(socket: Socket): void {
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    let buffered = '';
    const first = (chunk: string): void => {
      buffered += chunk;
      const nl = buffered.indexOf('\n');
      if (nl < 0) {
        if (buffered.length > HANDSHAKE_MAX) socket.destroy();
        return;
      }
      socket.off('data', first);
      const named = parseLine(buffered.slice(0, nl)) as { type?: unknown; id?: unknown; stream?: unknown } | null;
      const child = typeof named?.id === 'string' && named.type === 'child' ? this.children.get(named.id) : undefined;
      const stream = named?.stream;
      if (child === undefined || (stream !== 'protocol' && stream !== 'stderr') || !child.connect(stream, socket, buffered.slice(nl + 1))) socket.destroy();
    };
    socket.on('data', first);
  }

  /** The server died or broke the protocol: its children are killed, and every fork fails from now on. */
  private die(problem: string): void {
    if (this.broken) return;
    const error = new ForkServerError(`the fork server of \`${this.command}\` ${problem}${this.tail()}`);
    this.broken = error;
    const server = this.server;
    this.server = null;
    if (server) {
      server.detach();
      server.kill();
      server.drop();
    }
    for (const child of this.children.values()) child.serverDied(error);
    this.reset();
  }

  private reset(): void {
    for (const timer of this.unanswered.values()) clearTimeout(timer);
    this.unanswered.clear();
    this.children.clear();
    this.queued.length = 0;
    this.ready = false;
    this.listening = false;
    this.greeting = null;
    this.listener?.close();
    this.listener = null;
    if (this.dir !== null) {
      rmSync(this.dir, { recursive: true, force: true });
      socketDirs.delete(this.dir);
    }
    this.dir = null;
    this.socketPath = null;
  }
}

/**
 * The socket directories of fork servers still running. A check ends with its fork server
 * alive (it stops only after FORK_SERVER_IDLE_MS idle, on a timer that keeps nothing
 * running), so its directory is removed at exit, with the processes: else every check of a
 * consumer offering forks left one in the temporary directory.
 */
const socketDirs = new Set<string>();

/** The socket directories of the fork servers running now: a supervisor removes them if this process dies without its exit hooks. */
export function forkSocketDirs(): readonly string[] {
  return [...socketDirs];
}

atExit(() => {
  for (const dir of socketDirs) rmSync(dir, { recursive: true, force: true });
  socketDirs.clear();
});

/** A line's JSON, or null when it is not JSON. */
function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

/**
 * One child of a fork server, serving one incarnation (or, with sessions, several): the
 * harness writes to it and reads from it over its protocol connection, reads its stderr
 * over the other, learns its pid from its server, and kills its process group itself.
 */
export class ForkedProcess extends ConsumerProcess {
  private forkedPid: number | undefined;
  /** Its group was signalled, or must never be: it is never signalled again. */
  private groupDone = false;
  private protocol: Socket | null = null;
  private errors: Socket | null = null;
  private protocolOpen = false;
  private errorsOpen = false;
  /** Lines written before its protocol connection arrived. */
  private readonly pending: string[] = [];
  private readonly splitter = new LineSplitter();
  /** Its exit, as its server reported it. */
  private report: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | null = null;
  private finished = false;

  constructor(
    readonly id: string,
    private readonly server: ForkServer,
  ) {
    super();
  }

  get pid(): number | undefined {
    return this.forkedPid;
  }

  protected get alive(): boolean {
    return this.report === null && !this.finished;
  }

  /** Its server forked it as `pid`; a child already gone (`signalable` false) is never signalled. */
  forkedAs(pid: number, signalable: boolean): void {
    this.forkedPid = pid;
    if (!signalable) this.groupDone = true;
    // Killed before its pid was known: now.
    if (this.killed) this.killGroup();
  }

  /** One of its two connections arrived; false when it is not wanted (a duplicate, or it is dead already). */
  connect(stream: 'protocol' | 'stderr', socket: Socket, rest: string): boolean {
    if (this.finished || this.killed) return false;
    if (stream === 'stderr') {
      if (this.errors !== null) return false;
      this.errors = socket;
      this.errorsOpen = true;
      socket.on('data', (chunk: string) => this.stderrData(chunk));
      socket.on('close', () => {
        this.errorsOpen = false;
        this.settle();
      });
      if (rest !== '') this.stderrData(rest);
      return true;
    }
    if (this.protocol !== null) return false;
    const hello = this.server.hello;
    if (hello === null) return false;
    this.protocol = socket;
    this.protocolOpen = true;
    socket.on('data', (chunk: string) => this.data(chunk));
    socket.on('close', () => {
      this.protocolOpen = false;
      this.settle();
    });
    for (const line of this.pending.splice(0)) socket.write(line);
    // It said its hello through its server, and waits for its start.
    this.greeted(hello);
    if (rest !== '') this.data(rest);
    return true;
  }

  /** Its server reaped it. */
  reported(code: number | null, signal: NodeJS.Signals | null): void {
    this.report = { code, signal };
    // What it left running in its group dies with it, as after a crash; never later.
    this.killGroup();
    this.settle();
    // Its last lines may still be on their way: read for a short grace at most.
    if (!this.finished) setTimeout(() => this.finish(), EXIT_GRACE_MS);
  }

  /** Its server died: it is killed, and whoever it serves is told why. */
  serverDied(error: Error): void {
    this.kill();
    this.fail(error);
    this.finished = true;
    this.drop();
  }

  /** Its server was stopped by the harness: nobody will report its exit. */
  serverGone(): void {
    this.kill();
    this.finished = true;
    this.drop();
  }

  kill(): boolean {
    this.killed = true;
    const alive = this.alive;
    this.killGroup();
    return alive;
  }

  drop(): void {
    this.protocol?.destroy();
    this.errors?.destroy();
    super.forget();
  }

  protected write(line: string): void {
    if (this.protocol === null) {
      if (!this.finished) this.pending.push(line);
    } else if (!this.protocol.destroyed) this.protocol.write(line);
  }

  override tail(): string {
    // A child that never connected its stderr wrote what it had to say to its server's.
    return this.errors === null ? this.server.tail() : super.tail();
  }

  private data(chunk: string): void {
    const { lines, overflow } = this.splitter.push(chunk);
    for (const line of lines) this.receive(line);
    if (!overflow) return;
    this.protocol?.destroy();
    this.overflowed();
  }

  /** Exited and both connections closed: its end is told. */
  private settle(): void {
    if (this.report !== null && !this.protocolOpen && !this.errorsOpen) this.finish();
  }

  private finish(): void {
    if (this.finished || this.report === null) return;
    this.finished = true;
    const last = this.splitter.end();
    if (last !== null) this.receive(last);
    this.exited(this.report.code, this.report.signal);
  }

  private killGroup(): void {
    const pid = this.forkedPid;
    if (this.groupDone || pid === undefined) return;
    this.groupDone = true;
    killGroup(pid);
  }
}
