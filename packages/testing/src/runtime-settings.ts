import { status } from './internal/grpc-status.js';
import type { LogSettingsRequest_SettingValue } from './internal/proto.js';
import { invalidArgument, RpcError } from './rpc-error.js';

/** Trace settings as TraceSetting reports them: name → values. */
export type ServerTraceSettings = Record<string, string[]>;

/** Triton's defaults (tritonserver without --trace-config flags). */
export const DEFAULT_TRACE_SETTINGS: Readonly<ServerTraceSettings> = {
  trace_level: ['OFF'],
  trace_rate: ['1000'],
  trace_count: ['-1'],
  log_frequency: ['0'],
  trace_file: [''],
  trace_mode: ['triton'],
};

const UPDATABLE = ['trace_level', 'trace_rate', 'trace_count', 'log_frequency'];

function checkTraceValue(name: string, values: readonly string[]): void {
  if (name === 'trace_level') {
    if (values.includes('OFF') && values.length > 1)
      throw invalidArgument("Expect only one trace level 'OFF' is specified");
    return;
  }
  if (values.length > 1) throw invalidArgument(`expect only 1 value for '${name}'`);
  const value = values[0] as string;
  if (!/^-?\d+$/.test(value)) throw invalidArgument(`Unable to parse '${name}', got: ${value}`);
  if (name === 'trace_count' && Number(value) < -1) {
    throw invalidArgument(`Unable to parse '${name}'. Expecting value >= -1, got: ${value}`);
  }
}

/**
 * TraceSetting (triton-inference-server/server grpc_server.cc): global settings plus per-model
 * overrides. An update merges; a setting sent with no values clears it (a model falls back to the
 * global value, the global one to its default). `trace_file` cannot be updated over the network.
 */
export class TraceSettingsStore {
  #global: ServerTraceSettings = structuredClone(DEFAULT_TRACE_SETTINGS) as ServerTraceSettings;
  readonly #models = new Map<string, ServerTraceSettings>();

  get(model = ''): ServerTraceSettings {
    return structuredClone({ ...this.#global, ...(model === '' ? {} : this.#models.get(model)) });
  }

  update(model: string, settings: Readonly<Record<string, readonly string[]>>): ServerTraceSettings {
    if ('trace_file' in settings) {
      throw new RpcError(
        status.UNIMPLEMENTED,
        'trace file location can not be updated through network protocol',
      );
    }
    for (const [name, values] of Object.entries(settings)) {
      if (UPDATABLE.includes(name) && values.length > 0) checkTraceValue(name, values);
    }
    const target = model === '' ? this.#global : (this.#models.get(model) ?? {});
    for (const [name, values] of Object.entries(settings)) {
      if (values.length > 0) target[name] = [...values];
      else if (model === '') target[name] = [...(DEFAULT_TRACE_SETTINGS[name] ?? [])];
      else delete target[name];
    }
    if (model !== '') this.#models.set(model, target);
    return this.get(model);
  }

  reset(): void {
    this.#global = structuredClone(DEFAULT_TRACE_SETTINGS) as ServerTraceSettings;
    this.#models.clear();
  }
}

/** Log settings as LogSettings reports them. */
export interface ServerLogSettings {
  log_file: string;
  log_info: boolean;
  log_warning: boolean;
  log_error: boolean;
  log_verbose_level: number;
  log_format: string;
}

const DEFAULT_LOG_SETTINGS: Readonly<ServerLogSettings> = {
  log_file: '',
  log_info: true,
  log_warning: true,
  log_error: true,
  log_verbose_level: 0,
  log_format: 'default',
};

/** LogSettings: the typed checks and messages of Triton's handler. */
export class LogSettingsStore {
  #settings: ServerLogSettings = { ...DEFAULT_LOG_SETTINGS };

  get(): ServerLogSettings {
    return { ...this.#settings };
  }

  update(settings: Readonly<Record<string, LogSettingsRequest_SettingValue>>): ServerLogSettings {
    if ('log_file' in settings) {
      throw new RpcError(
        status.UNIMPLEMENTED,
        'log file location can not be updated through network protocol',
      );
    }
    const next = { ...this.#settings };
    for (const name of ['log_info', 'log_warning', 'log_error'] as const) {
      const choice = settings[name]?.parameterChoice;
      if (choice === undefined) continue;
      if (choice.case !== 'boolParam') throw invalidArgument(`expect boolean for '${name}'`);
      next[name] = choice.value;
    }
    const verbose = settings.log_verbose_level?.parameterChoice;
    if (verbose !== undefined) {
      if (verbose.case !== 'uint32Param') throw invalidArgument("expect int32 for 'log_verbose_level'");
      next.log_verbose_level = verbose.value;
    }
    const format = settings.log_format?.parameterChoice;
    if (format !== undefined) {
      if (format.case !== 'stringParam') throw invalidArgument("expect string for 'log_format'");
      if (format.value !== 'default' && format.value !== 'ISO8601')
        throw invalidArgument(`invalid argument for log_format, got: ${format.value}`);
      next.log_format = format.value;
    }
    this.#settings = next;
    return this.get();
  }

  reset(): void {
    this.#settings = { ...DEFAULT_LOG_SETTINGS };
  }
}
