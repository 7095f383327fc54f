import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { InferResult, OutputTensor } from '@infergate/core';
import { writeNpy } from '../npy.js';
import { usageError } from './command-line.js';

/** Elements printed per output in text mode; --json and .npy files always hold all of them. */
const TEXT_ELEMENTS = 32;

function values(output: OutputTensor): Array<number | bigint | boolean | string> {
  return output.toArray();
}

/** The result as plain JSON-ready data: every element of every output. */
export function resultJson(result: InferResult): Record<string, unknown> {
  return {
    model: result.model,
    modelVersion: result.modelVersion,
    id: result.id,
    ...(Object.keys(result.parameters).length > 0 ? { parameters: result.parameters } : {}),
    outputs: result.outputs.map((output) => ({
      name: output.name,
      datatype: output.datatype,
      shape: output.shape,
      data: values(output),
    })),
  };
}

function show(value: number | bigint | boolean | string): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** One line per output: `NAME DTYPE [shape] v1 v2 …`, long outputs cut with a count. */
export function resultText(result: InferResult): string {
  return result.outputs
    .map((output) => {
      const all = values(output);
      const shown = all.slice(0, TEXT_ELEMENTS).map(show).join(' ');
      const more = all.length > TEXT_ELEMENTS ? ` … (${all.length - TEXT_ELEMENTS} more, see --json)` : '';
      return `${output.name} ${output.datatype} [${output.shape.join(',')}] ${shown}${more}`;
    })
    .join('\n');
}

/**
 * Writes each output as DIR/NAME.npy (NAME with path separators replaced) when `--output-dir` gave
 * a directory; returns the paths (none without a directory).
 */
export async function writeOutputs(
  result: InferResult,
  directory: string | undefined,
  suffix = '',
): Promise<string[]> {
  if (directory === undefined || directory === '') return [];
  await mkdir(directory, { recursive: true });
  const written: string[] = [];
  for (const output of result.outputs) {
    if (output.datatype === 'BF16')
      throw usageError(`output '${output.name}' is BF16, which .npy cannot hold`);
    const data = output.datatype === 'BYTES' ? (output.data as Buffer[]) : output.raw;
    const path = join(directory, `${output.name.replace(/[/\\]/g, '_')}${suffix}.npy`);
    await writeFile(path, writeNpy({ datatype: output.datatype, shape: [...output.shape], data }));
    written.push(path);
  }
  return written;
}

/** The `files` field of a --json result: the .npy paths written, when there are any. */
export function filesField(written: readonly string[]): { files?: readonly string[] } {
  return written.length > 0 ? { files: written } : {};
}
