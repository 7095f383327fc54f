import type { CliRun } from './cli-io.js';

/** One `infergate <name>` subcommand. */
export interface CliCommand {
  name: string;
  /** One line for `infergate --help` (under ~60 characters, no trailing period). */
  summary: string;
  run: CliRun;
}

/**
 * The subcommands of one `infergate` bin. The built-in ones are registered by `defaultCommands()`;
 * other packages add theirs (`perf`, `model-config`) with `register`.
 */
export class CommandRegistry {
  readonly #commands = new Map<string, CliCommand>();

  register(command: CliCommand): this {
    if (!/^[a-z][a-z0-9-]*$/.test(command.name)) {
      throw new TypeError(`command name '${command.name}' must be lower-case letters, digits and '-'`);
    }
    if (this.#commands.has(command.name))
      throw new TypeError(`command '${command.name}' is already registered`);
    this.#commands.set(command.name, command);
    return this;
  }

  get(name: string): CliCommand | undefined {
    return this.#commands.get(name);
  }

  /** In registration order. */
  list(): CliCommand[] {
    return [...this.#commands.values()];
  }
}
