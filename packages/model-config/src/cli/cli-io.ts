/** Where a CLI subcommand writes, and the signal that cancels it (Ctrl-C). */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  signal?: AbortSignal;
}

/** Exit codes: CI reads 1 as "the config has problems" and 2 as "the command could not run". */
export const EXIT = { ok: 0, findings: 1, usage: 2 } as const;
