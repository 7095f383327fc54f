import { type CliIo, ExitCode } from './cli-io.js';
import type { CommandRegistry } from './command-registry.js';
import { defaultCommands } from './default-commands.js';
import { VERSION } from './version.js';

function help(registry: CommandRegistry): string {
  const commands = registry.list();
  const width = Math.max(...commands.map((command) => command.name.length));
  const lines = commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return `Usage: infergate <command> [arguments] [options]

Commands:
${lines.join('\n')}

Run 'infergate <command> --help' for a command's arguments and options.
Exit codes: 0 done, 1 the call failed, 2 wrong command line,
3 (health) the server or a model is not ready.`;
}

/**
 * The `infergate` command line: picks the subcommand named by `argv[0]` from `registry` and runs
 * it with the rest. Resolves to the exit code; prints nothing itself except help and a wrong name.
 */
export async function runCli(
  argv: string[],
  io: CliIo,
  registry: CommandRegistry = defaultCommands(),
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const target = name === 'help' && rest[0] !== undefined ? registry.get(rest[0]) : undefined;
    if (target) return target.run(['--help'], io);
    io.stdout(`${help(registry)}\n`);
    return name === undefined ? ExitCode.Usage : ExitCode.Ok;
  }
  if (name === '--version' || name === '-v') {
    io.stdout(`${VERSION}\n`);
    return ExitCode.Ok;
  }
  const command = registry.get(name);
  if (command === undefined) {
    io.stderr(`infergate: unknown command '${name}'\n\n${help(registry)}\n`);
    return ExitCode.Usage;
  }
  return command.run(rest, io);
}
