import type { Message } from '@bufbuild/protobuf';
import type {
  BatchInput_Kind,
  BatchOutput_Kind,
  DataType,
  ModelConfig,
  ModelInput_Format,
  ModelInstanceGroup_Kind,
  ModelInstanceGroup_SecondaryDevice_SecondaryDeviceKind,
  ModelOptimizationPolicy_ModelPriority,
  ModelQueuePolicy_TimeoutAction,
  ModelSequenceBatching_Control_Kind,
} from '@infergate/core/proto';

// The input type of the builder, derived from the generated message types (not written field by
// field): camelCase fields, oneof members as plain optional fields (`dynamicBatching` instead of
// `schedulingChoice: { case, value }`), 64-bit integers as numbers, enums by name ('TYPE_FP32' or
// 'FP32') or value, maps as plain objects. The runtime check in build-message.ts walks the same
// descriptors and reports whatever the types cannot catch.

type Internal = '$typeName' | '$unknown';
type Keys<T> = Exclude<keyof T, Internal>;
type IsOneof<V> = [NonNullable<V>] extends [{ case: string | undefined }] ? true : false;

type PlainKeys<T> = { [K in Keys<T>]: IsOneof<T[K]> extends true ? never : K }[Keys<T>];
type OneofUnion<T> = { [K in Keys<T>]: IsOneof<T[K]> extends true ? T[K] : never }[Keys<T>];
type OneofFields<U> = U extends { case: infer C extends string; value: infer V }
  ? { [P in C]?: InitValue<V> }
  : never;
type Intersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void
  ? I
  : never;

type Short<N> = N extends `${'TYPE' | 'PRIORITY'}_${infer Rest}`
  ? Rest
  : N extends `CONTROL_SEQUENCE_${infer Rest}`
    ? Rest
    : never;
type Named<E, Names extends string> = E | Names | Short<Names>;
// protobuf-es drops the `KIND_`/`FORMAT_` prefix from these member names; the proto names keep it.
type Prefixed<E, Prefix extends string, Names extends string> = E | Names | `${Prefix}${Names}`;

/** An enum field takes the value, its name, or its name without the shared prefix ('FP32', 'GPU'). */
export type EnumInit<E> = [E] extends [DataType]
  ? Named<E, keyof typeof DataType>
  : [E] extends [ModelInstanceGroup_Kind]
    ? Prefixed<E, 'KIND_', keyof typeof ModelInstanceGroup_Kind>
    : [E] extends [ModelInput_Format]
      ? Prefixed<E, 'FORMAT_', keyof typeof ModelInput_Format>
      : [E] extends [ModelQueuePolicy_TimeoutAction]
        ? Named<E, keyof typeof ModelQueuePolicy_TimeoutAction>
        : [E] extends [ModelSequenceBatching_Control_Kind]
          ? Named<E, keyof typeof ModelSequenceBatching_Control_Kind>
          : [E] extends [ModelOptimizationPolicy_ModelPriority]
            ? Named<E, keyof typeof ModelOptimizationPolicy_ModelPriority>
            : [E] extends [BatchInput_Kind]
              ? Named<E, keyof typeof BatchInput_Kind>
              : [E] extends [BatchOutput_Kind]
                ? Named<E, keyof typeof BatchOutput_Kind>
                : [E] extends [ModelInstanceGroup_SecondaryDevice_SecondaryDeviceKind]
                  ? Named<E, keyof typeof ModelInstanceGroup_SecondaryDevice_SecondaryDeviceKind>
                  : E | string;

// A numeric enum and `number` are assignable both ways; their template-literal forms are not.
type IsEnum<V> = [V] extends [number] ? ([`${number}`] extends [`${V}`] ? false : true) : false;

/** What one field takes. */
export type InitValue<V> = [V] extends [Uint8Array]
  ? Uint8Array | string
  : [V] extends [bigint]
    ? bigint | number
    : [V] extends [string]
      ? string
      : [V] extends [boolean]
        ? boolean
        : [V] extends [number]
          ? IsEnum<V> extends true
            ? EnumInit<V>
            : number
          : [V] extends [readonly (infer E)[]]
            ? readonly InitValue<E>[]
            : [V] extends [Message]
              ? MessageInit<V>
              : [V] extends [{ [key: string]: infer E }]
                ? Readonly<Record<string, InitValue<E>>>
                : [V] extends [infer D | undefined]
                  ? InitValue<D>
                  : never;

/** The builder's input for a message type. */
export type MessageInit<T> = { [K in PlainKeys<T>]?: InitValue<NonNullable<T[K]>> } & Intersection<
  OneofFields<OneofUnion<T>>
>;

/** The builder's input for a whole model configuration. */
export type ModelConfigInit = MessageInit<ModelConfig>;
