import {
  DATATYPES,
  type DataType,
  ErrorCode,
  InfergateError,
  type InferResult,
  type InputTensor,
  type OutputTensor,
  type Parameters,
  parseOptions,
  type RequestedOutput,
} from '@infergate/core';
import { z } from 'zod';
import type { Gateway } from './gateway.js';
import { sendError } from './http-errors.js';
import type { Handler } from './http-types.js';
import { contextOf } from './middleware.js';
import { readJsonBody } from './read-body.js';
import { requestIdOf } from './request-id.js';
import { withSlo } from './slo-header.js';

type Scalar = number | string | boolean;
const parameters = z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).optional();

/** KServe v2 REST inference request (JSON tensors; binary extension not supported here). */
const inferRequestSchema = z.object({
  id: z.string().optional(),
  parameters,
  inputs: z
    .array(
      z.object({
        name: z.string().min(1),
        shape: z.array(z.number().int().nonnegative()),
        datatype: z.enum(DATATYPES),
        parameters,
        // Row-major values, flat or nested; checked while flattening.
        data: z.array(z.unknown()),
      }),
    )
    .min(1),
  outputs: z.array(z.object({ name: z.string().min(1), parameters })).optional(),
});

export interface KServeHandlerOptions {
  /** Largest JSON body read when no body parser ran. @default 64 MiB */
  limitBytes?: number;
}

function flatten(data: readonly unknown[], name: string): Scalar[] {
  const values = data.flat(Number.POSITIVE_INFINITY);
  for (const value of values) {
    if (typeof value !== 'number' && typeof value !== 'string' && typeof value !== 'boolean') {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `input '${name}': data may hold only numbers, strings and booleans`,
      );
    }
  }
  return values as Scalar[];
}

function toInput(tensor: z.infer<typeof inferRequestSchema>['inputs'][number]): InputTensor {
  const values = flatten(tensor.data, tensor.name);
  const datatype = tensor.datatype as DataType;
  if (datatype === 'BYTES')
    return { name: tensor.name, datatype, shape: tensor.shape, data: values.map(String) };
  if (datatype === 'INT64' || datatype === 'UINT64') {
    return {
      name: tensor.name,
      datatype,
      shape: tensor.shape,
      data: values.map((value) => BigInt(value as number | string)),
    };
  }
  return { name: tensor.name, datatype, shape: tensor.shape, data: values as number[] };
}

function jsonData(output: OutputTensor): Array<number | string | boolean> {
  if (output.datatype === 'BYTES') return output.strings();
  return output
    .toArray()
    .map((value) =>
      typeof value === 'bigint'
        ? Number.isSafeInteger(Number(value))
          ? Number(value)
          : value.toString()
        : value,
    );
}

function jsonParameters(values: Parameters): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, typeof value === 'bigint' ? value.toString() : value]),
  );
}

export function toKServeResponse(result: InferResult): Record<string, unknown> {
  return {
    model_name: result.model,
    model_version: result.modelVersion,
    id: result.id,
    parameters: jsonParameters(result.parameters),
    outputs: result.outputs.map((output) => ({
      name: output.name,
      datatype: output.datatype,
      shape: output.shape,
      data: jsonData(output),
    })),
  };
}

/**
 * `POST /v2/models/:model[/versions/:version]/infer` with a KServe v2 REST JSON body, forwarded
 * through the gateway's Triton client (batcher/router included); the client disconnecting cancels it.
 */
export function kserveInferHandler(options: KServeHandlerOptions = {}): Handler {
  const limit = options.limitBytes ?? 64 * 1024 * 1024;
  return (request, response) => {
    (async () => {
      const context = contextOf(request);
      const gateway = context.gateway as Gateway;
      if (gateway.triton === undefined) throw new Error('the gateway has no Triton client');
      const model = request.params?.model;
      if (!model) throw new Error('the route needs a :model parameter');
      const body = parseOptions(
        inferRequestSchema,
        await readJsonBody(request, limit),
        'KServe v2 inference request',
      );
      const outputs: RequestedOutput[] | undefined = body.outputs?.map((output) => {
        const classification = output.parameters?.classification;
        return {
          name: output.name,
          ...(typeof classification === 'number' ? { classCount: classification } : {}),
        };
      });
      const version = request.params?.version;
      const result = await gateway.triton.infer(model, body.inputs.map(toInput), {
        ...withSlo({}, context.slo),
        signal: context.signal,
        tenant: context.tenant,
        requestId: body.id ?? context.requestId,
        ...(version ? { modelVersion: version } : {}),
        ...(outputs ? { outputs } : {}),
        ...(body.parameters ? { parameters: body.parameters } : {}),
      });
      response.statusCode = 200;
      response.setHeader('Content-Type', 'application/json; charset=utf-8');
      response.end(JSON.stringify(toKServeResponse(result)));
    })().catch((error) => sendError(response, error, requestIdOf(request), request.infergate?.errors));
  };
}
