import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CliIo } from './cli-io.js';
import { CommandRegistry } from './command-registry.js';
import { defaultCommands } from './default-commands.js';
import { runCli } from './run-cli.js';
import { VERSION } from './version.js';

function captured() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (text) => out.push(text), stderr: (text) => err.push(text) };
  return { io, out, err };
}

describe('runCli and the command registry', () => {
  it('runs a command another package registers, with the rest of argv', async () => {
    const seen: string[][] = [];
    const registry = defaultCommands().register({
      name: 'plugin-example',
      summary: 'Measure a model',
      run: async (argv, io) => {
        seen.push(argv);
        io.stdout('measured\n');
        return 0;
      },
    });
    const { io, out } = captured();
    expect(await runCli(['plugin-example', 'add_sub', '--concurrency', '8'], io, registry)).toBe(0);
    expect(seen).toEqual([['add_sub', '--concurrency', '8']]);
    expect(out.join('')).toBe('measured\n');
    const help = captured();
    await runCli(['--help'], help.io, registry);
    expect(help.out.join('')).toMatch(/^ {2}plugin-example +Measure a model$/m);
  });

  it('refuses a second command of the same name and names that are not kebab-case', () => {
    const registry = new CommandRegistry();
    const run = async () => 0;
    registry.register({ name: 'plugin-example', summary: '', run });
    expect(() => registry.register({ name: 'plugin-example', summary: '', run })).toThrow(
      /already registered/,
    );
    expect(() => registry.register({ name: 'Model Config', summary: '', run })).toThrow(/lower-case/);
  });

  it('prints help with exit 2 when no command is given, and every help line fits 80 columns', async () => {
    const { io, out } = captured();
    expect(await runCli([], io)).toBe(2);
    const registry = defaultCommands();
    const texts = [out.join('')];
    for (const command of registry.list()) {
      const help = captured();
      expect(await command.run(['--help'], help.io)).toBe(0);
      texts.push(help.out.join(''));
    }
    for (const line of texts.join('\n').split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('has the version of its package.json', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(VERSION).toBe(manifest.version);
  });
});
