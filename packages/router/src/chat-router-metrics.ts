import { InfergateError } from '@infergate/core';
import type { ChatStreamEvent } from '@infergate/llm';
import type { Attributes } from '@opentelemetry/api';
import { routerInstruments } from './router-metrics.js';

/**
 * The GenAI client metrics of a routed chat call as its caller sees it, fallbacks and waits
 * included: `gen_ai.client.operation.duration` and, for streams, time to first chunk and time per
 * output chunk, with `gen_ai.provider.name` "router" (the router's own ChatModel identity) and
 * `infergate.router`. Token usage is not recorded here: the adapter that spent the tokens records
 * them, and counting them twice would double every sum.
 */
export class ChatRouterMetrics {
  readonly #enabled: boolean;
  readonly #router: string;

  constructor(enabled: boolean, router: string) {
    this.#enabled = enabled;
    this.#router = router;
  }

  #attributes(model: string): Attributes {
    return {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'router',
      'gen_ai.request.model': model,
      'infergate.router': this.#router,
    };
  }

  async chat<R extends { model: string }>(model: string, run: () => Promise<R>): Promise<R> {
    if (!this.#enabled || routerInstruments() === undefined) return run();
    const started = performance.now();
    const attributes = this.#attributes(model);
    try {
      const response = await run();
      if (response.model !== '') attributes['gen_ai.response.model'] = response.model;
      return response;
    } catch (error) {
      attributes['error.type'] = InfergateError.from(error).code;
      throw error;
    } finally {
      routerInstruments()?.chatDuration.record((performance.now() - started) / 1000, attributes);
    }
  }

  stream(model: string, events: AsyncIterable<ChatStreamEvent>): AsyncIterable<ChatStreamEvent> {
    if (!this.#enabled || routerInstruments() === undefined) return events;
    return this.#measured(model, events);
  }

  async *#measured(model: string, events: AsyncIterable<ChatStreamEvent>): AsyncGenerator<ChatStreamEvent> {
    const started = performance.now();
    const base = this.#attributes(model);
    // Chunks are recorded with `base`; what is learnt later goes on the final duration's own copy.
    const attributes: Attributes = { ...base };
    const recording = routerInstruments();
    let last: number | undefined;
    let completed = false;
    try {
      for await (const event of events) {
        if (event.type === 'text-delta') {
          const now = performance.now();
          if (last === undefined) recording?.firstChunk.record((now - started) / 1000, base);
          else recording?.perChunk.record((now - last) / 1000, base);
          last = now;
        } else if (event.type === 'finish' && event.model !== '') {
          attributes['gen_ai.response.model'] = event.model;
        }
        yield event;
      }
      completed = true;
    } catch (error) {
      attributes['error.type'] = InfergateError.from(error).code;
      throw error;
    } finally {
      // A consumer that leaves early cancelled the call.
      if (!completed && attributes['error.type'] === undefined) attributes['error.type'] = 'CANCELLED';
      routerInstruments()?.chatDuration.record((performance.now() - started) / 1000, attributes);
    }
  }
}
