import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { planArb } from '../scenarios/arbitraries.js';
import { findScenario } from '../scenarios/named.js';
import { worldOptions } from '../scenarios/profiles.js';
import type { AnyConsumer } from '../src/adapter/consumer.js';
import { CrashLoopError, processConsumer, processStats, type ProcessOptions } from '../src/adapter/process/bridge.js';
import type { Listener } from '../src/adapter/process/consumer-process.js';
import { ForkServer, ForkServerError, forkedChild, type ForkedProcess } from '../src/adapter/process/fork-server.js';
import { protocolProblem } from '../src/adapter/process/schema.js';
import { programOf, shimWarning } from '../src/adapter/process/shim.js';
import { execute } from '../src/run/execute.js';
import { EXIT } from '../src/cli.js';
import { cli, HANG_MS, BUILT_CLI, leftAndKilled, stillRuns } from './support.js';

/**
 * docs/protocol.md, Fork servers: a consumer whose hello offers forks is started once, and
 * every incarnation is a child forked from it, killed by the harness itself with SIGKILL to
 * the child's own process group. What the world sees does not change: the same seed gives
 * the same history, byte for byte, as with a process started for each incarnation. The
 * server holds none of the consumer's state; its death, a child's death and a SIGINT to the
 * harness are each seen, and leave no process behind (looked up by pid).
 */
const FIXTURES = 'test/fixtures/fork';
const LEDGER = 'python3 examples/python/ledger_consumer.py';
const BUGGY = 'python3 examples/python/ledger_consumer_buggy.py';
const TAP = 'python3 examples/python/singer_tap.py';
const scratch = mkdtempSync(join(tmpdir(), 'tidemark-fork-test-'));
let files = 0;
const pidFile = (): string => join(scratch, `pids-${files++}`);

/** The shim warning goes to the test, not its output: this machine's python3 may be a shim. */
const quiet = (options: ProcessOptions = {}): ProcessOptions => ({ warn: () => {}, ...options });

/** Whether the process runs: a zombie (ended, not yet reaped by whoever adopted it) does not. */
function runs(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    if (existsSync('/proc/self/stat')) return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The processes among these still running once all have had time to end (30 s at most); they are killed. */
const leftOver = (pids: readonly number[]): Promise<number[]> => leftAndKilled(pids, stillRuns);

/** The lines of a fixture's pid file: `import PID` and `child PID PPID PGID`. */
function noted(file: string): { imports: number[]; children: { pid: number; ppid: number; pgid: number }[] } {
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
  const imports = lines.filter((l) => l.startsWith('import ')).map((l) => Number(l.split(' ')[1]));
  const children = lines.filter((l) => l.startsWith('child ')).map((l) => {
    const [, pid, ppid, pgid] = l.split(' ').map(Number);
    return { pid: pid!, ppid: ppid!, pgid: pgid! };
  });
  return { imports, children };
}

const everyPid = (file: string): number[] => {
  const { imports, children } = noted(file);
  return [...imports, ...children.map((c) => c.pid)];
};

/** Resolves when a condition holds, checked every 20 ms; fails after HANG_MS. */
async function until(what: string, condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > HANG_MS) throw new Error(`waited ${HANG_MS} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const strays: ChildProcess[] = [];
afterAll(() => {
  for (const child of strays) child.kill('SIGKILL');
});

const scenario = (name: string) => findScenario(name)!.plan;

describe('a fork server gives the histories of a process per incarnation', () => {
  it.each([
    ['the Python example', LEDGER, 'pass'],
    ['its buggy twin', BUGGY, 'fail'],
    ['the blackbox Singer-style tap', TAP, 'pass'],
  ])('%s: the same history, byte for byte, for 3 scenarios and 10 generated worlds; every process forked from one server', async (_, command, some) => {
    const forked = await processConsumer(command, quiet({ kills: 'real' }));
    const started = await processConsumer(command, quiet({ kills: 'real', forkServer: false }));
    const plans = [
      ...['crash-between-effect-and-completion', 'failed-event-holds-watermark', 'binding-change-same-store'].map(scenario),
      ...fc.sample(planArb(worldOptions(forked.capabilities)), { seed: 20261201, numRuns: 10 }),
    ];
    const verdicts = new Set<string>();
    for (const plan of plans) {
      const a = await execute(plan, forked);
      const b = await execute(plan, started);
      expect(JSON.stringify(a.history)).toBe(JSON.stringify(b.history));
      expect(a.hash).toBe(b.hash);
      verdicts.add(a.result.verdict.status);
    }
    expect(verdicts).toContain(some);
    const f = processStats(forked)!;
    const s = processStats(started)!;
    // Every process an incarnation had was forked; one server (a new one only after a world
    // in which no incarnation was left alive a whole turn) served them all.
    expect(f.forked).toBe(f.spawned);
    expect(f.spawned).toBeGreaterThan(plans.length);
    expect(f.forkServers).toBeGreaterThanOrEqual(1);
    expect(f.forkServers).toBeLessThanOrEqual(plans.length);
    expect(s.forked).toBe(0);
    expect(s.forkServers).toBe(0);
    expect(s.spawned).toBe(f.spawned);
  });
});

describe('the children of a fork server', () => {
  /**
   * A listener that records what a process says and how it ends. A failure rejects both
   * promises: thrown from the listener, it would surface in whatever test runs next.
   */
  function listen(proc: ForkedProcess): { hello: Promise<void>; exit: Promise<{ code: number | null; signal: string | null }> } {
    let greeted = (): void => {};
    let ended = (_: { code: number | null; signal: string | null }): void => {};
    let failed = (_: Error): void => {};
    const failure = new Promise<never>((_, reject) => (failed = reject));
    const hello = Promise.race([new Promise<void>((resolve) => (greeted = resolve)), failure]);
    const exit = Promise.race([new Promise<{ code: number | null; signal: string | null }>((resolve) => (ended = resolve)), failure]);
    // Handled here as well: a test that fails on the one it awaits never awaits the other.
    for (const p of [failure, hello, exit]) p.catch(() => {});
    const listener: Listener = {
      hello: () => greeted(),
      call: () => {},
      inspection: () => {},
      exit: (code, signal) => ended({ code, signal }),
      fail: (error) => failed(error),
    };
    proc.attach(listener);
    return { hello, exit };
  }

  /**
   * Its pid, once its server said it forked it. A child may connect (and so say its hello)
   * before the harness reads its server's `forked` line: the two arrive on different channels.
   */
  async function pidOf(proc: ForkedProcess): Promise<number> {
    await until('the pid its server forked it as', () => proc.pid !== undefined);
    return proc.pid!;
  }

  it('each leads a process group of its own under the server, and the harness kills it with SIGKILL; the server reaps it and forks the next', async () => {
    const server = new ForkServer(LEDGER, {}, HANG_MS);
    const first = server.fork();
    let second: ForkedProcess | null = null;
    try {
      const one = listen(first);
      await one.hello;
      const serverPid = server.pid!;
      const pid = await pidOf(first);
      expect(pid).not.toBe(serverPid);
      // Its own group (the harness signals -pid), its parent in the server's group.
      expect(forkedChild(pid, serverPid)).toBe('its-child');
      expect(first.kill()).toBe(true);
      // The server saw the death: it reaped the child and reported how it ended.
      expect(await one.exit).toEqual({ code: null, signal: 'SIGKILL' });
      expect(runs(pid)).toBe(false);
      expect(runs(serverPid)).toBe(true);
      second = server.fork();
      const two = listen(second);
      await two.hello;
      const next = await pidOf(second);
      expect(next).not.toBe(pid);
      expect(forkedChild(next, serverPid)).toBe('its-child');
      second.kill();
      await two.exit;
      server.stop();
      expect(await leftOver([serverPid, pid, next])).toEqual([]);
    } finally {
      // A failed assertion leaves nothing running for the files after this one in its worker.
      first.kill();
      second?.kill();
      server.stop();
    }
  });

  it('one may say its hello before its server says forked: a kill decided then reaches its group as soon as the pid comes', async () => {
    // Its server says forked only once the child has read a line from the harness.
    const server = new ForkServer(`python3 ${FIXTURES}/late-forked.py`, {}, HANG_MS);
    const child = server.fork();
    try {
      const life = listen(child);
      await life.hello;
      expect(child.pid).toBeUndefined();
      child.send({ type: 'line' });
      // A kill with no pid to signal yet: it counts as sent, and is, when forked names the pid.
      expect(child.kill()).toBe(true);
      expect(await life.exit).toEqual({ code: null, signal: 'SIGKILL' });
      const pid = child.pid!;
      expect(pid).toBeGreaterThan(1);
      expect(runs(pid)).toBe(false);
      const serverPid = server.pid!;
      server.stop();
      expect(await leftOver([serverPid])).toEqual([]);
    } finally {
      child.kill();
      server.stop();
    }
  });

  it('one that exits on its own is seen to, with its code and its stderr, exactly as a process started for it', async () => {
    const ends = async (mode: string): Promise<string> => {
      const file = pidFile();
      const consumer = await processConsumer(`python3 ${FIXTURES}/pids.py ${file} ${mode} exit3`, quiet({ kills: 'real' }));
      const error = await execute(scenario('failed-event-holds-watermark'), consumer).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CrashLoopError);
      expect(await leftOver(everyPid(file))).toEqual([]);
      // Forked, every incarnation is a child of the one server (the second process to import it).
      const { imports, children } = noted(file);
      if (mode === 'forks') expect(new Set(children.map((c) => c.ppid))).toEqual(new Set([imports[1]]));
      return (error as Error).message.replace(`${file} ${mode}`, 'FILE MODE');
    };
    const forked = await ends('forks');
    expect(forked).toContain('The last one: the consumer process exited with code 3 before its first world call; stderr tail: pids.py: giving up in w1#5');
    expect(forked).toBe(await ends('plain'));
  });

  it('hold none of the state of the incarnations before them: a memory that counts its incarnations sees one in every child, as in a new process', async () => {
    const FAILED = 'already served';
    const plans = ['crash-between-effect-and-completion', 'stale-generation-cannot-advance', 'failed-event-holds-watermark'].map(scenario);
    const histories = async (options: ProcessOptions): Promise<string[]> => {
      const consumer = await processConsumer(`python3 ${FIXTURES}/memory.py`, quiet(options));
      // Under sampled kills the first world kills for real; those after it use sessions.
      const out: string[] = [];
      for (const plan of [plans[0]!, ...plans]) out.push(JSON.stringify((await execute(plan, consumer)).history));
      return out;
    };
    const forked = await histories({ kills: 'real' });
    expect(forked.some((h) => h.includes(FAILED))).toBe(false);
    expect(forked).toEqual(await histories({ kills: 'real', forkServer: false }));
    // The fixture can tell: a session process keeps its memory across incarnations, and gives up.
    const sessions = await histories({ kills: 'sampled', forkServer: false });
    expect(sessions.some((h) => h.includes(FAILED))).toBe(true);
  });
});

describe('when the fork server fails', () => {
  it('a server that dies is seen at once: the live incarnation and every later one stop the run with the reason, and no process is left', async () => {
    const file = pidFile();
    const consumer = await processConsumer(`python3 ${FIXTURES}/pids.py ${file} forks slow`, quiet({ kills: 'real' }));
    const world = execute(scenario('crash-between-effect-and-completion'), consumer).catch((e: unknown) => e);
    // The probe imported it first, the server second; a child is sleeping in its first incarnation.
    await until('a forked child', () => noted(file).children.length > 0);
    const server = noted(file).imports[1]!;
    process.kill(server, 'SIGKILL');
    const error = await world;
    expect(error).toBeInstanceOf(ForkServerError);
    expect((error as Error).message).toMatch(/^the fork server of `python3 test\/fixtures\/fork\/pids\.py .* forks slow` exited with (SIGKILL|code 137)/);
    // It stays broken: the next world stops at once with the same error, forking nothing.
    const before = noted(file).children.length;
    await expect(execute(scenario('failed-event-holds-watermark'), consumer)).rejects.toBe(error);
    expect(noted(file).children.length).toBe(before);
    expect(await leftOver(everyPid(file))).toEqual([]);
  });

  it.each([
    ['serving', 'did not answer fork-server with serving within 5000 ms'],
    ['forked', 'did not answer fork f0 with forked within 5000 ms'],
  ])('a server that never answers with %s stops the run with the reason: not a stall blamed on the consumer', async (silentAt, reason) => {
    // The default hello limit: the server's own start (an interpreter, on a loaded machine
    // over a second) counts against the incarnation's limit before the server's answer limit
    // (half of it) begins, so a short limit would let the stall win the race.
    const consumer = await processConsumer(`python3 ${FIXTURES}/silent.py ${silentAt}`, quiet({ kills: 'real', helloMs: 10_000 }));
    const error = await execute(scenario('failed-event-holds-watermark'), consumer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForkServerError);
    expect((error as Error).message).toContain(`the fork server of \`python3 ${FIXTURES}/silent.py ${silentAt}\` ${reason}`);
  });

  it('a pid no child can have is refused with the reason', async () => {
    const consumer = await processConsumer(`python3 ${FIXTURES}/false-pid.py 1`, quiet({ kills: 'real' }));
    const error = await execute(scenario('failed-event-holds-watermark'), consumer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForkServerError);
    expect((error as Error).message).toContain("said it forked pid 1, which no child of it can have (a pid is an integer above 1, and not the harness's own)");
  });

  it('a pid the server did not fork into a group of its own is refused, and never signalled', async () => {
    // A process of this test, in a group of its own, as a broken server might name.
    const victim = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
    strays.push(victim);
    const pid = victim.pid!;
    const consumer = await processConsumer(`python3 ${FIXTURES}/false-pid.py ${pid}`, quiet({ kills: 'real' }));
    const error = await execute(scenario('failed-event-holds-watermark'), consumer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForkServerError);
    expect((error as Error).message).toContain(`said it forked pid ${pid}, which is not its child leading a process group of its own`);
    expect(runs(pid)).toBe(true);
  });
});

describe('an interrupted check with a fork server', () => {
  it('SIGINT kills the server and every child, found by pid, and exits 130', async () => {
    const file = pidFile();
    // From the ninth incarnation on, each sleeps ten minutes (the stall limit is longer), deaf
    // to the harness going away: only the harness's kill of its group ends it.
    const cli = spawn(
      process.execPath,
      [
        ...[BUILT_CLI, 'check', '--command', `python3 ${FIXTURES}/pids.py ${file} forks linger`],
        ...['--kills', 'real', '--stall-ms', '900000', '--runs', '1000', '--seed', '3', '--regressions', join(scratch, 'sigint.json')],
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    strays.push(cli);
    let out = '';
    cli.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    cli.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => cli.on('exit', (code) => resolve(code)));
    // Interrupted while the ninth child sleeps: it, the server and perhaps a spare are alive.
    await until('nine forked children', () => noted(file).children.length >= 9);
    cli.kill('SIGINT');
    const code = await exited;
    const { imports, children } = noted(file);
    expect(await leftOver([...imports, ...children.map((c) => c.pid)])).toEqual([]);
    expect(code, out).toBe(130);
    // They were forked: one server is the parent of every child.
    expect(new Set(children.map((c) => c.ppid)).size).toBe(1);
    expect(children.every((c) => c.pgid === c.pid)).toBe(true);
  });
});

describe('the hello that offers a fork server', () => {
  it('says forks: true; the schema refuses any other value, naming the field', () => {
    const hello = { type: 'hello', protocol: 1, name: 'x', capabilities: { delivery: 'at-least-once' } };
    expect(protocolProblem('fromConsumer', { ...hello, forks: true })).toBeNull();
    expect(protocolProblem('fromConsumer', { ...hello, forks: 'yes' })).toBe('hello.forks must be a boolean, got "yes"');
  });
});

describe('a check that ends with its fork server running', () => {
  it('leaves nothing in the temporary directory: the socket directory goes with the server', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'tidemark-test-tmpdir-'));
    mkdirSync(join(scratch, 'tmp'));
    const r = spawnSync(process.execPath, [BUILT_CLI, 'check', '--command', LEDGER, '--scenario', 'stale-token', '--kills', 'real', '--regressions', join(scratch, 'regressions.json')], {
      encoding: 'utf8',
      env: { ...process.env, TMPDIR: join(scratch, 'tmp') },
      timeout: HANG_MS,
      killSignal: 'SIGKILL',
    });
    expect(r.status, r.stdout + r.stderr).toBe(EXIT.pass);
    // Before, every such check left a tidemark-fork-* directory with its socket behind.
    expect(readdirSync(join(scratch, 'tmp'))).toEqual([]);
  });
});

describe('a checking process killed outright with a fork server', () => {
  it('leaves no socket directory: it told its supervisor of it, and the supervisor removes it', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'tidemark-test-tmpdir-'));
    const tmp = join(scratch, 'tmp');
    mkdirSync(tmp);
    const supervisor = spawn(process.execPath, [BUILT_CLI, 'check', '--command', LEDGER, '--kills', 'real', '--runs', '100000', '--heartbeat', '1', '--regressions', join(scratch, 'r.json')], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TMPDIR: tmp, CI: '1' },
    });
    strays.push(supervisor);
    let out = '';
    supervisor.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    supervisor.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => supervisor.on('exit', (code) => resolve(code)));
    const sockets = (): string => readdirSync(tmp).filter((e) => e.startsWith('tidemark-fork-')).join(' ');
    const progressLines = (): number => (out.match(/^ *\.\.\. /gm) ?? []).length;
    // The checking process tells its supervisor what to clean up every 200 ms, from its main
    // thread. The same socket directory across two progress lines, a second apart, was there
    // through at least one such tick: the supervisor knows of it.
    let seen = '';
    for (let stable = false; !stable; ) {
      await until('a fork server socket directory', () => sockets() !== '');
      seen = sockets();
      const lines = progressLines();
      await until('two more progress lines', () => progressLines() >= lines + 2);
      stable = sockets() === seen;
    }
    const checking = Number(readFileSync(`/proc/${supervisor.pid}/task/${supervisor.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
    // SIGKILL runs none of its exit hooks: its own removal of the directory never happens.
    process.kill(checking, 'SIGKILL');
    expect(await exited, out).toBe(EXIT.unknown);
    expect(out).toContain('was killed by SIGKILL');
    expect(readdirSync(tmp).filter((e) => seen.split(' ').includes(e))).toEqual([]);
  });
});

describe('--fork-server on the command line', () => {
  it('off starts the command for each process, on (the default) forks them; anything else, or without --command, is a usage error', async () => {
    for (const mode of ['on', 'off']) {
      const file = pidFile();
      const r = await cli('check', '--command', `python3 ${FIXTURES}/pids.py ${file} forks`, '--scenario', 'crash-between-effect-and-completion', '--kills', 'real', '--fork-server', mode);
      expect(r.code, r.out).toBe(EXIT.pass);
      const { imports, children } = noted(file);
      // The probe, then one fork server; or the probe and a process for each incarnation, and
      // perhaps the one warm spare, started ahead and killed unused at the end (whether it got
      // as far as its import before that depends on the machine's load).
      if (mode === 'on') expect(imports.length, mode).toBe(2);
      else expect([1 + children.length, 2 + children.length], mode).toContain(imports.length);
      expect(await leftOver(everyPid(file))).toEqual([]);
    }
    const bad = await cli('check', '--command', LEDGER, '--scenario', 'crash-between-effect-and-completion', '--fork-server', 'sometimes');
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.err).toContain("--fork-server must be on or off, got 'sometimes'");
    const adapter = await cli('check', '--adapter', 'examples/ledger-consumer.ts', '--fork-server', 'off');
    expect(adapter.code).toBe(EXIT.usage);
    expect(adapter.err).toContain('--fork-server applies only to a --command consumer');
  });
});

describe('runtimes without fork', () => {
  it('the Node client offers no fork server: each incarnation is a process started for it', async () => {
    const consumer = await processConsumer('node examples/node/consumer.mjs', quiet({ kills: 'real' }));
    await execute(scenario('crash-between-effect-and-completion'), consumer);
    const stats = processStats(consumer)!;
    expect(stats.spawned).toBeGreaterThan(1);
    expect(stats.forked).toBe(0);
  });
});

describe('a command through a version manager shim', () => {
  const bin = mkdtempSync(join(tmpdir(), 'tidemark-shims-'));
  const script = (path: string, body: string): string => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, body);
    chmodSync(path, 0o755);
    return path;
  };
  const python = script(join(bin, '.pyenv', 'shims', 'python3'), '#!/usr/bin/env bash\nset -e\nexec "$PYENV_ROOT/libexec/pyenv" exec "${0##*/}" "$@"\n');
  script(join(bin, '.asdf', 'shims', 'ruby'), '#!/usr/bin/env bash\nexec asdf exec "ruby" "$@"\n');
  script(join(bin, '.volta', 'bin', 'volta-shim'), '\x7fELF not really\n');
  symlinkSync(join(bin, '.volta', 'bin', 'volta-shim'), join(bin, '.volta', 'bin', 'node'));
  script(join(bin, 'nvm', 'nvm-exec'), '#!/usr/bin/env bash\nDIR="$(command cd "$(dirname "$0")" && pwd)"\n\\. "$DIR/nvm.sh" --no-use\nexec "$@"\n');
  script(join(bin, 'plain', 'python3'), '#!/bin/sh\nexec /usr/bin/env python3 "$@"\n');
  // A wrapper that runs an interpreter kept under a manager's tree, and no manager.
  script(join(bin, 'wrapper', 'python3'), '#!/bin/sh\nexec /home/u/.pyenv/versions/3.12.1/bin/python3 "$@"\n');
  // Consumers run by their own names: their first lines find the interpreter on the PATH.
  const viaEnv = script(join(bin, 'consumers', 'consumer.py'), '#!/usr/bin/env python3\nprint("hello")\n');
  const viaEnvS = script(join(bin, 'consumers', 'consumer-s.py'), '#!/usr/bin/env -S python3 -u\nprint("hello")\n');

  it('reads the program a command line runs', () => {
    expect(programOf('python3 consumer.py')).toBe('python3');
    expect(programOf('FOO=1 exec env -i python3 -u consumer.py')).toBe('python3');
    expect(programOf('"/opt/my python/bin/python3" consumer.py')).toBe('/opt/my python/bin/python3');
    expect(programOf('/usr/bin/env python3 consumer.py')).toBe('python3');
    expect(programOf('  ')).toBeNull();
  });

  it('names the shim of pyenv, asdf, volta and nvm on the PATH, and how to find the real interpreter; not a plain script or an interpreter', () => {
    const path = [join(bin, '.pyenv', 'shims'), join(bin, '.asdf', 'shims'), join(bin, '.volta', 'bin'), join(bin, 'nvm')].join(':');
    expect(shimWarning('python3 consumer.py', scratch, path)).toBe(
      `\`python3\` in the command is ${python}, a shim of pyenv: every process started runs pyenv before the interpreter, which about doubles each start-up. Give the interpreter's own path in the command instead (\`pyenv which python3\` prints it; docs/protocol.md, Making it fast).`,
    );
    expect(shimWarning('ruby consumer.rb', scratch, path)).toContain('a shim of asdf');
    expect(shimWarning('node consumer.mjs', scratch, path)).toContain('a shim of volta');
    expect(shimWarning('nvm-exec node consumer.mjs', scratch, path)).toContain('a shim of nvm');
    expect(shimWarning(`${python} consumer.py`, '/', '')).toContain('a shim of pyenv');
    expect(shimWarning('python3 consumer.py', scratch, join(bin, 'plain'))).toBeNull();
    expect(shimWarning('python3 consumer.py', scratch, join(bin, 'wrapper'))).toBeNull();
    expect(shimWarning('/usr/bin/env python3 consumer.py', scratch, path)).toContain(`is ${python}, a shim of pyenv`);
    for (const consumer of [viaEnv, viaEnvS]) {
      expect(shimWarning(`${consumer} --flag`, scratch, path)).toBe(
        `\`${consumer}\` in the command is a script whose first line runs \`python3\`, which is ${python}, a shim of pyenv: every process started runs pyenv before the interpreter, which about doubles each start-up. Give the interpreter's own path in the command instead (\`pyenv which python3\` prints it; docs/protocol.md, Making it fast).`,
      );
    }
    expect(shimWarning(`${viaEnv} --flag`, scratch, join(bin, 'plain'))).toBeNull();
    expect(shimWarning(`${process.execPath} consumer.mjs`, scratch, path)).toBeNull();
    expect(shimWarning('no-such-program x', scratch, path)).toBeNull();
  });

  it('processConsumer warns once, and says that a fork server pays for it only once', async () => {
    const warnings: string[] = [];
    // A shim that is a plain hand-over to the interpreter: it runs, and it is in a shims/ directory.
    const shim = script(join(bin, 'pyenv-like', '.pyenv', 'shims', 'python3'), '#!/bin/sh\nexec python3 "$@"\n');
    const consumer: AnyConsumer = await processConsumer(`${shim} examples/python/ledger_consumer.py`, { warn: (m) => warnings.push(m) });
    expect(consumer.name).toBe('python-ledger');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`is ${shim}, a shim of pyenv`);
    expect(warnings[0]).toContain('With the fork server, only its own start pays for it.');
    const without: string[] = [];
    await processConsumer(`${shim} examples/python/ledger_consumer.py`, { forkServer: false, warn: (m) => without.push(m) });
    expect(without[0]).not.toContain('fork server');
    // On stderr (no warn given), once per process: a check loads its command again for its
    // final replays, and said the same warning twice.
    const written: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    try {
      for (let i = 0; i < 2; i++) await processConsumer(`${shim} examples/python/ledger_consumer.py`);
    } finally {
      write.mockRestore();
    }
    expect(written.filter((w) => w.includes(`is ${shim}, a shim of pyenv`))).toHaveLength(1);
  });
});
