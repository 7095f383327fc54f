// Round trip of the text format for every field kind, over messages generated from the descriptors:
// parseTextFormat(printTextFormat(m)) equals m. ModelConfig covers scalars, enums, repeated fields,
// maps with message values, oneofs and nesting; ModelInferRequest adds bytes (repeated, any byte),
// 64-bit integers and maps of oneofs (InferParameter).
import {
  create,
  type DescField,
  type DescMessage,
  type MessageShape,
  ScalarType,
  toJson,
} from '@bufbuild/protobuf';
import { type ReflectMessage, reflect } from '@bufbuild/protobuf/reflect';
import { fromText, toText } from '@bufbuild/protobuf/txtpb';
import { InferTensorContentsSchema, ModelConfigSchema, ModelInferRequestSchema } from '@infergate/core/proto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTextFormat } from './parse-text-format.js';
import { printTextFormat } from './print-text-format.js';

type Setter = (message: ReflectMessage) => void;

function scalarArbitrary(type: ScalarType): fc.Arbitrary<unknown> {
  switch (type) {
    case ScalarType.STRING:
      return fc.string({ unit: 'binary', maxLength: 6 });
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 8 });
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.DOUBLE:
      return fc.double();
    case ScalarType.FLOAT:
      return fc.float();
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return fc.integer({ min: 0, max: 2 ** 32 - 1 });
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return fc.bigInt(0n, 2n ** 64n - 1n);
    default:
      return fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n);
  }
}

function enumArbitrary(field: DescField): fc.Arbitrary<number> {
  const numbers = field.enum?.values.map((value) => value.number) ?? [0];
  // 77 is a number no enum here names: open enums keep it, and it must print and parse as a number.
  return fc.oneof(fc.constantFrom(...numbers), fc.constant(77));
}

/** A value for one field (list and map fields: their whole content), applied through reflection. */
function fieldArbitrary(field: DescField, depth: number): fc.Arbitrary<Setter> {
  switch (field.fieldKind) {
    case 'scalar':
      return scalarArbitrary(field.scalar).map((value) => (r) => r.set(field, value));
    case 'enum':
      return enumArbitrary(field).map((value) => (r) => r.set(field, value));
    case 'message':
      return messageArbitrary(field.message, depth - 1).map((value) => (r) => r.set(field, value));
    case 'list': {
      const item: fc.Arbitrary<unknown> =
        field.listKind === 'message'
          ? messageArbitrary(field.message, depth - 1)
          : field.listKind === 'enum'
            ? enumArbitrary(field)
            : scalarArbitrary(field.scalar);
      return fc.array(item, { minLength: 1, maxLength: 3 }).map((values) => (r) => {
        const list = r.get(field);
        for (const value of values) list.add(value);
      });
    }
    case 'map': {
      const value: fc.Arbitrary<unknown> =
        field.mapKind === 'message'
          ? messageArbitrary(field.message, depth - 1)
          : field.mapKind === 'enum'
            ? enumArbitrary(field)
            : scalarArbitrary(field.scalar);
      return fc
        .array(fc.tuple(scalarArbitrary(field.mapKey), value), { minLength: 1, maxLength: 3 })
        .map((entries) => (r) => {
          const map = r.get(field);
          for (const [key, entry] of entries) map.set(key, entry);
        });
    }
  }
}

/** Messages as reflections (what reflect().set()/add() take for message values). */
function messageArbitrary(desc: DescMessage, depth: number): fc.Arbitrary<ReflectMessage> {
  const parts: fc.Arbitrary<Setter | null>[] = [];
  for (const member of desc.members) {
    const choices = member.kind === 'oneof' ? member.fields : [member];
    // Nested messages only while depth lasts; deeper down a message keeps its scalar fields.
    const usable = choices.filter((field) => depth > 1 || field.message === undefined);
    if (usable.length === 0) continue;
    parts.push(fc.option(fc.oneof(...usable.map((field) => fieldArbitrary(field, depth))), { freq: 2 }));
  }
  return fc.tuple(...parts).map((setters) => {
    const message = reflect(desc, create(desc));
    for (const setter of setters) setter?.(message);
    return message;
  });
}

function roundTrip<Desc extends DescMessage>(schema: Desc, depth: number, runs: number): void {
  fc.assert(
    fc.property(messageArbitrary(schema, depth), (generated) => {
      const original = generated.message as MessageShape<Desc>;
      const text = printTextFormat(schema, original);
      const parsed = parseTextFormat(schema, text);
      // toJson compares NaN as "NaN" (equals() says NaN != NaN) and ignores map insertion order.
      expect(toJson(schema, parsed)).toEqual(toJson(schema, original));
      expect(printTextFormat(schema, parsed)).toBe(text);
    }),
    { numRuns: runs },
  );
}

describe('text format round trip (property)', () => {
  it('ModelConfig: scalars, enums, repeated, maps, oneofs, nested messages', () => {
    roundTrip(ModelConfigSchema, 5, 150);
  });

  it('ModelInferRequest: bytes with any byte, 64-bit integers, maps of oneofs', () => {
    roundTrip(ModelInferRequestSchema, 4, 150);
  });

  it('InferTensorContents: every repeated scalar kind, bytes included', () => {
    roundTrip(InferTensorContentsSchema, 2, 150);
  });

  it.each([
    ['ModelConfig', ModelConfigSchema, 4],
    ['ModelInferRequest', ModelInferRequestSchema, 3],
  ] as const)(
    '%s: reads what protobuf-es toText() writes, and protobuf-es reads ours',
    (_, schema, depth) => {
      fc.assert(
        fc.property(messageArbitrary(schema, depth), (generated) => {
          const original = generated.message as MessageShape<typeof schema>;
          const theirs = toText(schema, original);
          expect(toJson(schema, parseTextFormat(schema, theirs))).toEqual(toJson(schema, original));
          const ours = printTextFormat(schema, original);
          expect(toJson(schema, fromText(schema, ours))).toEqual(toJson(schema, original));
        }),
        { numRuns: 60 },
      );
    },
  );
});
