import { type CallOptions, ErrorCode, InfergateError, type InferRequest } from '@infergate/core';

/**
 * The call's Triton priority: `CallOptions.priority`, else the request's `priority` parameter; 0 is
 * the model's default level. Checked against `priorityLevels` when that is set.
 */
export function requestPriority(
  request: InferRequest,
  options: CallOptions,
  priorityLevels: number | undefined,
): number {
  let priority = options.priority;
  if (priority === undefined) {
    const parameter = request.parameters?.priority;
    if (parameter === undefined) return 0;
    priority = typeof parameter === 'object' ? Number(parameter.value) : Number(parameter);
  }
  if (!Number.isSafeInteger(priority) || priority < 0) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `priority must be a non-negative integer, got ${priority}`,
      {
        model: request.model,
      },
    );
  }
  if (priorityLevels !== undefined && priority > priorityLevels) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `priority ${priority} is above the ${priorityLevels} priority levels configured`,
      { model: request.model },
    );
  }
  return priority;
}
