import { ErrorCode, InfergateError } from '@infergate/core';
import type { ChatRequest } from '../types.js';

/** The request's model, else the adapter's default; INVALID_ARGUMENT when there is neither. */
export function resolveModel(
  request: ChatRequest,
  defaultModel: string | undefined,
  provider: string,
): string {
  if (request === null || typeof request !== 'object' || !Array.isArray(request.messages)) {
    throw new InfergateError(ErrorCode.InvalidArgument, `${provider}: a chat request needs a messages array`);
  }
  const model = request.model === '' || request.model === undefined ? defaultModel : request.model;
  if (model === undefined || model === '') {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `${provider}: the request names no model and the adapter has no defaultModel`,
    );
  }
  return model;
}
