import { spawn, type ChildProcess } from 'node:child_process';
import type { Capabilities } from '../consumer.js';
import { LineSplitter, lineLimitText } from './lines.js';
import { protocolProblem } from './schema.js';
import { killGroup } from './group.js';
import { killMarked, MARK_VARIABLE, newMark } from './marks.js';

/** The protocol version this harness speaks. */
export const PROTOCOL = 1;

/**
 * How long the harness keeps reading a process's pipes after it exited. Its last words
 * arrive within milliseconds; a pipe still open after this is held by a process it left
 * behind outside its group (a `setsid` grandchild), and is dropped rather than waited on.
 */
export const EXIT_GRACE_MS = 200;

/** How much of a process's stderr a failure quotes. */
const TAIL = 2000;

/** What a consumer process says first: who it is and what it claims. */
export interface Hello {
  readonly type: 'hello';
  readonly protocol: number;
  readonly name: string;
  readonly capabilities: Capabilities;
  readonly kind?: 'whitebox' | 'blackbox';
  /** It can serve successive incarnations: it answers `crash` by dropping all in-memory state. */
  readonly sessions?: boolean;
  /** It can run as a fork server: each incarnation a child forked from it (docs/protocol.md, Fork servers). */
  readonly forks?: boolean;
}

export type Method = 'fetch' | 'load' | 'completed' | 'commit' | 'emit' | 'lease' | 'caughtUp' | 'fail';

export interface SpawnOptions {
  readonly cwd?: string | undefined;
}

/**
 * Who a process's messages and its end go to: the incarnation it serves, or the probe. A
 * process started ahead of need (a warm spare) has nobody yet; what it says and does meanwhile
 * is kept and handed over when an incarnation takes it.
 */
export interface Listener {
  hello(hello: Hello): void;
  call(id: number | string, method: Method, args: unknown[]): void;
  inspection(id: unknown, message: Record<string, unknown>): void;
  /** The process exited and its pipes were read to the end (or given up on). */
  exit(code: number | null, signal: NodeJS.Signals | null): void;
  /** It broke the protocol or could not be run. */
  fail(error: Error): void;
}

/** What the kill registry needs of a running process: its group, a SIGKILL of it, and letting go. */
export interface RunningProcess {
  /** Its pid, which is also its process group; undefined while it is not known. */
  readonly pid: number | undefined;
  /** Killed with every other process (a signal handler's clean-up). */
  abandoned: boolean;
  kill(): boolean;
  drop(): void;
}

/**
 * Every process this harness has running, across every consumer and world: consumer
 * processes, and the connectors of src/connector/, so that one clean-up kills them all.
 */
export const running = new Set<RunningProcess>();

/**
 * One consumer process, from its start to its exit or SIGKILL, as the pool and incarnations
 * see it, however it was started: spawned by the command (SpawnedProcess, below) or forked by
 * a fork server (fork-server.ts). Either way it is in a process group of its own, so a kill
 * reaches everything it started. It serves one incarnation (the default, and always under
 * real kills), or, when its hello offers sessions and the harness asks for them, several in a
 * row: between two, the harness sends `crash`, and ignores whatever the process says until it
 * answers `crashed`, its in-memory state dropped.
 *
 * This class reads the protocol; a subclass moves the lines and signals the process.
 */
export abstract class ConsumerProcess {
  private stderr = '';
  private listener: Listener | null = null;
  /** Its hello, once it said it (or, for a forked process, once it is connected: its server said it). */
  protected said: Hello | null = null;
  /** Its exit, once its pipes are read: kept for the incarnation that takes it later. */
  private ended: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | null = null;
  /** The first failure while nobody listened. */
  private failure: Error | null = null;
  /** `crash` messages it has not yet acknowledged: until then, what it says belongs to no one. */
  private unacked = 0;
  /** Incarnations it has been handed to. */
  served = 0;
  /** Killed: it serves nobody again. */
  killed = false;
  /** Killed with every other process (a signal handler's clean-up): not even as a dead spare. */
  abandoned = false;

  constructor() {
    running.add(this);
  }

  /** The process's pid, which is also its process group; undefined while it is not known. */
  abstract get pid(): number | undefined;

  /**
   * SIGKILL to the process's whole group: it and everything it started die together.
   * Returns whether a running process was signalled (or will be, as soon as its pid is known).
   */
  abstract kill(): boolean;

  /** Stops reading its output and forgets it: what is left of it can no longer keep the harness alive. */
  abstract drop(): void;

  /** Writes one line to the process's input, if it can still be written. */
  protected abstract write(line: string): void;

  /** The process has not exited yet, as far as the harness knows. */
  protected abstract get alive(): boolean;

  /** Its hello, if it said one. */
  get hello(): Hello | null {
    return this.said;
  }

  /** Neither ended, failed nor killed: it can still serve an incarnation. */
  get usable(): boolean {
    return !this.killed && this.ended === null && this.failure === null && this.alive;
  }

  /**
   * Hands the process to an incarnation (or the probe). What it did before (its hello, a
   * failure, its exit) is told at once, in that order, as if the listener had been there.
   */
  attach(listener: Listener): void {
    this.listener = listener;
    this.served++;
    if (this.failure) return listener.fail(this.failure);
    if (this.said && this.unacked === 0) listener.hello(this.said);
    if (this.ended && this.listener === listener) listener.exit(this.ended.code, this.ended.signal);
  }

  /** Nobody listens any more; what it says next is dropped, a failure kept. */
  detach(): void {
    this.listener = null;
  }

  /**
   * A session crash: the incarnation it served is over. It is told to drop its in-memory
   * state; everything it says until it answers `crashed` (the rest of the dead incarnation's
   * work) is ignored.
   */
  crash(): void {
    this.listener = null;
    this.unacked++;
    this.send({ type: 'crash' });
  }

  send(message: unknown): void {
    this.write(`${JSON.stringify(message)}\n`);
  }

  /** The last of its stderr, for an error message; empty when it wrote none. */
  tail(): string {
    const t = this.stderr.trim();
    return t ? `; stderr tail: ${t.slice(-500)}` : '';
  }

  /** Whether it still owes an answer to `crash`: a stall report says so. */
  get awaitingCrashed(): boolean {
    return this.unacked > 0;
  }

  /** It is no longer among the running processes. */
  protected forget(): void {
    running.delete(this);
  }

  /** Some of what it wrote to stderr. */
  protected stderrData(chunk: string): void {
    this.stderr = (this.stderr + chunk).slice(-TAIL);
  }

  /** Its hello arrived (said by it, or by the fork server for a forked process). */
  protected greeted(hello: Hello): void {
    this.said = hello;
    this.listener?.hello(hello);
  }

  /** It exited and its output was read to the end (or given up on). */
  protected exited(code: number | null, signal: NodeJS.Signals | null): void {
    this.drop();
    this.ended = { code, signal };
    this.listener?.exit(code, signal);
  }

  protected fail(error: Error): void {
    if (this.listener) return this.listener.fail(error);
    // Nobody to tell yet: kept for the incarnation that takes this process, and the process,
    // useless now, is killed, as it would have been with a listener.
    this.failure ??= error;
    this.kill();
  }

  /** It wrote a line longer than the harness reads (lines.ts): a protocol error, and nothing after it is read. */
  protected overflowed(): void {
    this.fail(new Error(`protocol error: a line of more than ${lineLimitText()} on its protocol channel: tidemark reads a line of at most ${lineLimitText()}, and no message is that long${this.tail()}`));
  }

  /** One line the process wrote on its protocol channel (its stdout). */
  protected receive(line: string): void {
    if (line.trim() === '') return;
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      if (this.unacked > 0) return;
      return this.fail(new Error(`protocol error: not JSON on stdout: ${JSON.stringify(line.slice(0, 200))}${this.tail()}`));
    }
    if (this.unacked > 0) {
      // The rest of a crashed incarnation's work: it belongs to no world. Only the
      // acknowledgement counts; then the process waits for its next start.
      if (typeof message !== 'object' || message === null || message.type !== 'crashed') return;
      if (--this.unacked === 0 && this.said) this.listener?.hello(this.said);
      return;
    }
    // The version first: a consumer of another version may shape every message differently.
    if (typeof message === 'object' && message !== null && message.type === 'hello' && typeof message.protocol === 'number' && message.protocol !== PROTOCOL) {
      return this.fail(new Error(`it speaks protocol ${message.protocol}; this tidemark speaks protocol ${PROTOCOL}${this.tail()}`));
    }
    const problem = checked(message);
    if (problem !== null) return this.fail(new Error(`protocol error: ${problem} (schema/protocol.schema.json): ${line.slice(0, 200)}${this.tail()}`));
    switch (message.type) {
      case 'hello':
        // Said once per process: a second one would restart what the harness waits for.
        if (this.said) return this.fail(new Error(`protocol error: a second hello; a process says hello once${this.tail()}`));
        return this.greeted(message as unknown as Hello);
      case 'call':
        if (!this.listener) return this.fail(new Error('called the world before it was started'));
        return this.listener.call(message.id as number | string, message.method as Method, message.args as unknown[]);
      case 'crashed':
        return this.fail(new Error(`protocol error: crashed, but it was not sent crash${this.tail()}`));
      default:
        if (!this.listener) return this.fail(new Error(`protocol error: an inspection answers unknown id ${JSON.stringify(message.id)}${this.tail()}`));
        return this.listener.inspection(message.id, message);
    }
  }
}

/**
 * A process of the command, spawned through `sh -c` in a process group of its own (it is
 * started detached, so its pid is its group's id).
 */
export class SpawnedProcess extends ConsumerProcess {
  private readonly child: ChildProcess;
  /** In its environment and its descendants': what escaped its group is found by it (marks.ts). */
  private readonly mark = newMark();
  /** The process group was signalled, or found empty: it is never signalled again. */
  private groupDone = false;

  /**
   * `control`, when given, takes every line the process writes after its hello instead of
   * the protocol: a fork server's own messages (fork-server.ts).
   */
  constructor(
    private readonly command: string,
    options: SpawnOptions,
    private readonly control?: (line: string) => void,
  ) {
    super();
    const child = spawn(command, { shell: true, detached: true, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, TIDEMARK_PROTOCOL: String(PROTOCOL), [MARK_VARIABLE]: this.mark } });
    this.child = child;
    child.stderr?.on('data', (chunk: Buffer) => this.stderrData(chunk.toString()));
    child.on('error', (error) => {
      this.drop();
      this.fail(new Error(`cannot run \`${this.command}\`: ${error.message}`));
    });
    child.on('exit', (code, signal) => {
      // What the process left running in its group dies with it, as after a crash.
      this.killGroup();
      // Its last lines and stderr are read until its pipes close, which is at once unless
      // a process outside its group (a `setsid` grandchild) holds them: then they are
      // dropped after a short grace, so that process cannot keep the harness waiting.
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        clearTimeout(grace);
        this.exited(code, signal);
      };
      const grace = setTimeout(finish, EXIT_GRACE_MS);
      child.once('close', finish);
    });
    child.stdin?.on('error', () => {});
    const take = (line: string): void => (this.control && this.said ? this.control(line) : this.receive(line));
    const splitter = new LineSplitter();
    const stdout = child.stdout!;
    stdout.on('data', (chunk: Buffer) => {
      const { lines, overflow } = splitter.push(chunk);
      for (const line of lines) take(line);
      if (!overflow) return;
      stdout.destroy();
      this.overflowed();
    });
    stdout.on('end', () => {
      const last = splitter.end();
      if (last !== null) take(last);
    });
  }

  /** The running process's pid, which is also its process group (it is started detached). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  protected get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** It no longer keeps the harness running by itself (a fork server waiting for its next fork); the exit still kills it. */
  unref(): void {
    this.child.unref();
    for (const pipe of [this.child.stdin, this.child.stdout, this.child.stderr]) (pipe as { unref?: () => void } | null)?.unref?.();
  }

  kill(): boolean {
    this.killed = true;
    const alive = this.alive;
    this.killGroup();
    if (alive) {
      // A group that could not be signalled: at least the process itself.
      this.child.kill('SIGKILL');
    }
    return alive;
  }

  drop(): void {
    this.child.stdin?.destroy();
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
    this.forget();
  }

  protected write(line: string): void {
    const stdin = this.child.stdin;
    if (stdin && !stdin.destroyed) stdin.write(line);
  }

  /**
   * Signals the group once. After the process has exited, the group's id stays reserved
   * only while a member lives, so the group is signalled right when the exit is seen, and
   * never later: a later signal could reach an unrelated group that reused the id.
   */
  private killGroup(): void {
    const pid = this.child.pid;
    if (this.groupDone || pid === undefined) return;
    this.groupDone = true;
    killGroup(pid);
    // What left the group (setsid) still carries its mark. A fork server's children carry the
    // server's: they are found when the server ends, with the run.
    killMarked(this.mark);
  }
}

/**
 * The schema's verdict on a message a process wrote. JSON.parse reads a line nested far
 * deeper than a check can recurse: such a line is the process's fault, a protocol error,
 * not a stack overflow in the harness.
 */
function checked(message: unknown): string | null {
  try {
    return protocolProblem('fromConsumer', message);
  } catch (error) {
    if (error instanceof RangeError) return 'message is nested too deeply to check';
    throw error;
  }
}
