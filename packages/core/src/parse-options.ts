import type * as zc from 'zod/v4/core';
import { ErrorCode, InfergateError } from './errors.js';

// Kept apart from options.ts, which loads zod through node:module: the HTTP entry point validates
// its options with these and must import nothing from `node:`. Typed against zod's core, so both a
// classic schema (`zod`) and a mini one (`zod/mini`, which keeps a Worker bundle small) are accepted.

type SafeParse<S extends zc.$ZodType> = (
  value: unknown,
) => { success: true; data: zc.output<S> } | { success: false; error: zc.$ZodError };

/**
 * Formats zod's issues into one readable line each. A path may hold symbols (a record refuses a
 * symbol key and names it), which `join` cannot turn into text, so each part goes through String.
 */
export function describeIssues(error: { issues: readonly zc.$ZodIssue[] }): string {
  return error.issues
    .map(
      (issue) =>
        `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(options)'}: ${issue.message}`,
    )
    .join('; ');
}

/** Validates with a schema; a failure is an INVALID_ARGUMENT InfergateError naming every bad field. */
export function parseOptions<S extends zc.$ZodType>(schema: S, value: unknown, what: string): zc.output<S> {
  const result = (schema as unknown as { safeParse: SafeParse<S> }).safeParse(value);
  if (!result.success) {
    throw new InfergateError(ErrorCode.InvalidArgument, `invalid ${what}: ${describeIssues(result.error)}`);
  }
  return result.data;
}
