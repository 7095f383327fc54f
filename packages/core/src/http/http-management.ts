import type { ModelMetadata, ModelOptions, ServerMetadata, TensorMetadata } from '../client.js';
import { ErrorCode, InfergateError } from '../errors.js';
import { Extension } from '../extension.js';
import type {
  LoadModelOptions,
  RepositoryIndexOptions,
  RepositoryModel,
  UnloadModelOptions,
} from '../repository.js';
import type { LogSettings, TraceSettings, TraceSettingsOptions, TraceSettingsUpdate } from '../settings.js';
import type { ModelStatistics } from '../statistics.js';
import type { CallOptions } from '../transport.js';
import { fromStatisticsJson } from './http-statistics.js';
import { type HttpExchange, type HttpTransport, modelPath } from './http-transport.js';
import { base64 } from './internal/base64.js';
import { withHttpExtension } from './internal/http-extension.js';

// The management endpoints of KServe v2 and Triton's HTTP extensions, returning the same shapes as
// the gRPC client (model config excepted: Triton's JSON form, as tritonclient.http returns it).

type Json = Record<string, unknown>;

/** A refused credential says nothing about health: it is raised, as the gRPC client raises it. */
const AUTH_FAILURES: ReadonlySet<string> = new Set([ErrorCode.Unauthenticated, ErrorCode.PermissionDenied]);

/**
 * Health endpoints answer with a status only: an HTTP answer is a boolean (Triton says "not ready"
 * with 400), no answer or a refused credential (401, 403) an error.
 */
async function probe(http: HttpTransport, exchange: HttpExchange, options: CallOptions): Promise<boolean> {
  try {
    const open = await http.open(exchange, options);
    await open.response.body?.cancel().catch(() => {});
    open.done();
    return true;
  } catch (error) {
    if (error instanceof InfergateError && error.httpStatus !== undefined && !AUTH_FAILURES.has(error.code))
      return false;
    throw error;
  }
}

export const serverLive = (http: HttpTransport, options: CallOptions = {}) =>
  probe(http, { method: 'GET', path: '/v2/health/live', what: 'serverLive()' }, options);

export const serverReady = (http: HttpTransport, options: CallOptions = {}) =>
  probe(http, { method: 'GET', path: '/v2/health/ready', what: 'serverReady()' }, options);

export function modelReady(http: HttpTransport, model: string, options: ModelOptions = {}): Promise<boolean> {
  const path = `${modelPath(model, options.version)}/ready`;
  return probe(http, { method: 'GET', path, what: 'modelReady()', context: { model } }, options);
}

export async function serverMetadata(
  http: HttpTransport,
  options: CallOptions = {},
): Promise<ServerMetadata> {
  const json = await http.json<Json>({ method: 'GET', path: '/v2', what: 'serverMetadata()' }, options);
  return {
    name: String(json?.name ?? ''),
    version: String(json?.version ?? ''),
    extensions: Array.isArray(json?.extensions) ? json.extensions.map(String) : [],
  };
}

function tensors(value: unknown): TensorMetadata[] {
  return (Array.isArray(value) ? value : []).map((item: Json) => ({
    name: String(item.name),
    datatype: String(item.datatype),
    shape: Array.isArray(item.shape) ? item.shape.map(Number) : [],
  }));
}

export async function modelMetadata(
  http: HttpTransport,
  model: string,
  options: ModelOptions = {},
): Promise<ModelMetadata> {
  const json = await http.json<Json>(
    { method: 'GET', path: modelPath(model, options.version), what: 'modelMetadata()', context: { model } },
    options,
  );
  return {
    name: String(json?.name ?? model),
    versions: Array.isArray(json?.versions) ? json.versions.map(String) : [],
    platform: String(json?.platform ?? ''),
    inputs: tensors(json?.inputs),
    outputs: tensors(json?.outputs),
  };
}

/** The model's configuration in Triton's JSON form (snake_case, as `GET …/config` returns it). */
export function modelConfig(http: HttpTransport, model: string, options: ModelOptions = {}): Promise<Json> {
  const path = `${modelPath(model, options.version)}/config`;
  return withHttpExtension(http, Extension.ModelConfiguration, 'modelConfig()', () =>
    http.json<Json>({ method: 'GET', path, what: 'modelConfig()', context: { model } }, options),
  );
}

export async function modelStatistics(
  http: HttpTransport,
  model = '',
  options: ModelOptions = {},
): Promise<ModelStatistics[]> {
  const path = model === '' ? '/v2/models/stats' : `${modelPath(model, options.version)}/stats`;
  const json = await withHttpExtension(http, Extension.Statistics, 'modelStatistics()', () =>
    http.json<Json>(
      { method: 'GET', path, what: 'modelStatistics()', context: model ? { model } : {} },
      options,
    ),
  );
  return (Array.isArray(json?.model_stats) ? json.model_stats : []).map(fromStatisticsJson);
}

function repositoryPath(name: string | undefined): string {
  return name ? `/v2/repository/${encodeURIComponent(name)}` : '/v2/repository';
}

export async function repositoryIndex(
  http: HttpTransport,
  options: RepositoryIndexOptions = {},
): Promise<RepositoryModel[]> {
  const path = `${repositoryPath(options.repositoryName)}/index`;
  const json = await withHttpExtension(http, Extension.ModelRepository, 'repositoryIndex()', () =>
    http.json<unknown>(
      { method: 'POST', path, json: { ready: options.readyOnly === true }, what: 'repositoryIndex()' },
      options,
    ),
  );
  return (Array.isArray(json) ? json : []).map((item: Json) => ({
    name: String(item.name ?? ''),
    version: String(item.version ?? ''),
    state: String(item.state ?? ''),
    reason: String(item.reason ?? ''),
  }));
}

export async function loadModel(
  http: HttpTransport,
  model: string,
  options: LoadModelOptions = {},
): Promise<void> {
  const parameters: Json = {};
  if (options.config !== undefined) {
    parameters.config = typeof options.config === 'string' ? options.config : JSON.stringify(options.config);
  }
  const files = Object.entries(options.files ?? {});
  for (const [path, content] of files) {
    if (path === '' || path.startsWith('/') || path.split('/').includes('..')) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `loadModel: file path '${path}' must be relative to the model`,
      );
    }
    parameters[`file:${path}`] = base64(
      typeof content === 'string' ? new TextEncoder().encode(content) : content,
    );
  }
  if (files.length > 0 && options.config === undefined) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      'loadModel: file overrides need a config override too',
    );
  }
  const path = `${repositoryPath(options.repositoryName)}/models/${encodeURIComponent(model)}/load`;
  await withHttpExtension(http, Extension.ModelRepository, 'loadModel()', () =>
    http.exchange(
      { method: 'POST', path, json: { parameters }, what: 'loadModel()', context: { model } },
      options,
    ),
  );
}

export async function unloadModel(
  http: HttpTransport,
  model: string,
  options: UnloadModelOptions = {},
): Promise<void> {
  const path = `${repositoryPath(options.repositoryName)}/models/${encodeURIComponent(model)}/unload`;
  const json = { parameters: { unload_dependents: options.unloadDependents === true } };
  await withHttpExtension(http, Extension.ModelRepository, 'unloadModel()', () =>
    http.exchange({ method: 'POST', path, json, what: 'unloadModel()', context: { model } }, options),
  );
}

function traceJson(settings: TraceSettingsUpdate): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(settings)) {
    if (value === null) out[key] = null;
    else if (typeof value === 'string' || typeof value === 'number') out[key] = String(value);
    else if (Array.isArray(value)) out[key] = value.map(String);
    else
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `trace setting '${key}' must be a string, list or null`,
      );
  }
  return out;
}

export async function traceSettings(
  http: HttpTransport,
  update: TraceSettingsUpdate | undefined,
  options: TraceSettingsOptions = {},
): Promise<TraceSettings> {
  const path = options.model ? `${modelPath(options.model)}/trace/setting` : '/v2/trace/setting';
  const operation = update === undefined ? 'traceSettings()' : 'updateTraceSettings()';
  const exchange: HttpExchange =
    update === undefined
      ? { method: 'GET', path, what: operation }
      : { method: 'POST', path, json: traceJson(update), what: operation };
  const json = await withHttpExtension(http, Extension.Trace, operation, () =>
    http.json<Json>(exchange, options),
  );
  const out: TraceSettings = {};
  for (const [key, value] of Object.entries(json ?? {}))
    out[key] = Array.isArray(value) ? value.map(String) : [String(value)];
  return out;
}

export async function logSettings(
  http: HttpTransport,
  update: LogSettings | undefined,
  options: CallOptions = {},
): Promise<LogSettings> {
  const operation = update === undefined ? 'logSettings()' : 'updateLogSettings()';
  const exchange: HttpExchange =
    update === undefined
      ? { method: 'GET', path: '/v2/logging', what: operation }
      : { method: 'POST', path: '/v2/logging', json: update, what: operation };
  const json = await withHttpExtension(http, Extension.Logging, operation, () =>
    http.json<Json>(exchange, options),
  );
  const out: LogSettings = {};
  for (const [key, value] of Object.entries(json ?? {})) {
    if (typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string')
      out[key] = value;
  }
  return out;
}
