import { readFile, writeFile } from 'node:fs/promises';
import { createMicroBatcher } from '@infergate/batcher';
import { createTritonClient, InfergateError, type TritonClient } from '@infergate/core';
import { createCostTracker, withCost } from '@infergate/cost';
import { createLazyGateway, fetchHandler, lambdaHandler } from '@infergate/express';
import { type ChatModel, createOpenAIChatModel } from '@infergate/llm';
import { type BreakerSnapshot, createInferRouter, type InferRouter } from '@infergate/router';

export interface ServerlessGateway {
  triton: TritonClient;
  router: InferRouter;
  chat: ChatModel;
}

type RouterState = Record<string, BreakerSnapshot>;

/** What a function instance reads from its environment. */
export interface HandlerEnvironment {
  /** Comma-separated replicas: `primary,secondary`. */
  TRITON_URLS?: string | undefined;
  OPENAI_BASE_URL?: string | undefined;
  OPENAI_API_KEY?: string | undefined;
  /**
   * Where the router state is kept between instances. A file stands in for what a deployment would
   * use (DynamoDB, S3, Redis); `INFERGATE_ROUTER_STATE` (JSON) is read when the file has none.
   */
  ROUTER_STATE_FILE?: string | undefined;
}

/** A Lambda event: the input text of one request. */
export interface ClassifyEvent {
  text: string;
  tenant?: string;
}

export interface ClassifyResult {
  echoed: string;
  reply: string;
  coldStart: boolean;
}

/**
 * Both handler styles over one lazily built gateway. Module scope is per process, so a warm
 * invocation reuses the gRPC channels, breakers and batcher of the previous one.
 */
export function createHandlers(env: HandlerEnvironment) {
  const urls = (env.TRITON_URLS ?? '').split(',').filter((url) => url !== '');
  const stateFile = env.ROUTER_STATE_FILE;
  const gateway = createLazyGateway<ServerlessGateway, RouterState>({
    create: ({ routerState }) => {
      const replicas = urls.map((url) => createTritonClient({ url, timeoutMs: 5_000 }));
      const router = createInferRouter({
        targets: replicas.map((client, index) => ({
          name: index === 0 ? 'primary' : `secondary-${index}`,
          transport: client.grpc,
        })),
        // Instances are short-lived and hand the breakers' state to the next one: an open breaker
        // stays open for 30 s, across cold starts, before a probe tries the replica again.
        breaker: { openMs: 30_000 },
        ...(routerState === undefined ? {} : { initialState: routerState }),
      });
      const batcher = createMicroBatcher(router, { flush: 'adaptive' });
      const costs = createCostTracker({
        budgets: [{ id: 'tenant-day', scope: ['tenant'], window: 'day', hardLimitUsd: 1 }],
      });
      return {
        router,
        triton: createTritonClient({ url: urls[0] as string, transport: batcher }),
        chat: withCost(
          createOpenAIChatModel({
            defaultModel: 'gpt-4o-mini',
            ...(env.OPENAI_BASE_URL === undefined ? {} : { baseURL: env.OPENAI_BASE_URL }),
            ...(env.OPENAI_API_KEY === undefined ? {} : { apiKey: env.OPENAI_API_KEY }),
          }),
          { tracker: costs },
        ),
      };
    },
    routerStateEnv: 'INFERGATE_ROUTER_STATE',
    loadRouterState: async () =>
      stateFile === undefined ? undefined : await readFile(stateFile, 'utf8').catch(() => undefined),
    exportRouterState: (built) => built.router.toJSON(),
    saveRouterState: async (state) => {
      if (stateFile !== undefined) await writeFile(stateFile, JSON.stringify(state));
    },
    onRouterStateError: (error) => console.warn(`router state ignored: ${error.message}`),
  });

  async function classify(
    built: ServerlessGateway,
    event: ClassifyEvent,
    timeoutMs: number | undefined,
  ): Promise<Omit<ClassifyResult, 'coldStart'>> {
    const deadline = timeoutMs === undefined ? {} : { timeoutMs };
    const tenant = event.tenant ?? 'anonymous';
    const [echo, answer] = await Promise.all([
      built.triton.infer(
        'identity',
        [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 1], data: [event.text] }],
        {
          ...deadline,
          tenant,
        },
      ),
      built.chat.chat(
        { model: '', messages: [{ role: 'user', content: event.text }] },
        { ...deadline, tenant },
      ),
    ]);
    return { echoed: echo.output('OUTPUT0').strings()[0] ?? '', reply: answer.text };
  }

  /** AWS Lambda: `export const handler = createHandlers(process.env).lambda`. */
  const lambda = lambdaHandler(
    gateway,
    async (event: ClassifyEvent, { gateway: built, timeoutMs, coldStart }) => ({
      ...(await classify(built, event, timeoutMs)),
      coldStart,
    }),
  );

  /** Web standard: `POST /` with a JSON `ClassifyEvent` body. */
  const fetch = fetchHandler(gateway, async (request, { gateway: built, coldStart }) => {
    if (request.method !== 'POST') throw new InfergateError('UNIMPLEMENTED', 'POST a JSON body');
    const event = (await request.json()) as ClassifyEvent;
    return Response.json({ ...(await classify(built, event, 10_000)), coldStart } satisfies ClassifyResult);
  });

  return { gateway, lambda, fetch };
}
