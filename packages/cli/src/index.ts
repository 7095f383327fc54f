// @infergate/cli: see README.md. Public exports are listed here explicitly.
export type { CliIo, CliRun } from './cli-io.js';
export { ExitCode } from './cli-io.js';
export type { CliCommand } from './command-registry.js';
export { CommandRegistry } from './command-registry.js';
export { defaultCommands } from './default-commands.js';
export type { NpyArray } from './npy.js';
export { readNpy, writeNpy } from './npy.js';
export { runCli } from './run-cli.js';
export { VERSION } from './version.js';
