import type { DescField, DescMessage, MessageShape } from '@bufbuild/protobuf';
import { ScalarType } from '@bufbuild/protobuf';
import { type ReflectMessage, reflect } from '@bufbuild/protobuf/reflect';
import { type ModelConfig, ModelConfigSchema } from '@infergate/core/proto';

/** One field whose value differs: its path (proto names) and both values as text. */
export interface ConfigDifference {
  path: string;
  expected: string;
  actual: string;
}

/**
 * The fields set in `expected` (a local config.pbtxt) whose value in `actual` (what a server
 * returns) differs. Fields only `actual` sets are not differences: Triton fills in defaults
 * (instance group names, version policy, optimization, …) that a local file rarely spells out.
 */
export function diffModelConfig(expected: ModelConfig, actual: ModelConfig): ConfigDifference[] {
  return diffMessages(ModelConfigSchema, expected, actual);
}

/** The same comparison for any message type. */
export function diffMessages<Desc extends DescMessage>(
  schema: Desc,
  expected: MessageShape<Desc>,
  actual: MessageShape<Desc>,
): ConfigDifference[] {
  const differences: ConfigDifference[] = [];
  compare(reflect(schema, expected), reflect(schema, actual), '', differences);
  return differences;
}

function compare(
  expected: ReflectMessage,
  actual: ReflectMessage,
  prefix: string,
  out: ConfigDifference[],
): void {
  for (const field of expected.fields) {
    if (!expected.isSet(field)) continue;
    const path = `${prefix}${field.name}`;
    if (!actual.isSet(field)) {
      out.push({ path, expected: show(field, expected.get(field)), actual: '(not set)' });
      continue;
    }
    switch (field.fieldKind) {
      case 'scalar':
      case 'enum': {
        const [left, right] = [show(field, expected.get(field)), show(field, actual.get(field))];
        if (left !== right) out.push({ path, expected: left, actual: right });
        break;
      }
      case 'message':
        compare(expected.get(field), actual.get(field), `${path}.`, out);
        break;
      case 'list': {
        const [left, right] = [[...expected.get(field)], [...actual.get(field)]];
        if (field.listKind === 'message') {
          if (left.length !== right.length) {
            out.push({ path, expected: `${left.length} entries`, actual: `${right.length} entries` });
          }
          left.forEach((item, index) => {
            const other = right[index];
            if (other !== undefined)
              compare(item as ReflectMessage, other as ReflectMessage, `${path}[${index}].`, out);
          });
        } else {
          const [a, b] = [show(field, left), show(field, right)];
          if (a !== b) out.push({ path, expected: a, actual: b });
        }
        break;
      }
      case 'map': {
        const other = actual.get(field);
        for (const [key, value] of expected.get(field)) {
          const entryPath = `${path}[${String(key)}]`;
          const theirs = other.get(key);
          if (theirs === undefined)
            out.push({ path: entryPath, expected: show(field, value), actual: '(not set)' });
          else if (field.mapKind === 'message') {
            compare(value as ReflectMessage, theirs as ReflectMessage, `${entryPath}.`, out);
          } else if (show(field, value) !== show(field, theirs)) {
            out.push({ path: entryPath, expected: show(field, value), actual: show(field, theirs) });
          }
        }
        break;
      }
    }
  }
}

function show(field: DescField, value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => show(field, item)).join(', ')}]`;
  if (typeof value === 'object' && value !== null && 'desc' in value) return '{…}';
  if (field.enum !== undefined && typeof value === 'number') {
    return field.enum.values.find((candidate) => candidate.number === value)?.name ?? String(value);
  }
  if (field.scalar === ScalarType.STRING) return JSON.stringify(value);
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  return String(value);
}
