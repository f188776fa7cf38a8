/** Where a command prints: the tests collect lines, the `tidemark` command writes to stdout and stderr. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /**
   * A status line rewritten in place on a terminal (progress); null clears it. Absent when
   * nobody watches a terminal (CI, pipes, tests): a plain heartbeat line is printed instead.
   */
  status?(line: string | null): void;
}
