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
import { INTEGER_RANGES, isLong } from './integer-ranges.js';

/**
 * Builds a message of `desc` from a plain object (`MessageInit`), walking the descriptors: every key
 * must name a field (camelCase or the proto's snake_case), oneof members are given as plain fields
 * and at most one per oneof, values are checked against the field's kind and range. Every problem
 * is collected; one INVALID_ARGUMENT lists them all, each with its path.
 */
export function buildMessage<Desc extends DescMessage>(
  desc: Desc,
  input: unknown,
  what: string,
): MessageShape<Desc> {
  const problems: string[] = [];
  const message = buildInto(desc, input, what, problems);
  if (problems.length > 0) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `${what} is invalid:\n  - ${problems.join('\n  - ')}`,
    );
  }
  return message.message as MessageShape<Desc>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}

function buildInto(desc: DescMessage, input: unknown, path: string, problems: string[]): ReflectMessage {
  const target = reflect(desc, create(desc));
  if (!isPlainObject(input)) {
    problems.push(`${path}: expected an object (${desc.typeName}), got ${describe(input)}`);
    return target;
  }
  const chosen = new Map<string, string>();
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const field = desc.fields.find((candidate) => candidate.localName === key || candidate.name === key);
    const at = `${path}.${key}`;
    if (field === undefined) {
      problems.push(`${at}: ${desc.typeName} has no field '${key}'${suggest(desc, key)}`);
      continue;
    }
    if (field.oneof !== undefined) {
      const other = chosen.get(field.oneof.name);
      if (other !== undefined) {
        problems.push(`${at}: '${other}' and '${key}' are alternatives (${field.oneof.name}); set only one`);
        continue;
      }
      chosen.set(field.oneof.name, key);
    }
    setField(target, field, value, at, problems);
  }
  return target;
}

function setField(
  target: ReflectMessage,
  field: DescField,
  value: unknown,
  at: string,
  problems: string[],
): void {
  switch (field.fieldKind) {
    case 'scalar': {
      const converted = scalar(field.scalar, value, at, problems);
      if (converted !== undefined) target.set(field, converted);
      return;
    }
    case 'enum': {
      const converted = enumValue(field.enum, value, at, problems);
      if (converted !== undefined) target.set(field, converted);
      return;
    }
    case 'message':
      target.set(field, buildInto(field.message, value, at, problems));
      return;
    case 'list': {
      if (!Array.isArray(value)) {
        problems.push(`${at}: expected a list, got ${describe(value)}`);
        return;
      }
      const list = target.get(field);
      value.forEach((item: unknown, index) => {
        const itemAt = `${at}[${index}]`;
        const converted =
          field.listKind === 'message'
            ? buildInto(field.message, item, itemAt, problems)
            : field.listKind === 'enum'
              ? enumValue(field.enum, item, itemAt, problems)
              : scalar(field.scalar, item, itemAt, problems);
        if (converted !== undefined) list.add(converted);
      });
      return;
    }
    case 'map': {
      if (!isPlainObject(value)) {
        problems.push(`${at}: expected an object of entries, got ${describe(value)}`);
        return;
      }
      const map = target.get(field);
      for (const [rawKey, entry] of Object.entries(value)) {
        const entryAt = `${at}[${JSON.stringify(rawKey)}]`;
        const key = mapKey(field.mapKey, rawKey, entryAt, problems);
        const converted =
          field.mapKind === 'message'
            ? buildInto(field.message, entry, entryAt, problems)
            : field.mapKind === 'enum'
              ? enumValue(field.enum, entry, entryAt, problems)
              : scalar(field.scalar, entry, entryAt, problems);
        if (key !== undefined && converted !== undefined) map.set(key, converted);
      }
    }
  }
}

function scalar(type: ScalarType, value: unknown, at: string, problems: string[]): unknown {
  switch (type) {
    case ScalarType.STRING:
      if (typeof value === 'string') return value;
      problems.push(`${at}: expected a string, got ${describe(value)}`);
      return undefined;
    case ScalarType.BYTES:
      if (value instanceof Uint8Array) return value;
      if (typeof value === 'string') return new TextEncoder().encode(value);
      problems.push(`${at}: expected bytes (Uint8Array or string), got ${describe(value)}`);
      return undefined;
    case ScalarType.BOOL:
      if (typeof value === 'boolean') return value;
      problems.push(`${at}: expected true or false, got ${describe(value)}`);
      return undefined;
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      if (typeof value === 'number') return value;
      problems.push(`${at}: expected a number, got ${describe(value)}`);
      return undefined;
  }
  const range = INTEGER_RANGES[type];
  const integer =
    typeof value === 'bigint'
      ? value
      : typeof value === 'number' && Number.isSafeInteger(value)
        ? BigInt(value)
        : undefined;
  if (range === undefined || integer === undefined) {
    problems.push(`${at}: expected an integer, got ${describe(value)}`);
    return undefined;
  }
  if (integer < range[0] || integer > range[1]) {
    problems.push(`${at}: ${integer} is out of range [${range[0]}, ${range[1]}]`);
    return undefined;
  }
  return isLong(type) ? integer : Number(integer);
}

function mapKey(type: ScalarType, key: string, at: string, problems: string[]): unknown {
  if (type === ScalarType.STRING) return key;
  if (type === ScalarType.BOOL) {
    if (key === 'true' || key === 'false') return key === 'true';
    problems.push(`${at}: a key of this map must be true or false`);
    return undefined;
  }
  if (!/^-?\d+$/.test(key)) {
    problems.push(`${at}: a key of this map must be an integer`);
    return undefined;
  }
  return scalar(type, BigInt(key), at, problems);
}

/** The enum's shared name prefix ('TYPE_', 'KIND_'): names may be given without it. */
function sharedPrefix(desc: DescEnum): string {
  const names = desc.values.map((value) => value.name);
  let prefix = names[0] ?? '';
  for (const name of names) while (!name.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix.slice(0, prefix.lastIndexOf('_') + 1);
}

function enumValue(desc: DescEnum, value: unknown, at: string, problems: string[]): number | undefined {
  if (typeof value === 'number' && desc.values.some((candidate) => candidate.number === value)) return value;
  if (typeof value === 'string') {
    const prefix = sharedPrefix(desc);
    const match = desc.values.find(
      (candidate) =>
        candidate.name === value || candidate.localName === value || candidate.name === `${prefix}${value}`,
    );
    if (match !== undefined) return match.number;
  }
  const names = desc.values.map((candidate) => candidate.name).join(', ');
  problems.push(`${at}: ${describe(value)} is not a value of ${desc.typeName}; one of ${names}`);
  return undefined;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Uint8Array) return 'bytes';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : String(value);
}

/** ", did you mean 'maxBatchSize'?" when a field differs only in case, underscores or one letter. */
function suggest(desc: DescMessage, key: string): string {
  const squash = (text: string) => text.replaceAll('_', '').toLowerCase();
  const wanted = squash(key);
  const close = desc.fields.find((field) => {
    const name = squash(field.localName);
    return name === wanted || editDistanceAtMostOne(name, wanted);
  });
  return close === undefined ? '' : `; did you mean '${close.localName}'?`;
}

function editDistanceAtMostOne(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  let j = 0;
  let edits = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      i++;
      j++;
      continue;
    }
    if (++edits > 1) return false;
    if (a.length > b.length) i++;
    else if (b.length > a.length) j++;
    else {
      i++;
      j++;
    }
  }
  return edits + (a.length - i) + (b.length - j) <= 1;
}
