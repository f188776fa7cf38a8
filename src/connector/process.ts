import { spawn, type ChildProcess } from 'node:child_process';
import { running, type RunningProcess } from '../adapter/process/consumer-process.js';
import { LineSplitter } from '../adapter/process/lines.js';
import { killMarked, MARK_VARIABLE, newMark } from '../adapter/process/marks.js';
import { shellQuote } from '../report/replay-command.js';
import { killGroup } from '../adapter/process/group.js';

/**
 * One connector process, from spawn to exit or SIGKILL. It runs through the shell in a
 * process group of its own, so that a kill reaches everything it started, as the process
 * bridge runs consumers (src/adapter/process/), and it is in the bridge's registry of
 * running processes while it runs: a signal, the checking process's own exit and the
 * supervisor's clean-up after the watchdog or any abrupt end kill it with every consumer
 * process. Its stdout is read line by line; the end is told only once the exit is seen and
 * stdout is read to its end, so no line is lost.
 *
 * What it writes is bounded twice over. A line longer than the limit (lines.ts) is not read
 * on: `onOverflow` is told instead, once. And the lines read but not yet handled are bounded:
 * past QUEUE_LIMIT characters, stdout is paused until the platform has handled them
 * (`handled`), so a connector that writes faster than its records are delivered waits on its
 * pipe rather than filling the harness's memory.
 */
export class ConnectorProcess implements RunningProcess {
  private readonly child: ChildProcess;
  /** In its environment and its descendants': what escaped its group is found by it. */
  private readonly mark = newMark();
  private stderr = '';
  private groupDone = false;
  private exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private closed = false;
  private told = false;
  /** Characters of lines read and not yet handled. */
  private queued = 0;
  /** stdout is paused until the queued lines are handled. */
  private paused = false;
  /** The exit's grace ran out while stdout was paused: it starts again once stdout flows. */
  private graceDue = false;
  /** What waits for stdout to flow again (see afterFlowing). */
  private waiting: (() => void)[] = [];
  abandoned = false;

  constructor(
    command: string,
    args: readonly string[],
    private readonly onLine: (line: string) => void,
    private readonly onEnd: (code: number | null, signal: NodeJS.Signals | null) => void,
    private readonly onOverflow: () => void,
  ) {
    // UTC, so that a connector formatting local time formats the same everywhere. The mark
    // finds what it started outside its group (marks.ts).
    const env = { ...process.env, TZ: 'UTC', [MARK_VARIABLE]: this.mark };
    this.child = spawn(`${command} ${args.map(shellQuote).join(' ')}`, { shell: true, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
    running.add(this);
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-TAIL);
    });
    const splitter = new LineSplitter();
    const stdout = this.child.stdout!;
    stdout.on('data', (chunk: Buffer) => {
      const { lines, overflow } = splitter.push(chunk);
      for (const line of lines) this.read(line);
      if (overflow && !this.told) {
        // Nothing after the overflow is read: the platform ends the attempt and kills it.
        stdout.pause();
        this.onOverflow();
      }
    });
    stdout.on('end', () => {
      const last = splitter.end();
      if (last !== null) this.read(last);
    });
    stdout.on('close', () => {
      this.closed = true;
      this.finish();
    });
    this.child.on('error', (error) => {
      this.stderr += `\ncannot run the command: ${error.message}`;
      this.exited ??= { code: 127, signal: null };
      this.closed = true;
      this.finish();
    });
    this.child.on('exit', (code, signal) => {
      // What it left running in its group dies with it.
      this.killGroup();
      this.exited = { code, signal };
      this.graceAfterExit();
      this.finish();
    });
  }

  /**
   * A pipe held open by a process that left the group is not waited on for long after the
   * exit. While stdout is paused, what is left in it waits on the harness, not on such a
   * process: the grace starts again once it flows.
   */
  private graceAfterExit(): void {
    setTimeout(() => {
      if (this.paused) {
        this.graceDue = true;
        return;
      }
      this.closed = true;
      this.finish();
    }, EXIT_GRACE_MS).unref();
  }

  /** Lines of this many characters were handled: stdout flows again once few enough wait. */
  handled(chars: number): void {
    this.queued -= chars;
    if (!this.paused || this.queued > QUEUE_LIMIT / 2) return;
    this.paused = false;
    this.child.stdout?.resume();
    if (this.graceDue) {
      this.graceDue = false;
      this.graceAfterExit();
    }
    // What it wrote before the waiting callers is read first: a turn after stdout flows again.
    const waiting = this.waiting.splice(0);
    if (waiting.length > 0) setImmediate(() => waiting.forEach((f) => f()));
  }

  /**
   * Runs f a macrotask turn from now, or, while stdout is paused, a turn after it flows again:
   * whatever the connector wrote before it sent a request is read before the request is
   * queued, even when its pipe was full (see Attempt.arrived).
   */
  afterFlowing(f: () => void): void {
    if (this.paused) this.waiting.push(f);
    else setImmediate(() => (this.paused ? this.waiting.push(f) : f()));
  }

  private read(line: string): void {
    if (this.told || line.trim() === '') return;
    this.queued += line.length;
    if (this.queued > QUEUE_LIMIT && !this.paused) {
      this.paused = true;
      this.child.stdout?.pause();
    }
    this.onLine(line);
  }

  /** The last of its stderr, for a message; empty when it wrote none. */
  tail(): string {
    const t = this.stderr.trim();
    return t ? `; stderr tail: ${t.slice(-500)}` : '';
  }

  /** Its pid, which is also its process group. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last lines of its stderr (the logs of a Singer tap), at most five. */
  stderrLines(): string[] {
    return this.stderr.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '').slice(-5);
  }

  /** SIGKILL to its whole group; nothing it says afterwards is read. Returns whether it was still running. */
  kill(): boolean {
    this.told = true;
    const alive = this.child.exitCode === null && this.child.signalCode === null;
    this.killGroup();
    if (alive) this.child.kill('SIGKILL');
    this.drop();
    return alive;
  }

  private finish(): void {
    if (this.told || this.exited === null || !this.closed) return;
    this.told = true;
    this.drop();
    this.onEnd(this.exited.code, this.exited.signal);
  }

  /** Stops reading its pipes and forgets it. */
  drop(): void {
    running.delete(this);
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }

  /**
   * Signals the group once, never after it could have been reused (see ConsumerProcess), and
   * then whatever left the group still carrying its mark.
   */
  private killGroup(): void {
    const pid = this.child.pid;
    if (this.groupDone || pid === undefined) return;
    this.groupDone = true;
    killGroup(pid);
    killMarked(this.mark);
  }
}

const TAIL = 4000;
/** Characters of read lines waiting to be handled past which stdout is paused. */
const QUEUE_LIMIT = 16 * 1024 * 1024;
const EXIT_GRACE_MS = 200;

