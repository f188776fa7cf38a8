import { accessSync, constants, openSync, readSync, closeSync, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, resolve, sep } from 'node:path';

/**
 * Version managers put a shim where the interpreter's name is found on the PATH: pyenv,
 * rbenv, nodenv, goenv and jenv a bash script in `shims/`, asdf and mise one in their own
 * `shims/`, volta a link to its `volta-shim` binary, nvm's `nvm-exec` a script that loads
 * nvm first. Each process start then runs the manager before the interpreter: measured with
 * pyenv's, a Python consumer took about twice as long to start. A command run once per
 * incarnation pays that thousands of times in a check.
 */
const MANAGERS = ['pyenv', 'rbenv', 'nodenv', 'goenv', 'jenv', 'asdf', 'mise', 'rtx', 'volta', 'nvm'] as const;

/** Words a shell reads before the program a command runs: `exec python3 ...`, `env FOO=1 python3 ...`, `/usr/bin/env python3 ...`. */
const PREFIXES = new Set(['exec', 'env', 'command', 'nice', 'nohup', 'time']);

/** Whether a word is one of PREFIXES, by name or by path (`/usr/bin/env`). */
const isPrefix = (word: string): boolean => PREFIXES.has(word) || (word.includes('/') && PREFIXES.has(basename(word)));

/**
 * The program a shell command line runs, as written: the first word that is not a variable
 * assignment, a prefix such as `exec` or `env`, or an option of one. Quotes are removed; a
 * command using anything more of the shell's grammar may not be read right, which only means
 * no warning.
 */
export function programOf(command: string): string | null {
  const words = [...command.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
  let afterPrefix = false;
  for (const word of words) {
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) continue;
    if (isPrefix(word)) {
      afterPrefix = true;
      continue;
    }
    if (afterPrefix && word.startsWith('-')) continue;
    return word;
  }
  return null;
}

/** Where a shell would find `program`: a path as given (relative to `cwd`), or the first executable of that name on the PATH. */
function located(program: string, cwd: string, path: string): string | null {
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes('/')) {
    const file = isAbsolute(program) ? program : resolve(cwd, program);
    return executable(file) ? file : null;
  }
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const file = join(isAbsolute(dir) ? dir : resolve(cwd, dir), program);
    if (executable(file)) return file;
  }
  return null;
}

/** The first bytes of a file, as text. */
function head(file: string, bytes = 4096): string {
  let fd: number | null = null;
  try {
    fd = openSync(file, 'r');
    const buffer = Buffer.alloc(bytes);
    return buffer.toString('utf8', 0, readSync(fd, buffer, 0, bytes, 0));
  } catch {
    return '';
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** Which version manager a located program belongs to as a shim, or null. */
export function shimManager(file: string): string | null {
  let real = file;
  try {
    real = realpathSync(file);
  } catch {
    // A dangling link: judged by its own path.
  }
  if (basename(real) === 'volta-shim') return 'volta';
  const parts = file.split(sep);
  const named = (text: string): string | null => MANAGERS.find((m) => new RegExp(`(^|[^a-z])${m}([^a-z]|$)`).test(text)) ?? null;
  // A `shims` directory of a manager's tree (~/.pyenv/shims, ~/.asdf/shims,
  // ~/.local/share/mise/shims): the nearest directory above it that names one says which.
  if (parts.at(-2) === 'shims') {
    for (const dir of parts.slice(0, -2).reverse()) {
      const manager = named(dir);
      if (manager !== null) return manager;
    }
    return 'a version manager';
  }
  // A script that hands over to a manager: nvm-exec sources nvm.sh, a shim elsewhere execs
  // the manager. What it runs must be the manager itself (its name is the program's), not
  // merely something under the manager's tree: a wrapper that execs
  // ~/.pyenv/versions/3.12.1/bin/python3 runs the interpreter, and no pyenv.
  const text = head(real);
  if (!text.startsWith('#!')) return null;
  for (const line of text.split('\n').slice(1)) {
    const handover = /^\s*\\?(?:exec|source|\.)\s+(?:'([^']*)'|"([^"]*)"|(\S+))/.exec(line);
    if (handover === null) continue;
    const program = handover[1] ?? handover[2] ?? handover[3] ?? '';
    const manager = named(basename(program));
    if (manager !== null) return manager;
  }
  return null;
}

/** The program a script's first line runs (`#!/usr/bin/env python3` gives `python3`), or null for a file that is not a script. */
function shebangProgram(file: string): string | null {
  const first = head(file, 512).split('\n')[0] ?? '';
  return first.startsWith('#!') ? programOf(first.slice(2).replace(/(^|\s)-S(\s|$)/, ' ')) : null;
}

/**
 * A warning when `command` starts its program through a version manager's shim, or null.
 * It names the shim and how to find the real interpreter to give instead.
 */
export function shimWarning(command: string, cwd: string = process.cwd(), path: string = process.env.PATH ?? ''): string | null {
  const program = programOf(command);
  if (program === null) return null;
  const file = located(program, cwd, path);
  if (file === null) return null;
  let manager = shimManager(file);
  let what = `\`${program}\` in the command is ${file}`;
  let interpreter = program;
  if (manager === null) {
    // A script the command runs by its own name: its first line names the interpreter, which
    // the kernel runs (through env, found on the PATH), and that may be the shim.
    const runs = shebangProgram(file);
    const found = runs === null ? null : located(runs, cwd, path);
    if (runs === null || found === null || found === file) return null;
    manager = shimManager(found);
    what = `\`${program}\` in the command is a script whose first line runs \`${runs}\`, which is ${found}`;
    interpreter = runs;
  }
  if (manager === null) return null;
  const known = manager !== 'a version manager';
  const which = known ? `\`${manager} which ${basename(interpreter)}\` prints it` : 'the version manager can print it';
  return `${what}, a shim of ${manager}: every process started runs ${known ? manager : 'the version manager'} before the interpreter, which about doubles each start-up. Give the interpreter's own path in the command instead (${which}; docs/protocol.md, Making it fast).`;
}
