import { createAdminHandlers } from './admin-handlers.js';
import type { HandlerTable } from './handler-table.js';
import { handleModelInfer } from './infer-handler.js';
import { toModelConfig, toModelMetadata } from './model-config.js';
import type { ServerState } from './server-state.js';

/** The unary RPCs (ModelStreamInfer is in stream-handler.ts). */
export function createHandlers(state: ServerState): HandlerTable {
  return {
    serverLive: () => ({ live: true }),
    serverReady: () => ({ ready: true }),
    serverMetadata: () => ({
      name: state.identity.name,
      version: state.identity.version,
      extensions: [...state.identity.extensions],
    }),
    // Triton answers an unknown model or version with ready: false, not with an error.
    modelReady: (request) => ({ ready: state.models.find(request.name, request.version) !== undefined }),
    modelMetadata: (request) => toModelMetadata(state.models.resolve(request.name, request.version).model),
    modelConfig: (request) => ({
      config: toModelConfig(state.models.resolve(request.name, request.version).model),
    }),
    modelInfer: (request, context) => handleModelInfer(state, request, context),
    ...createAdminHandlers(state),
  };
}
