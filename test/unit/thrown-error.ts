// For package tests that check a synchronous refusal (a builder, a factory's options): the error a
// call throws, asserted to be an InfergateError (and of `code` when given).
import { type ErrorCode, InfergateError } from '@infergate/core';
import { expect } from 'vitest';

/** The InfergateError that `run` throws; fails the test when it returns or throws something else. */
export function thrownInfergateError(run: () => unknown, code?: ErrorCode): InfergateError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InfergateError);
    if (code !== undefined) expect((error as InfergateError).code).toBe(code);
    return error as InfergateError;
  }
  throw new Error('expected the call to throw an InfergateError');
}
