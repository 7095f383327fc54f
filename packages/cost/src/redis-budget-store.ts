import { createHash } from 'node:crypto';
import { parseOptions } from '@infergate/core';
import { z } from 'zod';
import type * as Store from './budget-store.js';
import { daysBetween, groupField, NANO_PER_USD, utcDay } from './budget-store.js';
import { abortable, throwIfAborted } from './internal/abortable.js';
import { INSPECT_SCRIPT, RELEASE_SCRIPT, RESERVE_SCRIPT, SETTLE_SCRIPT } from './redis-scripts.js';

/**
 * The part of an ioredis client the store uses (`new Redis()` satisfies it). Kept structural so
 * that ioredis stays an optional peer: only users of this store install it.
 */
export interface RedisLike {
  call(command: string, args: (string | number)[]): Promise<unknown>;
}

const redisOptionsSchema = z.strictObject({
  redis: z.custom<RedisLike>(
    (value) => typeof value === 'object' && value !== null && typeof (value as RedisLike).call === 'function',
    'redis must be an ioredis client (or anything with call(command, args))',
  ),
  prefix: z.string().min(1).optional(),
  reportRetentionDays: z.number().int().positive().optional(),
});

export interface RedisBudgetStoreOptions {
  redis: RedisLike;
  /** Key prefix; keep the braces (a Redis Cluster hash tag). @default '{infergate:cost}' */
  prefix?: string;
  /** Days the daily report hashes are kept. @default 400 */
  reportRetentionDays?: number;
}

interface Script {
  source: string;
  sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

const scripts = {
  reserve: script(RESERVE_SCRIPT),
  settle: script(SETTLE_SCRIPT),
  release: script(RELEASE_SCRIPT),
  inspect: script(INSPECT_SCRIPT),
};

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

function states(values: readonly unknown[], from: number): Store.LineState[] {
  const result: Store.LineState[] = [];
  for (let i = from; i + 1 < values.length; i += 2)
    result.push({ spentNano: Number(values[i]), reservedNano: Number(values[i + 1]) });
  return result;
}

/**
 * A ledger shared by every process through Redis. Each operation is one Lua script (EVALSHA, with
 * EVAL when the server does not have it cached yet, e.g. after a restart or SCRIPT FLUSH), so the
 * check-and-hold of `reserve` is atomic across processes.
 */
export class RedisBudgetStore implements Store.BudgetStore {
  readonly #redis: RedisLike;
  readonly #prefix: string;
  readonly #keys: [string, string];
  readonly #retentionMs: number;

  constructor(options: RedisBudgetStoreOptions) {
    parseOptions(redisOptionsSchema, options, 'Redis budget store options');
    this.#redis = options.redis;
    this.#prefix = options.prefix ?? '{infergate:cost}';
    this.#keys = [`${this.#prefix}:res`, `${this.#prefix}:resexp`];
    this.#retentionMs = (options.reportRetentionDays ?? 400) * 86_400_000;
  }

  async reserve(request: Store.ReserveRequest): Promise<Store.ReserveResult> {
    throwIfAborted(request.signal);
    const args: (string | number)[] = [
      this.#prefix,
      request.now,
      request.id,
      request.amountNano,
      request.expiresAt,
      request.lines.length,
    ];
    for (const line of request.lines)
      args.push(line.key, line.limitNano ?? '', line.buckets.length, ...line.buckets);
    const pending = this.#run(scripts.reserve, args) as Promise<unknown[]>;
    // Given up on while Redis works: a hold that lands anyway is released, not left to its TTL.
    const reply = await abortable(pending, request.signal, (late) => {
      if (late[0] === 1) return this.release(request.id, request.now);
    });
    if (reply[0] === 1) return { ok: true, lines: states(reply, 1) };
    return { ok: false, failedLine: Number(reply[1]) - 1, lines: states(reply, 2) };
  }

  async settle(request: Store.SettleRequest): Promise<void> {
    const args: (string | number)[] = [
      this.#prefix,
      request.now,
      request.id,
      request.actualNano === null ? '' : Math.max(0, request.actualNano),
      request.lines.length,
    ];
    for (const line of request.lines)
      args.push(line.key, line.current, Math.max(1, line.expireAt - request.now));
    const day = utcDay(request.entry.at);
    args.push(
      day,
      groupField(request.entry),
      Math.max(1, Date.parse(`${day}T00:00:00Z`) + this.#retentionMs - request.now),
      Math.round(request.entry.inputTokens ?? 0),
      Math.round(request.entry.outputTokens ?? 0),
    );
    await abortable(this.#run(scripts.settle, args), request.signal);
  }

  async release(id: string, now: number): Promise<void> {
    await this.#run(scripts.release, [this.#prefix, now, id]);
  }

  async inspect(lines: readonly Store.LedgerLine[], now: number): Promise<Store.LineState[]> {
    const args: (string | number)[] = [this.#prefix, now, lines.length];
    for (const line of lines) args.push(line.key, line.buckets.length, ...line.buckets);
    return states((await this.#run(scripts.inspect, args)) as unknown[], 0);
  }

  async daily(fromDay: string, toDay: string): Promise<Store.DailySpend[]> {
    const rows: Store.DailySpend[] = [];
    for (const day of daysBetween(fromDay, toDay)) {
      const flat = (await this.#redis.call('HGETALL', [`${this.#prefix}:day:${day}`])) as string[];
      const groups = new Map<string, Store.DailySpend>();
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const field = flat[i] as string;
        const cut = field.lastIndexOf('\t');
        const group = field.slice(0, cut);
        const [tenant = '', key = '', model = '', provider = ''] = group.split('\t');
        let row = groups.get(group);
        if (!row) {
          row = {
            day,
            tenant,
            key,
            model,
            provider,
            costUsd: 0,
            calls: 0,
            unpricedCalls: 0,
            inputTokens: 0,
            outputTokens: 0,
          };
          groups.set(group, row);
        }
        const value = Number(flat[i + 1]);
        switch (field.slice(cut + 1)) {
          case 'nano':
            row.costUsd = value / NANO_PER_USD;
            break;
          case 'calls':
            row.calls = value;
            break;
          case 'unpriced':
            row.unpricedCalls = value;
            break;
          case 'in':
            row.inputTokens = value;
            break;
          case 'out':
            row.outputTokens = value;
            break;
        }
      }
      rows.push(...groups.values());
    }
    return rows;
  }

  async #run(target: Script, args: (string | number)[]): Promise<unknown> {
    try {
      return await this.#redis.call('EVALSHA', [target.sha, 2, ...this.#keys, ...args]);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return this.#redis.call('EVAL', [target.source, 2, ...this.#keys, ...args]);
    }
  }
}
