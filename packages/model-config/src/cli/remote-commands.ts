import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createTritonClient, type LoadModelOptions } from '@infergate/core';
import { createHttpClient } from '@infergate/core/http';
import type { ModelConfig } from '@infergate/core/proto';
import { diffModelConfig } from '../diff-model-config.js';
import { formatFinding, lintModelConfig } from '../lint-model-config.js';
import { modelConfigFromJson, modelConfigToJson, parseModelConfig } from '../model-config-text.js';
import { type CliIo, EXIT } from './cli-io.js';
import { numberFlag } from './number-flag.js';

const remoteOptions = {
  url: { type: 'string' },
  protocol: { type: 'string' },
  model: { type: 'string' },
  'timeout-ms': { type: 'string', default: '30000' },
  force: { type: 'boolean', default: false },
  file: { type: 'string', multiple: true },
} as const;

/** The two calls diff and apply make, over gRPC or HTTP. */
interface ConfigServer {
  modelConfig(model: string, call: CallBound): Promise<ModelConfig>;
  loadModel(model: string, options: LoadModelOptions): Promise<void>;
  close(): Promise<void>;
}

type CallBound = { timeoutMs: number; signal?: AbortSignal };

const HTTP_URL = /^https?:\/\//i;

/**
 * `--protocol grpc|http` (http when the URL starts with http:// or https://). Over HTTP the live
 * config arrives in Triton's JSON form and is read back into a ModelConfig before the diff.
 */
function configServer(url: string, protocol: string | undefined): ConfigServer {
  const chosen = protocol ?? (HTTP_URL.test(url) ? 'http' : 'grpc');
  if (chosen === 'grpc') {
    if (HTTP_URL.test(url)) throw new Error(`--url ${url} is an HTTP URL: use --protocol http`);
    const client = createTritonClient({ url, enableGpuIpc: false });
    return {
      modelConfig: (model, call) => client.modelConfig(model, call),
      loadModel: (model, options) => client.loadModel(model, options),
      close: () => client.close(),
    };
  }
  if (chosen !== 'http') throw new Error(`--protocol must be grpc or http, got '${chosen}'`);
  const client = createHttpClient({ url: HTTP_URL.test(url) ? url : `http://${url}` });
  return {
    modelConfig: async (model, call) =>
      modelConfigFromJson(await client.modelConfig(model, call), `the server's config of '${model}'`),
    loadModel: (model, options) => client.loadModel(model, options),
    close: () => client.close(),
  };
}

interface Remote {
  file: string;
  local: ModelConfig;
  model: string;
  client: ConfigServer;
  call: CallBound;
  force: boolean;
  /** File overrides for `apply`, by path inside the model directory. */
  files: Record<string, Uint8Array>;
}

async function openRemote(argv: string[], io: CliIo): Promise<Remote> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: remoteOptions });
  const [file] = positionals;
  if (file === undefined || positionals.length > 1) throw new Error('name one config.pbtxt');
  if (values.url === undefined)
    throw new Error('--url HOST:PORT is required (the Triton endpoint: gRPC, or HTTP with --protocol http)');
  const local = parseModelConfig(await readFile(file, 'utf8'), file);
  const model = values.model ?? local.name;
  if (model === '') throw new Error(`${file} has no name; pass --model NAME`);
  const timeoutMs = numberFlag('--timeout-ms', values['timeout-ms']);
  const files: Record<string, Uint8Array> = {};
  for (const pair of values.file ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0 || at === pair.length - 1)
      throw new Error(`--file takes MODEL_PATH=LOCAL_PATH (e.g. 1/model.py=./model.py), got '${pair}'`);
    files[pair.slice(0, at)] = await readFile(pair.slice(at + 1));
  }
  return {
    file,
    local,
    model,
    client: configServer(values.url, values.protocol),
    call: io.signal === undefined ? { timeoutMs } : { timeoutMs, signal: io.signal },
    force: values.force,
    files,
  };
}

function printDifferences(remote: Remote, live: ModelConfig, io: CliIo): number {
  const differences = diffModelConfig(remote.local, live);
  for (const difference of differences) {
    io.stdout(
      `~ ${difference.path}: ${remote.file} has ${difference.expected}, the server has ${difference.actual}\n`,
    );
  }
  io.stdout(
    differences.length === 0
      ? `${remote.file}: the server runs '${remote.model}' as configured\n`
      : `${remote.file}: ${differences.length} difference(s) from the server's '${remote.model}'\n`,
  );
  return differences.length === 0 ? EXIT.ok : EXIT.findings;
}

/** `diff`: the fields the local file sets that the live config has otherwise. */
export async function diffCommand(argv: string[], io: CliIo): Promise<number> {
  const remote = await openRemote(argv, io);
  try {
    const live = await remote.client.modelConfig(remote.model, remote.call);
    return printDifferences(remote, live, io);
  } finally {
    await remote.client.close();
  }
}

/** `apply`: lint (errors stop it unless --force), load with the config override, read back, diff. */
export async function applyCommand(argv: string[], io: CliIo): Promise<number> {
  const remote = await openRemote(argv, io);
  try {
    const errors = lintModelConfig(remote.local).filter((finding) => finding.severity === 'error');
    for (const finding of errors) io.stderr(`${formatFinding(finding, remote.file)}\n`);
    if (errors.length > 0 && !remote.force) {
      io.stderr(`${remote.file}: not applied (${errors.length} lint error(s)); fix them or pass --force\n`);
      return EXIT.findings;
    }
    await remote.client.loadModel(remote.model, {
      ...remote.call,
      config: modelConfigToJson(remote.local),
      ...(Object.keys(remote.files).length === 0 ? {} : { files: remote.files }),
    });
    io.stdout(`loaded '${remote.model}' with ${remote.file} as its config\n`);
    const live = await remote.client.modelConfig(remote.model, remote.call);
    return printDifferences(remote, live, io);
  } finally {
    await remote.client.close();
  }
}
