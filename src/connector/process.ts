import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { shellQuote } from '../report/replay-command.js';

/**
 * One connector process, from spawn to exit or SIGKILL. It runs through the shell in a
 * process group of its own, so that a kill reaches everything it started, as the process
 * bridge runs consumers (src/adapter/process/). Its stdout is read line by line; the end
 * is told only once the exit is seen and stdout is read to its end, so no line is lost.
 */
export class ConnectorProcess {
  private readonly child: ChildProcess;
  private stderr = '';
  private groupDone = false;
  private exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private closed = false;
  private told = false;

  constructor(
    command: string,
    args: readonly string[],
    private readonly onLine: (line: string) => void,
    private readonly onEnd: (code: number | null, signal: NodeJS.Signals | null) => void,
  ) {
    // UTC, so that a connector formatting local time formats the same everywhere.
    const env = { ...process.env, TZ: 'UTC' };
    this.child = spawn(`${command} ${args.map(shellQuote).join(' ')}`, { shell: true, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
    live.add(this);
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

  /** SIGKILL to its whole group; nothing it says afterwards is read. */
  kill(): void {
    this.told = true;
    this.killGroup();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    this.drop();
  }

  private finish(): void {
    if (this.told || this.exited === null || !this.closed) return;
    this.told = true;
    this.drop();
    this.onEnd(this.exited.code, this.exited.signal);
  }

  private drop(): void {
    live.delete(this);
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }

  /** Signals the group once, never after it could have been reused (see ConsumerProcess). */
  private killGroup(): void {
    const pid = this.child.pid;
    if (this.groupDone || pid === undefined) return;
    this.groupDone = true;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // The group is empty already.
    }
  }
}

const TAIL = 4000;
const EXIT_GRACE_MS = 200;

/** Every connector process running, and every sync directory not yet removed. */
const live = new Set<ConnectorProcess>();
export const syncDirs = new Set<string>();

/** Kills every connector process and removes every sync directory; synchronous, for a signal's last moment. */
export function killAllConnectors(): number {
  const n = live.size;
  for (const proc of [...live]) proc.kill();
  for (const dir of syncDirs) rmSync(dir, { recursive: true, force: true });
  syncDirs.clear();
  return n;
}

// No connector outlives the harness, however it ends: SIGINT, SIGTERM and SIGHUP end the
// checking process through process.exit, which runs this.
process.once('exit', () => {
  killAllConnectors();
});
