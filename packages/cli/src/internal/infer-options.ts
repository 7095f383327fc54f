import type { InferOptions, ParameterValue } from '@infergate/core';
import {
  CONNECTION_HELP,
  CONNECTION_OPTIONS,
  parseCommandLine,
  positionals,
  usageError,
} from './command-line.js';
import { INPUT_HELP, parseInputSpec } from './input-spec.js';

/** Options shared by `infer` and `stream`. */
export const INFER_OPTIONS = {
  input: { type: 'string', short: 'i', multiple: true },
  output: { type: 'string', short: 'o', multiple: true },
  'output-dir': { type: 'string' },
  parameter: { type: 'string', short: 'p', multiple: true },
  'model-version': { type: 'string' },
} as const;

export const INFER_HELP = `${INPUT_HELP}

Request options:
  -o, --output NAME       Ask for this output only (repeatable).
  -p, --parameter K=V     A request parameter; V is read as a number or
                          true/false when it looks like one.
  --model-version V       A version other than the latest.
  --output-dir DIR        Also write each output as DIR/NAME.npy
                          (stream: DIR/NAME.N.npy for response N).`;

/** The help of `infer` and `stream`: the command's own text, then the request and connection options. */
export function inferUsage(head: string): string {
  return `${head}\n\n${INFER_HELP}\n\n${CONNECTION_HELP}`;
}

/** The command line of `infer` and `stream`: connection and request options, and the MODEL. */
export function parseInferCommandLine(argv: string[]) {
  const { values, positionals: rest } = parseCommandLine(argv, { ...CONNECTION_OPTIONS, ...INFER_OPTIONS });
  const [model = ''] = positionals(rest, ['MODEL']);
  return { values, model };
}

function parameterValue(text: string): string | number | boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  const number = Number(text);
  return text.trim() !== '' && Number.isFinite(number) ? number : text;
}

interface InferValues {
  input?: string[] | undefined;
  output?: string[] | undefined;
  parameter?: string[] | undefined;
  'model-version'?: string | undefined;
}

/** The inputs and request options of an `infer`/`stream` command line. */
export async function inferRequestOf(values: InferValues, signal: AbortSignal | undefined) {
  const specs = values.input ?? [];
  if (specs.length === 0) throw usageError('at least one --input NAME:DTYPE:SHAPE:VALUES is required');
  const inputs = await Promise.all(specs.map(parseInputSpec));
  const parameters: Record<string, ParameterValue> = {};
  for (const pair of values.parameter ?? []) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw usageError(`--parameter '${pair}' must be KEY=VALUE`);
    parameters[pair.slice(0, equals)] = parameterValue(pair.slice(equals + 1));
  }
  const options: InferOptions = {
    ...(values.output !== undefined ? { outputs: values.output } : {}),
    ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
    ...(values['model-version'] !== undefined ? { modelVersion: values['model-version'] } : {}),
    ...(signal ? { signal } : {}),
  };
  return { inputs, options };
}
