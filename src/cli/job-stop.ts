/**
 * How an interrupted check waits for its jobs (src/cli/jobs.ts). A signal ends the checking
 * process at once, and an exit hook cannot wait: the jobs were told to stop and their known
 * processes killed, but a job busy when the signal came (a checker running, a connector being
 * started) went on for a moment after the command had exited 130, and could start one more
 * connector meanwhile. So while jobs run, the signal's handler (src/cli/supervised.ts) awaits
 * this first: every job stopped and gone, or killed, with what it started.
 */
let stopper: (() => Promise<void>) | null = null;

/** Registers how to stop the running jobs; returns the function that unregisters it. */
export function whileJobsRun(stop: () => Promise<void>): () => void {
  stopper = stop;
  return () => {
    if (stopper === stop) stopper = null;
  };
}

/** Stops the running jobs, if any, and resolves once they are gone. */
export async function stopJobs(): Promise<void> {
  await stopper?.();
}
