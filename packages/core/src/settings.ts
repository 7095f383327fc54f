import { create } from '@bufbuild/protobuf';
import { ErrorCode, InfergateError } from './errors.js';
import { Extension, withExtension } from './extension.js';
import { GRPCInferenceService, type LogSettingsRequest_SettingValue } from './gen/grpc_service_pb.js';
import type { GrpcTransport } from './grpc-transport.js';
import type { CallOptions } from './transport.js';

const service = GRPCInferenceService.method;

/** Triton's trace settings: each a list of strings (trace_level, trace_rate, trace_count, log_frequency, …). */
export type TraceSettings = Record<string, string[]>;
/** A trace update: a value or list sets it, `null` resets it to the server's (or global) default. */
export type TraceSettingsUpdate = Record<string, string | number | readonly string[] | null>;

export interface TraceSettingsOptions extends CallOptions {
  /** Settings of one model rather than the global ones. */
  model?: string;
}

async function traceCall(
  grpc: GrpcTransport,
  settings: TraceSettingsUpdate,
  options: TraceSettingsOptions,
  operation: string,
): Promise<TraceSettings> {
  const wire: Record<string, { value: string[] }> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (value === null) wire[key] = { value: [] };
    else if (typeof value === 'string' || typeof value === 'number') wire[key] = { value: [String(value)] };
    else if (Array.isArray(value)) wire[key] = { value: value.map(String) };
    else
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `trace setting '${key}' must be a string, list or null`,
      );
  }
  const request = create(service.traceSetting.input, { settings: wire, modelName: options.model ?? '' });
  const response = await withExtension(Extension.Trace, operation, grpc.address, () =>
    grpc.unary(service.traceSetting, request, options, options.model ? { model: options.model } : {}),
  );
  const out: TraceSettings = {};
  for (const [key, value] of Object.entries(response.settings)) out[key] = [...value.value];
  return out;
}

export function getTraceSettings(
  grpc: GrpcTransport,
  options: TraceSettingsOptions = {},
): Promise<TraceSettings> {
  return traceCall(grpc, {}, options, 'traceSettings()');
}

export function updateTraceSettings(
  grpc: GrpcTransport,
  settings: TraceSettingsUpdate,
  options: TraceSettingsOptions = {},
): Promise<TraceSettings> {
  return traceCall(grpc, settings, options, 'updateTraceSettings()');
}

/** Triton's log settings: log_info, log_warning, log_error (bool), log_verbose_level (uint32), log_format, log_file. */
export type LogSettings = Record<string, boolean | number | string>;

function toLogValue(
  key: string,
  value: boolean | number | string,
): LogSettingsRequest_SettingValue['parameterChoice'] {
  if (typeof value === 'boolean') return { case: 'boolParam', value };
  if (typeof value === 'string') return { case: 'stringParam', value };
  if (Number.isInteger(value) && value >= 0 && value <= 0xffffffff) return { case: 'uint32Param', value };
  throw new InfergateError(
    ErrorCode.InvalidArgument,
    `log setting '${key}' must be a boolean, string or uint32`,
  );
}

async function logCall(grpc: GrpcTransport, settings: LogSettings, options: CallOptions, operation: string) {
  const wire: Record<string, { parameterChoice: LogSettingsRequest_SettingValue['parameterChoice'] }> = {};
  for (const [key, value] of Object.entries(settings))
    wire[key] = { parameterChoice: toLogValue(key, value) };
  const request = create(service.logSettings.input, { settings: wire });
  const response = await withExtension(Extension.Logging, operation, grpc.address, () =>
    grpc.unary(service.logSettings, request, options),
  );
  const out: LogSettings = {};
  for (const [key, value] of Object.entries(response.settings)) {
    if (value.parameterChoice.case !== undefined) out[key] = value.parameterChoice.value;
  }
  return out;
}

export function getLogSettings(grpc: GrpcTransport, options: CallOptions = {}): Promise<LogSettings> {
  return logCall(grpc, {}, options, 'logSettings()');
}

export function updateLogSettings(grpc: GrpcTransport, settings: LogSettings, options: CallOptions = {}) {
  return logCall(grpc, settings, options, 'updateLogSettings()');
}
