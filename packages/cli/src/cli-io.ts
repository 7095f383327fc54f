/** Where a subcommand writes and how it learns it should stop (Ctrl-C in the bin). */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  signal?: AbortSignal;
}

/** A subcommand: parses its own arguments, prints, and resolves to the process exit code. */
export type CliRun = (argv: string[], io: CliIo) => Promise<number>;

/** Exit codes every subcommand uses. */
export const ExitCode = {
  /** The command did what was asked. */
  Ok: 0,
  /** The call failed (server error, unreachable server, bad answer). */
  Failure: 1,
  /** The command line was wrong (unknown option, bad tensor spec, missing argument). */
  Usage: 2,
  /** `health`: the server answered but is not live or not ready (or a model is not ready). */
  Unhealthy: 3,
} as const;
