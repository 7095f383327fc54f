import type { ModelMetadata, ModelOptions, ServerMetadata, TensorMetadata } from '../client.js';
import { ErrorCode, InfergateError } from '../errors.js';
import { Extension, unsupportedExtension } from '../extension.js';
import type {
  LoadModelOptions,
  RepositoryIndexOptions,
  RepositoryModel,
  UnloadModelOptions,
} from '../repository.js';
import type { LogSettings, TraceSettings, TraceSettingsOptions, TraceSettingsUpdate } from '../settings.js';
import type {
  CudaRegionStatus,
  RegisterCudaRegion,
  RegisterSystemRegion,
  SystemRegionStatus,
} from '../shared-memory-rpc.js';
import type { ModelStatistics } from '../statistics.js';
import type { CallOptions } from '../transport.js';
import { fromStatisticsJson } from './http-statistics.js';
import { type HttpExchange, type HttpTransport, modelPath } from './http-transport.js';

// The management endpoints of KServe v2 and Triton's HTTP extensions, returning the same shapes as
// the gRPC client (model config excepted: Triton's JSON form, as tritonclient.http returns it).

type Json = Record<string, unknown>;

/** A server without the endpoint answers 404/405/501 with a generic text, not a Triton error about a model. */
const MISSING_ROUTE =
  /^(not found|method not allowed|not implemented)( \(|$)|not implement|unknown (route|endpoint)/i;

async function withHttpExtension<T>(
  http: HttpTransport,
  extension: string,
  operation: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (
      error instanceof InfergateError &&
      (error.httpStatus === 404 || error.httpStatus === 405 || error.httpStatus === 501) &&
      MISSING_ROUTE.test(error.rawMessage.trim())
    ) {
      throw unsupportedExtension(extension, operation, http.address, error);
    }
    throw error;
  }
}

/** Health endpoints answer with a status only: any HTTP answer is a boolean, no answer an error. */
async function probe(http: HttpTransport, exchange: HttpExchange, options: CallOptions): Promise<boolean> {
  try {
    const open = await http.open(exchange, options);
    await open.response.body?.cancel().catch(() => {});
    open.done();
    return true;
  } catch (error) {
    if (error instanceof InfergateError && error.httpStatus !== undefined) return false;
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

/** Base64 without Buffer (btoa over a binary string), for file overrides in JSON. */
function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.byteLength; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
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

function regionPath(kind: 'system' | 'cuda', name: string, action: string): string {
  const base = `/v2/${kind}sharedmemory`;
  return name === '' ? `${base}/${action}` : `${base}/region/${encodeURIComponent(name)}/${action}`;
}

function nonNegative(value: number, what: string, allowZero: boolean): number {
  if (!Number.isSafeInteger(value) || value < 0 || (!allowZero && value === 0)) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `${what} must be a ${allowZero ? 'non-negative' : 'positive'} integer`,
    );
  }
  return value;
}

export async function registerSystemSharedMemory(
  http: HttpTransport,
  region: RegisterSystemRegion,
  options: CallOptions = {},
): Promise<void> {
  if (!region.key.startsWith('/'))
    throw new InfergateError(ErrorCode.InvalidArgument, "the shm key must start with '/'");
  const json = {
    key: region.key,
    offset: nonNegative(region.offset ?? 0, 'offset', true),
    byte_size: nonNegative(region.byteSize, 'byteSize', false),
  };
  const path = regionPath('system', region.name, 'register');
  await withHttpExtension(http, Extension.SystemSharedMemory, 'registerSystemSharedMemory()', () =>
    http.exchange({ method: 'POST', path, json, what: 'registerSystemSharedMemory()' }, options),
  );
}

export async function systemSharedMemoryStatus(
  http: HttpTransport,
  name = '',
  options: CallOptions = {},
): Promise<SystemRegionStatus[]> {
  const path = regionPath('system', name, 'status');
  const json = await withHttpExtension(http, Extension.SystemSharedMemory, 'systemSharedMemoryStatus()', () =>
    http.json<unknown>({ method: 'GET', path, what: 'systemSharedMemoryStatus()' }, options),
  );
  return (Array.isArray(json) ? json : []).map((item: Json) => ({
    name: String(item.name ?? ''),
    key: String(item.key ?? ''),
    offset: Number(item.offset ?? 0),
    byteSize: Number(item.byte_size ?? 0),
  }));
}

export async function unregisterSharedMemory(
  http: HttpTransport,
  kind: 'system' | 'cuda',
  name = '',
  options: CallOptions = {},
): Promise<void> {
  const extension = kind === 'system' ? Extension.SystemSharedMemory : Extension.CudaSharedMemory;
  const operation = kind === 'system' ? 'unregisterSystemSharedMemory()' : 'unregisterCudaSharedMemory()';
  await withHttpExtension(http, extension, operation, () =>
    http.exchange({ method: 'POST', path: regionPath(kind, name, 'unregister'), what: operation }, options),
  );
}

export async function registerCudaSharedMemory(
  http: HttpTransport,
  region: RegisterCudaRegion,
  options: CallOptions = {},
): Promise<void> {
  const json = {
    raw_handle: { b64: base64(region.rawHandle) },
    device_id: nonNegative(region.deviceId, 'deviceId', true),
    byte_size: nonNegative(region.byteSize, 'byteSize', false),
  };
  const path = regionPath('cuda', region.name, 'register');
  await withHttpExtension(http, Extension.CudaSharedMemory, 'registerCudaSharedMemory()', () =>
    http.exchange({ method: 'POST', path, json, what: 'registerCudaSharedMemory()' }, options),
  );
}

export async function cudaSharedMemoryStatus(
  http: HttpTransport,
  name = '',
  options: CallOptions = {},
): Promise<CudaRegionStatus[]> {
  const path = regionPath('cuda', name, 'status');
  const json = await withHttpExtension(http, Extension.CudaSharedMemory, 'cudaSharedMemoryStatus()', () =>
    http.json<unknown>({ method: 'GET', path, what: 'cudaSharedMemoryStatus()' }, options),
  );
  return (Array.isArray(json) ? json : []).map((item: Json) => ({
    name: String(item.name ?? ''),
    deviceId: Number(item.device_id ?? 0),
    byteSize: Number(item.byte_size ?? 0),
  }));
}
