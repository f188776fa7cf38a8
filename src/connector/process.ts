import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { running, type RunningProcess } from '../adapter/process/consumer-process.js';
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
 */
export class ConnectorProcess implements RunningProcess {
  private readonly child: ChildProcess;
  private stderr = '';
  private groupDone = false;
  private exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private closed = false;
  private told = false;
  abandoned = false;

  constructor(
    command: string,
    args: readonly string[],
    private readonly onLine: (line: string) => void,
    private readonly onEnd: (code: number | null, signal: NodeJS.Signals | null) => void,
  ) {
    // UTC, so that a connector formatting local time formats the same everywhere.
    const env = { ...process.env, TZ: 'UTC' };
    this.child = spawn(`${command} ${args.map(shellQuote).join(' ')}`, { shell: true, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
    running.add(this);
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-TAIL);
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      if (!this.told && line.trim() !== '') this.onLine(line);
    });
    this.child.stdout?.on('close', () => {
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
      // A pipe held open by a process that left the group is not waited on for long.
      setTimeout(() => {
        this.closed = true;
        this.finish();
      }, EXIT_GRACE_MS).unref();
      this.finish();
    });
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

  /** Signals the group once, never after it could have been reused (see ConsumerProcess). */
  private killGroup(): void {
    const pid = this.child.pid;
    if (this.groupDone || pid === undefined) return;
    this.groupDone = true;
    killGroup(pid);
  }
}

const TAIL = 4000;
const EXIT_GRACE_MS = 200;

