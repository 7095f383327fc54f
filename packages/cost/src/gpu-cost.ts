import { ErrorCode, InfergateError, parseOptions } from '@infergate/core';
import { z } from 'zod';

/** A GPU-hour price for an endpoint, a model, or both (the most specific match wins). */
export const gpuPriceSchema = z.strictObject({
  /** Endpoint address as the transport names it ("10.0.0.5:8001"); absent: any endpoint. */
  endpoint: z.string().min(1).optional(),
  /** Triton model name; absent: any model. */
  model: z.string().min(1).optional(),
  /** USD per hour for one GPU (e.g. on-demand price of the instance ÷ its GPUs). */
  usdPerGpuHour: z.number().finite().nonnegative(),
  /** GPUs one execution of the model occupies. @default 1 */
  gpus: z.number().positive().optional(),
  source: z.string().optional(),
});
export type GpuPrice = z.infer<typeof gpuPriceSchema>;

export interface GpuCostInput {
  model: string;
  endpoint?: string;
  /** Rows of the batch that belong to this call. @default batchRows */
  rows?: number;
  /** Rows in the whole execution the call ran in. @default rows, or 1 */
  batchRows?: number;
  /** GPU compute time of the whole execution, in ns (Triton's compute_infer for that execution). */
  computeNs: number | bigint;
}

const NS_PER_HOUR = 3.6e12;

/**
 * USD for a share of one execution: price × GPUs × computeNs / 1 h × rows / batchRows. A tenant
 * whose 3 rows rode in a batch of 12 pays a quarter of that execution.
 */
export function gpuShareUsd(price: Pick<GpuPrice, 'usdPerGpuHour' | 'gpus'>, input: GpuCostInput): number {
  const batchRows = input.batchRows ?? input.rows ?? 1;
  const rows = input.rows ?? batchRows;
  if (!(batchRows > 0) || !(rows >= 0)) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `rows must be ≥ 0 and batchRows > 0, got rows ${rows} and batchRows ${batchRows}`,
    );
  }
  const share = Math.min(1, rows / batchRows);
  return (price.usdPerGpuHour * (price.gpus ?? 1) * Number(input.computeNs) * share) / NS_PER_HOUR;
}

/** GPU-hour prices, looked up by endpoint + model, then model, then endpoint, then a default. */
export class GpuPriceTable {
  readonly #prices = new Map<string, GpuPrice>();

  constructor(prices: readonly GpuPrice[] = []) {
    this.register(prices);
  }

  register(prices: readonly GpuPrice[]): void {
    for (const price of parseOptions(z.array(gpuPriceSchema), prices, 'GPU prices'))
      this.#prices.set(GpuPriceTable.#key(price.endpoint, price.model), price);
  }

  lookup(model: string, endpoint: string | undefined): GpuPrice | undefined {
    return (
      (endpoint === undefined ? undefined : this.#prices.get(GpuPriceTable.#key(endpoint, model))) ??
      this.#prices.get(GpuPriceTable.#key(undefined, model)) ??
      (endpoint === undefined ? undefined : this.#prices.get(GpuPriceTable.#key(endpoint, undefined))) ??
      this.#prices.get(GpuPriceTable.#key(undefined, undefined))
    );
  }

  static #key(endpoint: string | undefined, model: string | undefined): string {
    return `${endpoint ?? '*'}\u0000${model ?? '*'}`;
  }
}
