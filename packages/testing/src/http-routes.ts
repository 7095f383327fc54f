import { type MessageInitShape, toJson } from '@bufbuild/protobuf';
import type { UnaryMethodKey } from './handler-table.js';
import { numbersFromProtoJson } from './internal/http-json.js';
import { GRPCInferenceService, ModelConfigSchema } from './internal/proto.js';
import { invalidArgument } from './rpc-error.js';

// KServe v2 / Triton HTTP management endpoints, each mapped onto the gRPC handler it mirrors: the
// route says which handler, how to build its request from the path and JSON body, and how to
// write its answer as Triton's HTTP JSON. Inference and generate are in http-listener.ts.

type Json = Record<string, unknown>;
type Methods = typeof GRPCInferenceService.method;
type Input<K extends UnaryMethodKey> = MessageInitShape<Methods[K]['input']>;

export interface RouteMatch {
  key: UnaryMethodKey;
  request: Input<UnaryMethodKey>;
  /** The model the call names (recorded calls, cancellation counters). */
  model?: string;
  /** Writes the handler's answer; `undefined` → 200 with an empty body. */
  answer(response: never): { status: number; json?: unknown };
}

const ok = () => ({ status: 200 });
const probe = (ready: boolean) => ({ status: ready ? 200 : 400 });
const decode = (part: string | undefined) => (part === undefined ? '' : decodeURIComponent(part));

function object(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function traceRequest(body: Json, model: string): Input<'traceSetting'> {
  const settings: Record<string, { value: string[] }> = {};
  for (const [key, value] of Object.entries(body)) {
    if (value === null) settings[key] = { value: [] };
    else if (Array.isArray(value)) settings[key] = { value: value.map(String) };
    else settings[key] = { value: [String(value)] };
  }
  return { settings, modelName: model };
}

function traceJson(response: { settings: Record<string, { value: string[] }> }): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(response.settings)) {
    out[key] = key === 'trace_level' || value.value.length !== 1 ? [...value.value] : value.value[0];
  }
  return out;
}

function logRequest(body: Json): Input<'logSettings'> {
  const settings: Record<
    string,
    {
      parameterChoice:
        | { case: 'boolParam'; value: boolean }
        | { case: 'uint32Param'; value: number }
        | { case: 'stringParam'; value: string };
    }
  > = {};
  for (const [key, value] of Object.entries(body)) {
    if (typeof value === 'boolean') settings[key] = { parameterChoice: { case: 'boolParam', value } };
    else if (typeof value === 'number') settings[key] = { parameterChoice: { case: 'uint32Param', value } };
    else if (typeof value === 'string') settings[key] = { parameterChoice: { case: 'stringParam', value } };
    else throw invalidArgument(`log setting '${key}' must be a bool, number or string`);
  }
  return { settings };
}

function loadParameters(body: Json) {
  const parameters: Record<
    string,
    {
      parameterChoice:
        | { case: 'stringParam'; value: string }
        | { case: 'bytesParam'; value: Uint8Array }
        | { case: 'boolParam'; value: boolean };
    }
  > = {};
  for (const [key, value] of Object.entries(object(body.parameters))) {
    if (key.startsWith('file:') && typeof value === 'string') {
      parameters[key] = {
        parameterChoice: { case: 'bytesParam', value: Uint8Array.from(atob(value), (c) => c.charCodeAt(0)) },
      };
    } else if (typeof value === 'string')
      parameters[key] = { parameterChoice: { case: 'stringParam', value } };
    else if (typeof value === 'boolean') parameters[key] = { parameterChoice: { case: 'boolParam', value } };
  }
  return parameters;
}

const MODEL = '/v2/models/([^/]+)(?:/versions/([^/]+))?';
const REPOSITORY = '/v2/repository(?:/([^/]+))?';
const REGION = '(?:/region/([^/]+))?';

type Builder = (parts: (string | undefined)[], body: Json) => RouteMatch;

/** [method, pattern, builder]; the first match wins, so fixed paths come before model paths. */
const routes: ReadonlyArray<readonly ['GET' | 'POST', RegExp, Builder]> = [
  [
    'GET',
    /^\/v2\/health\/live$/,
    () => ({ key: 'serverLive', request: {}, answer: (r: { live: boolean }) => probe(r.live) }),
  ],
  [
    'GET',
    /^\/v2\/health\/ready$/,
    () => ({ key: 'serverReady', request: {}, answer: (r: { ready: boolean }) => probe(r.ready) }),
  ],
  [
    'GET',
    /^\/v2\/?$/,
    () => ({
      key: 'serverMetadata',
      request: {},
      answer: (r: Json) => ({
        status: 200,
        json: { name: r.name, version: r.version, extensions: r.extensions },
      }),
    }),
  ],
  [
    'GET',
    /^\/v2\/models\/stats$/,
    () => ({ key: 'modelStatistics', request: { name: '', version: '' }, answer: statsAnswer }),
  ],
  [
    'GET',
    new RegExp(`^${MODEL}/ready$`),
    ([m, v]) => ({
      key: 'modelReady',
      model: decode(m),
      request: { name: decode(m), version: decode(v) },
      answer: (r: { ready: boolean }) => probe(r.ready),
    }),
  ],
  [
    'GET',
    new RegExp(`^${MODEL}/config$`),
    ([m, v]) => ({
      key: 'modelConfig',
      model: decode(m),
      request: { name: decode(m), version: decode(v) },
      answer: (r: { config: Parameters<typeof toJson<typeof ModelConfigSchema>>[1] }) => ({
        status: 200,
        json: numbersFromProtoJson(toJson(ModelConfigSchema, r.config, { useProtoFieldName: true })),
      }),
    }),
  ],
  [
    'GET',
    new RegExp(`^${MODEL}/stats$`),
    ([m, v]) => ({
      key: 'modelStatistics',
      model: decode(m),
      request: { name: decode(m), version: decode(v) },
      answer: statsAnswer,
    }),
  ],
  [
    'GET',
    /^\/v2\/models\/([^/]+)\/trace\/setting$/,
    ([m]) => ({
      key: 'traceSetting',
      model: decode(m),
      request: traceRequest({}, decode(m)),
      answer: (r: never) => ({ status: 200, json: traceJson(r) }),
    }),
  ],
  [
    'POST',
    /^\/v2\/models\/([^/]+)\/trace\/setting$/,
    ([m], body) => ({
      key: 'traceSetting',
      model: decode(m),
      request: traceRequest(body, decode(m)),
      answer: (r: never) => ({ status: 200, json: traceJson(r) }),
    }),
  ],
  [
    'GET',
    new RegExp(`^${MODEL}$`),
    ([m, v]) => ({
      key: 'modelMetadata',
      model: decode(m),
      request: { name: decode(m), version: decode(v) },
      answer: (r: {
        name: string;
        versions: string[];
        platform: string;
        inputs: { name: string; datatype: string; shape: bigint[] }[];
        outputs: { name: string; datatype: string; shape: bigint[] }[];
      }) => {
        const tensor = (t: { name: string; datatype: string; shape: bigint[] }) => ({
          name: t.name,
          datatype: t.datatype,
          shape: t.shape.map(Number),
        });
        return {
          status: 200,
          json: {
            name: r.name,
            versions: r.versions,
            platform: r.platform,
            inputs: r.inputs.map(tensor),
            outputs: r.outputs.map(tensor),
          },
        };
      },
    }),
  ],
  [
    'POST',
    new RegExp(`^${REPOSITORY}/index$`),
    ([repository], body) => ({
      key: 'repositoryIndex',
      request: { repositoryName: decode(repository), ready: body.ready === true },
      answer: (r: { models: { name: string; version: string; state: string; reason: string }[] }) => ({
        status: 200,
        json: r.models.map(({ name, version, state, reason }) => ({
          name,
          ...(version ? { version } : {}),
          ...(state ? { state } : {}),
          ...(reason ? { reason } : {}),
        })),
      }),
    }),
  ],
  [
    'POST',
    new RegExp(`^${REPOSITORY}/models/([^/]+)/load$`),
    ([repository, m], body) => ({
      key: 'repositoryModelLoad',
      model: decode(m),
      request: { repositoryName: decode(repository), modelName: decode(m), parameters: loadParameters(body) },
      answer: ok,
    }),
  ],
  [
    'POST',
    new RegExp(`^${REPOSITORY}/models/([^/]+)/unload$`),
    ([repository, m], body) => ({
      key: 'repositoryModelUnload',
      model: decode(m),
      request: { repositoryName: decode(repository), modelName: decode(m), parameters: loadParameters(body) },
      answer: ok,
    }),
  ],
  [
    'GET',
    /^\/v2\/trace\/setting$/,
    () => ({
      key: 'traceSetting',
      request: traceRequest({}, ''),
      answer: (r: never) => ({ status: 200, json: traceJson(r) }),
    }),
  ],
  [
    'POST',
    /^\/v2\/trace\/setting$/,
    (_, body) => ({
      key: 'traceSetting',
      request: traceRequest(body, ''),
      answer: (r: never) => ({ status: 200, json: traceJson(r) }),
    }),
  ],
  ['GET', /^\/v2\/logging$/, () => ({ key: 'logSettings', request: logRequest({}), answer: logAnswer })],
  [
    'POST',
    /^\/v2\/logging$/,
    (_, body) => ({ key: 'logSettings', request: logRequest(body), answer: logAnswer }),
  ],
  [
    'GET',
    new RegExp(`^/v2/systemsharedmemory${REGION}/status$`),
    ([n]) => ({
      key: 'systemSharedMemoryStatus',
      request: { name: decode(n) },
      answer: (r: {
        regions: Record<string, { name: string; key: string; offset: bigint; byteSize: bigint }>;
      }) => ({
        status: 200,
        json: Object.values(r.regions).map((region) => ({
          name: region.name,
          key: region.key,
          offset: Number(region.offset),
          byte_size: Number(region.byteSize),
        })),
      }),
    }),
  ],
  [
    'POST',
    /^\/v2\/systemsharedmemory\/region\/([^/]+)\/register$/,
    ([n], body) => ({
      key: 'systemSharedMemoryRegister',
      request: {
        name: decode(n),
        key: String(body.key ?? ''),
        offset: BigInt(Number(body.offset ?? 0)),
        byteSize: BigInt(Number(body.byte_size ?? 0)),
      },
      answer: ok,
    }),
  ],
  [
    'POST',
    new RegExp(`^/v2/systemsharedmemory${REGION}/unregister$`),
    ([n]) => ({ key: 'systemSharedMemoryUnregister', request: { name: decode(n) }, answer: ok }),
  ],
  [
    'GET',
    new RegExp(`^/v2/cudasharedmemory${REGION}/status$`),
    ([n]) => ({
      key: 'cudaSharedMemoryStatus',
      request: { name: decode(n) },
      answer: (r: { regions: Record<string, { name: string; deviceId: bigint; byteSize: bigint }> }) => ({
        status: 200,
        json: Object.values(r.regions).map((region) => ({
          name: region.name,
          device_id: Number(region.deviceId),
          byte_size: Number(region.byteSize),
        })),
      }),
    }),
  ],
  [
    'POST',
    /^\/v2\/cudasharedmemory\/region\/([^/]+)\/register$/,
    ([n], body) => ({
      key: 'cudaSharedMemoryRegister',
      request: {
        name: decode(n),
        rawHandle: Uint8Array.from(atob(String(object(body.raw_handle).b64 ?? '')), (c) => c.charCodeAt(0)),
        deviceId: BigInt(Number(body.device_id ?? 0)),
        byteSize: BigInt(Number(body.byte_size ?? 0)),
      },
      answer: ok,
    }),
  ],
  [
    'POST',
    new RegExp(`^/v2/cudasharedmemory${REGION}/unregister$`),
    ([n]) => ({ key: 'cudaSharedMemoryUnregister', request: { name: decode(n) }, answer: ok }),
  ],
];

function statsAnswer(response: never) {
  const json = numbersFromProtoJson(
    toJson(GRPCInferenceService.method.modelStatistics.output, response, { useProtoFieldName: true }),
  );
  return { status: 200, json: { model_stats: object(json).model_stats ?? [] } };
}

function logAnswer(response: {
  settings: Record<string, { parameterChoice: { case?: string; value?: unknown } }>;
}) {
  const out: Json = {};
  for (const [key, value] of Object.entries(response.settings)) out[key] = value.parameterChoice.value;
  return { status: 200, json: out };
}

/** The management route for a method and path, if there is one. */
export function matchRoute(method: string, path: string, body: Json): RouteMatch | undefined {
  for (const [verb, pattern, build] of routes) {
    if (verb !== method) continue;
    const match = pattern.exec(path);
    if (match) return build(match.slice(1), body);
  }
  return undefined;
}
