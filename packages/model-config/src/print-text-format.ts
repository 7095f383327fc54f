import type { DescField, DescMessage, MessageShape } from '@bufbuild/protobuf';
import { ScalarType } from '@bufbuild/protobuf';
import { type ReflectMessage, reflect } from '@bufbuild/protobuf/reflect';
import { escapeBytes, escapeString } from './internal/text-escape.js';

const INDENT = '  ';

/**
 * Prints a message in the protobuf text format, laid out the way Triton's own `config.pbtxt` files
 * are: repeated scalars as `dims: [ 3, 224, 224 ]`, repeated messages as `input [ { … }, { … } ]`,
 * one `name { key: … value … }` block per map entry (sorted by key), fields in declaration order.
 * Every field kind round-trips through `parseTextFormat()` exactly (see the property test).
 */
export function printTextFormat<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): string {
  const lines: string[] = [];
  printFields(reflect(schema, message), 0, lines);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

function printFields(message: ReflectMessage, depth: number, lines: string[]): void {
  const pad = INDENT.repeat(depth);
  for (const field of message.fields) {
    if (!message.isSet(field)) continue;
    switch (field.fieldKind) {
      case 'scalar':
      case 'enum':
        lines.push(`${pad}${field.name}: ${formatValue(field, message.get(field))}`);
        break;
      case 'message':
        printMessageBlock(field.name, message.get(field), depth, lines);
        break;
      case 'list': {
        const list = message.get(field);
        if (field.listKind === 'message') {
          lines.push(`${pad}${field.name} [`);
          const items = [...list] as ReflectMessage[];
          items.forEach((item, index) => {
            printMessageBlock('', item, depth + 1, lines);
            if (index < items.length - 1) lines[lines.length - 1] += ',';
          });
          lines.push(`${pad}]`);
        } else {
          const values = [...list].map((value) => formatValue(field, value));
          lines.push(`${pad}${field.name}: [ ${values.join(', ')} ]`);
        }
        break;
      }
      case 'map': {
        const entries = [...message.get(field)].sort(([a], [b]) => compareKeys(a, b));
        for (const [key, value] of entries) {
          lines.push(`${pad}${field.name} {`);
          lines.push(`${pad}${INDENT}key: ${formatScalar(field.mapKey, key)}`);
          if (field.mapKind === 'message') {
            printMessageBlock('value', value as ReflectMessage, depth + 1, lines);
          } else if (field.mapKind === 'enum') {
            lines.push(`${pad}${INDENT}value: ${formatEnum(field.enum, value as number)}`);
          } else {
            lines.push(`${pad}${INDENT}value: ${formatScalar(field.scalar, value)}`);
          }
          lines.push(`${pad}}`);
        }
        break;
      }
    }
  }
}

/** `name {` … `}` with the body one level deeper (`{` … `}` for a list item); empty: `name {}`. */
function printMessageBlock(name: string, message: ReflectMessage, depth: number, lines: string[]): void {
  const pad = INDENT.repeat(depth);
  const head = name === '' ? `${pad}{` : `${pad}${name} {`;
  const body: string[] = [];
  printFields(message, depth + 1, body);
  if (body.length === 0) {
    lines.push(`${head}}`);
    return;
  }
  lines.push(head, ...body, `${pad}}`);
}

function formatValue(field: DescField, value: unknown): string {
  if (field.fieldKind === 'enum' || (field.fieldKind === 'list' && field.listKind === 'enum')) {
    return formatEnum(field.enum, value as number);
  }
  if (field.fieldKind === 'scalar' || (field.fieldKind === 'list' && field.listKind === 'scalar')) {
    return formatScalar(field.scalar, value);
  }
  throw new Error(`unexpected field kind for ${field.name}`);
}

function formatEnum(desc: DescField['enum'] & object, value: number): string {
  // A value the descriptor does not name (an open enum) is printed as its number, which parses back.
  return desc.values.find((candidate) => candidate.number === value)?.name ?? String(value);
}

function formatScalar(type: ScalarType, value: unknown): string {
  switch (type) {
    case ScalarType.STRING:
      return `"${escapeString(value as string)}"`;
    case ScalarType.BYTES:
      return `"${escapeBytes(value as Uint8Array)}"`;
    case ScalarType.BOOL:
      return value === true ? 'true' : 'false';
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return formatFloat(value as number);
    default:
      return String(value);
  }
}

function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Number.POSITIVE_INFINITY) return 'inf';
  if (value === Number.NEGATIVE_INFINITY) return '-inf';
  if (Object.is(value, -0)) return '-0';
  // Number#toString is the shortest text that reads back as the same double.
  return String(value);
}

function compareKeys(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const left = BigInt(a as number | bigint);
  const right = BigInt(b as number | bigint);
  return left < right ? -1 : left > right ? 1 : 0;
}
