import {
  create,
  type DescEnum,
  type DescField,
  type DescMessage,
  type MessageShape,
  ScalarType,
} from '@bufbuild/protobuf';
import { type ReflectMessage, reflect } from '@bufbuild/protobuf/reflect';
import { ErrorCode, InfergateError } from '@infergate/core';
import { INTEGER_RANGES, isLong } from './internal/integer-ranges.js';
import { describe, TextFormatError, TextReader, type Token } from './internal/text-reader.js';

/**
 * Parses the protobuf text format into a message of `schema`, walking its descriptors: `#`
 * comments, `name: value` and `name { … }` / `name: < … >`, lists (`dims: [ 3, 224 ]`,
 * `input [ { … }, { … } ]`) and repeated fields, `,`/`;` separators, map entries
 * (`{ key: … value … }`), oneofs (one member at most), enums by name or number, adjacent strings
 * concatenated, every escape (`\n`, octal, `\x`, `\u`, `\U`), `inf`/`nan`, hex and octal integers
 * with range checks. A problem is an `InfergateError(INVALID_ARGUMENT)` naming `source`, the line
 * and the column.
 */
export function parseTextFormat<Desc extends DescMessage>(
  schema: Desc,
  text: string,
  source = schema.typeName,
): MessageShape<Desc> {
  const reader = new TextReader(text);
  try {
    const message = reflect(schema, create(schema));
    readFields(reader, message, undefined);
    return message.message as MessageShape<Desc>;
  } catch (error) {
    if (!(error instanceof TextFormatError)) throw error;
    throw new InfergateError(ErrorCode.InvalidArgument, `${source}:${error.message}`, { cause: error });
  }
}

/** Fields up to `close` (or the end of the text at the top level). */
function readFields(reader: TextReader, message: ReflectMessage, close: string | undefined): void {
  const seen = new Set<DescField>();
  const chosen = new Map<string, DescField>();
  for (;;) {
    const token = reader.next();
    if (close === undefined ? token.kind === 'end' : token.kind === 'punct' && token.text === close) return;
    if (token.kind !== 'identifier') {
      throw reader.error(
        token,
        close === undefined || token.kind !== 'end'
          ? `expected a field name, got ${describe(token)}`
          : `expected "${close}", got ${describe(token)}`,
      );
    }
    const field = message.desc.fields.find((candidate) => candidate.name === token.text);
    if (field === undefined)
      throw reader.error(token, `${message.desc.typeName} has no field "${token.text}"`);
    if (field.fieldKind !== 'list' && field.fieldKind !== 'map') {
      if (seen.has(field)) throw reader.error(token, `field "${field.name}" is given twice`);
      seen.add(field);
    }
    if (field.oneof !== undefined) {
      const other = chosen.get(field.oneof.name);
      if (other !== undefined)
        throw reader.error(
          token,
          `"${other.name}" and "${field.name}" are both set; oneof "${field.oneof.name}" takes one`,
        );
      chosen.set(field.oneof.name, field);
    }
    readField(reader, message, field);
    if (!reader.accept(',')) reader.accept(';');
  }
}

function holdsMessages(field: DescField): boolean {
  return (
    field.fieldKind === 'message' ||
    field.fieldKind === 'map' ||
    (field.fieldKind === 'list' && field.listKind === 'message')
  );
}

function readField(reader: TextReader, message: ReflectMessage, field: DescField): void {
  if (holdsMessages(field)) {
    reader.accept(':');
  } else {
    reader.expect(':', `after "${field.name}"`);
  }
  const repeated = field.fieldKind === 'list' || field.fieldKind === 'map';
  if (reader.peek().kind === 'punct' && reader.peek().text === '[') {
    if (!repeated)
      throw reader.error(
        reader.peek(),
        `field "${field.name}" is not repeated: it takes one value, not a list`,
      );
    reader.next();
    if (reader.accept(']')) return;
    for (;;) {
      readOne(reader, message, field);
      if (reader.accept(']')) return;
      reader.expect(',', 'between list items');
    }
  }
  readOne(reader, message, field);
}

/** One value (one list item, one map entry) of `field`. */
function readOne(reader: TextReader, message: ReflectMessage, field: DescField): void {
  switch (field.fieldKind) {
    case 'scalar':
      message.set(field, scalar(reader, field.scalar));
      return;
    case 'enum':
      message.set(field, enumValue(reader, field.enum));
      return;
    case 'message': {
      const child = reflect(field.message, create(field.message));
      readBlock(reader, child);
      message.set(field, child);
      return;
    }
    case 'list': {
      const list = message.get(field);
      if (field.listKind === 'message') {
        const child = reflect(field.message, create(field.message));
        readBlock(reader, child);
        list.add(child);
      } else {
        list.add(field.listKind === 'enum' ? enumValue(reader, field.enum) : scalar(reader, field.scalar));
      }
      return;
    }
    case 'map': {
      const open = reader.next();
      const close =
        open.kind === 'punct' && open.text === '{'
          ? '}'
          : open.kind === 'punct' && open.text === '<'
            ? '>'
            : undefined;
      if (close === undefined)
        throw reader.error(open, `expected "{" or "<" for a map entry, got ${describe(open)}`);
      let key: unknown;
      let value: unknown;
      for (;;) {
        const token = reader.next();
        if (token.kind === 'punct' && token.text === close) break;
        if (token.kind !== 'identifier' || (token.text !== 'key' && token.text !== 'value')) {
          throw reader.error(token, `expected "key" or "value" in a map entry, got ${describe(token)}`);
        }
        if ((token.text === 'key' ? key : value) !== undefined)
          throw reader.error(token, `map entry "${token.text}" is given twice`);
        if (token.text === 'key') {
          reader.expect(':', 'after "key"');
          key = scalar(reader, field.mapKey);
        } else if (field.mapKind === 'message') {
          reader.accept(':');
          const child = reflect(field.message, create(field.message));
          readBlock(reader, child);
          value = child;
        } else {
          reader.expect(':', 'after "value"');
          value = field.mapKind === 'enum' ? enumValue(reader, field.enum) : scalar(reader, field.scalar);
        }
        if (!reader.accept(',')) reader.accept(';');
      }
      const map = message.get(field);
      map.set(key ?? defaultKey(field.mapKey), value ?? defaultValue(field));
    }
  }
}

function defaultKey(type: ScalarType): unknown {
  if (type === ScalarType.STRING) return '';
  if (type === ScalarType.BOOL) return false;
  return isLong(type) ? 0n : 0;
}

function defaultValue(field: DescField & { fieldKind: 'map' }): unknown {
  if (field.mapKind === 'message') return reflect(field.message, create(field.message));
  if (field.mapKind === 'enum') return field.enum.values[0]?.number ?? 0;
  return defaultKey(field.scalar) === 0n
    ? 0n
    : field.scalar === ScalarType.BYTES
      ? new Uint8Array()
      : defaultKey(field.scalar);
}

function readBlock(reader: TextReader, message: ReflectMessage): void {
  const open = reader.next();
  if (open.kind === 'punct' && (open.text === '{' || open.text === '<')) {
    readFields(reader, message, open.text === '{' ? '}' : '>');
    return;
  }
  throw reader.error(open, `expected "{" or "<" to open ${message.desc.typeName}, got ${describe(open)}`);
}

function scalar(reader: TextReader, type: ScalarType): unknown {
  if (type === ScalarType.STRING || type === ScalarType.BYTES) {
    const first = reader.next();
    if (first.kind !== 'string') throw reader.error(first, `expected a string, got ${describe(first)}`);
    const parts = [first.bytes];
    while (reader.peek().kind === 'string') parts.push((reader.next() as Token & { kind: 'string' }).bytes);
    const bytes = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      bytes.set(part, offset);
      offset += part.length;
    }
    if (type === ScalarType.BYTES) return bytes;
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw reader.error(first, 'a string field holds bytes that are not UTF-8');
    }
  }
  const negative = reader.accept('-');
  const token = reader.next();
  if (type === ScalarType.BOOL) {
    if (!negative && token.kind === 'identifier' && ['true', 'True', 't'].includes(token.text)) return true;
    if (!negative && token.kind === 'identifier' && ['false', 'False', 'f'].includes(token.text))
      return false;
    if (!negative && token.kind === 'number' && (token.text === '0' || token.text === '1'))
      return token.text === '1';
    throw reader.error(token, `expected true or false, got ${describe(token)}`);
  }
  if (type === ScalarType.FLOAT || type === ScalarType.DOUBLE) {
    // A float field holds a 32-bit value: "0.1" there is the float nearest 0.1, as protobuf reads it.
    const round = type === ScalarType.FLOAT ? Math.fround : (value: number) => value;
    const sign = negative ? -1 : 1;
    if (token.kind === 'identifier') {
      const word = token.text.toLowerCase();
      if (word === 'inf' || word === 'infinity') return sign * Number.POSITIVE_INFINITY;
      if (word === 'nan') return Number.NaN;
    }
    if (token.kind === 'number') {
      const text = token.text.replace(/[fF]$/, '');
      const value = /^0[xX]/.test(text) ? Number.parseInt(text, 16) : Number(text);
      if (!Number.isNaN(value)) return round(sign * value);
    }
    throw reader.error(token, `expected a number, got ${describe(token)}`);
  }
  if (token.kind !== 'number' || /[.eEfF]/.test(token.text.replace(/^0[xX][0-9a-fA-F]+$/, ''))) {
    throw reader.error(token, `expected an integer, got ${describe(token)}`);
  }
  const magnitude = /^0[0-7]+$/.test(token.text) ? BigInt(`0o${token.text.slice(1)}`) : BigInt(token.text);
  const value = negative ? -magnitude : magnitude;
  const range = INTEGER_RANGES[type];
  if (range !== undefined && (value < range[0] || value > range[1])) {
    throw reader.error(token, `${value} is out of range [${range[0]}, ${range[1]}]`);
  }
  return isLong(type) ? value : Number(value);
}

function enumValue(reader: TextReader, desc: DescEnum): number {
  const negative = reader.accept('-');
  const token = reader.next();
  if (!negative && token.kind === 'identifier') {
    const match = desc.values.find((value) => value.name === token.text);
    if (match !== undefined) return match.number;
    throw reader.error(token, `"${token.text}" is not a value of ${desc.typeName}`);
  }
  if (token.kind === 'number' && /^\d+$/.test(token.text)) {
    const value = (negative ? -1 : 1) * Number(token.text);
    if (value >= -(2 ** 31) && value < 2 ** 31) return value;
  }
  throw reader.error(token, `expected a ${desc.typeName} name or number, got ${describe(token)}`);
}
