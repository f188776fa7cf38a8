/**
 * SIGKILLs a process group. A group whose members are all gone is nothing to kill, so the
 * error that says so is swallowed. Callers signal a group once, right when its leader's exit
 * is seen and never later: the id is reserved only while a member lives, and a later signal
 * could reach an unrelated group that reused it.
 */
export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // The group is empty: nothing left to kill.
  }
}
