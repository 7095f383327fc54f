import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { InfergateError } from '@infergate/core';
import { formatFinding, lintModelConfig } from '../lint-model-config.js';
import { buildModelConfig } from '../model-config-builder.js';
import { parseModelConfig, printModelConfig } from '../model-config-text.js';
import { createMultiTenantPreset } from '../multi-tenant-preset.js';
import { type CliIo, EXIT } from './cli-io.js';
import { numberFlag } from './number-flag.js';
import { applyCommand, diffCommand } from './remote-commands.js';

export type { CliIo } from './cli-io.js';

export const USAGE = `usage: infergate model-config <command> [options]

commands:
  lint <config.pbtxt>...   check configs; exit 1 when a rule reports an error
    --latency-budget-ms N  end-to-end budget (enables delay and timeout rules)
    --gpus N               GPUs on the server (enables instances-over-gpus)
    --max-instances-per-gpu N
                           with --gpus: most instances of the model per GPU
    --streaming-client     clients call decoupled models on the streaming RPC
    --no-streaming-client  they do not (a decoupled model is then an error)
    --disable id,id        rules not to run
    --strict               warnings fail too
    --format text|json     output format (default text)
  generate <spec.json>     print a config.pbtxt from a builder spec, or from a
                           multi-tenant spec ({ "model": …, "tenants": … })
    --out FILE             write the config there instead of stdout
    --client-out FILE      multi-tenant: write the client settings (JSON) there
  diff <config.pbtxt> --url HOST:PORT [--model NAME]
                           compare with the config the server runs; exit 1 when
                           they differ
  apply <config.pbtxt> --url HOST:PORT [--model NAME] [--force]
                           lint, load with the config as an override, read
                           back, compare
    --protocol grpc|http   diff and apply: the endpoint's protocol (default
                           grpc; http when --url starts with http://)
    --file MODEL_PATH=LOCAL_PATH
                           also send a model file (repeatable; e.g.
                           1/model.py=./model.py); needed for a model that is
                           not in the server's repository
    --timeout-ms N         per server call (default 30000)
`;

/**
 * `infergate model-config …`: `argv` is what follows `model-config`. Returns the exit code: 0 clean,
 * 1 findings (lint errors, a diff, a failed apply), 2 the command could not run (usage, unreadable
 * or invalid file, server unreachable).
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'lint':
        return await lintCommand(rest, io);
      case 'generate':
        return await generateCommand(rest, io);
      case 'diff':
        return await diffCommand(rest, io);
      case 'apply':
        return await applyCommand(rest, io);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.stdout(USAGE);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        io.stderr(`infergate model-config: unknown command '${command}'\n\n${USAGE}`);
        return EXIT.usage;
    }
  } catch (error) {
    const message = error instanceof InfergateError || error instanceof Error ? error.message : String(error);
    io.stderr(`infergate model-config ${command}: ${message}\n`);
    return EXIT.usage;
  }
}

async function lintCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'latency-budget-ms': { type: 'string' },
      gpus: { type: 'string' },
      'max-instances-per-gpu': { type: 'string' },
      'streaming-client': { type: 'boolean' },
      'no-streaming-client': { type: 'boolean' },
      disable: { type: 'string' },
      strict: { type: 'boolean', default: false },
      format: { type: 'string', default: 'text' },
    },
  });
  if (positionals.length === 0) throw new Error('name at least one config.pbtxt');
  if (values.format !== 'text' && values.format !== 'json') throw new Error(`--format must be text or json`);
  const options = {
    ...(values['latency-budget-ms'] === undefined
      ? {}
      : { latencyBudgetMs: numberFlag('--latency-budget-ms', values['latency-budget-ms']) }),
    ...(values.gpus === undefined ? {} : { gpus: numberFlag('--gpus', values.gpus) }),
    ...(values['max-instances-per-gpu'] === undefined
      ? {}
      : { maxInstancesPerGpu: numberFlag('--max-instances-per-gpu', values['max-instances-per-gpu']) }),
    ...(values['streaming-client'] === true ? { streamingClient: true } : {}),
    ...(values['no-streaming-client'] === true ? { streamingClient: false } : {}),
    disable: values.disable === undefined ? [] : values.disable.split(',').filter((id) => id !== ''),
  };
  let failed = false;
  const report: { file: string; findings: ReturnType<typeof lintModelConfig> }[] = [];
  for (const file of positionals) {
    const findings = lintModelConfig(parseModelConfig(await readFile(file, 'utf8'), file), options);
    report.push({ file, findings });
    if (findings.some((finding) => finding.severity === 'error' || values.strict === true)) failed = true;
  }
  if (values.format === 'json') {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    for (const { file, findings } of report) {
      for (const finding of findings) io.stdout(`${formatFinding(finding, file)}\n`);
      const errors = findings.filter((finding) => finding.severity === 'error').length;
      io.stdout(`${file}: ${errors} error(s), ${findings.length - errors} warning(s)\n`);
    }
  }
  return failed ? EXIT.findings : EXIT.ok;
}

async function generateCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { out: { type: 'string' }, 'client-out': { type: 'string' } },
  });
  const [file] = positionals;
  if (file === undefined || positionals.length > 1) throw new Error('name one spec.json');
  let spec: unknown;
  try {
    spec = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const isPreset = typeof spec === 'object' && spec !== null && 'tenants' in spec;
  let text: string;
  if (isPreset) {
    const preset = createMultiTenantPreset(spec as Parameters<typeof createMultiTenantPreset>[0]);
    text = printModelConfig(preset.server);
    const clientJson = `${JSON.stringify(preset.client, null, 2)}\n`;
    if (values['client-out'] === undefined) io.stderr(`client settings:\n${clientJson}`);
    else await writeFile(values['client-out'], clientJson);
  } else {
    if (values['client-out'] !== undefined)
      throw new Error('--client-out needs a multi-tenant spec (with "tenants")');
    text = printModelConfig(buildModelConfig(spec as Parameters<typeof buildModelConfig>[0]));
  }
  if (values.out === undefined) io.stdout(text);
  else await writeFile(values.out, text);
  return EXIT.ok;
}
