import type { CallOptions } from '@infergate/core';
import type { Hedger } from './hedger.js';
import type { ExecutePolicy, RouteEngine, RouteTarget } from './route-engine.js';
import { partialStreamError } from './stream-partial.js';

/**
 * A routed stream: falls back (and retries) only until the first chunk arrives — the attempt
 * timeout covers that wait only. After it, the stream is bound to its target; a failure ends it
 * with a typed error carrying the partial output, and leaving the loop early aborts the attempt.
 */
export async function* routedStream<T extends RouteTarget, C>(
  engine: RouteEngine<T>,
  runner: Hedger<T>,
  call: CallOptions,
  open: (target: T, options: CallOptions) => AsyncIterable<C>,
  partialOf: (chunks: readonly C[]) => unknown,
  policy: ExecutePolicy<T> = {},
): AsyncGenerator<C, void, undefined> {
  const { value: first, handle } = await runner.run(
    call,
    async (target, options) => {
      const iterator = open(target, options)[Symbol.asyncIterator]();
      try {
        return { iterator, next: await iterator.next() };
      } catch (error) {
        await iterator.return?.();
        throw error;
      }
    },
    policy,
    true,
    // A hedged stream's losing attempt that had its first chunk too: closed, counted as cancelled.
    async ({ value, handle: lost }) => {
      await value.iterator.return?.()?.catch(() => undefined);
      await engine.finish(lost, 'cancelled');
      lost.callScope.dispose();
    },
  );
  const { iterator } = first;
  let next = first.next;
  const chunks: C[] = [];
  let finished = false;
  handle.stopTimer();
  try {
    while (next.done !== true) {
      chunks.push(next.value);
      yield next.value;
      try {
        // Raced: a target that ignores its signal cannot hold the stream past the deadline or an abort.
        next = await handle.scope.race(iterator.next());
      } catch (thrown) {
        const { error, errorClass } = engine.classify(handle, thrown);
        finished = true;
        await engine.finish(handle, errorClass, error);
        throw partialStreamError(error, handle.target.name, partialOf(chunks));
      }
    }
    finished = true;
    await engine.finish(handle, 'success');
  } finally {
    if (!finished) {
      // The consumer left early: cancel this attempt only, and count nothing against the target.
      handle.scope.abort(new DOMException('the stream consumer stopped reading', 'AbortError'));
      await iterator.return?.()?.catch(() => undefined);
      await engine.finish(handle, 'cancelled');
    }
    handle.callScope.dispose();
  }
}
