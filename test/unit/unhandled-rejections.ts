import { afterAll, beforeAll } from 'vitest';

/**
 * Registers this file's hooks: every unhandled promise rejection while the file runs is pushed to
 * the returned list (assert it empty after each test's cleanup, so a stray rejection fails it).
 */
export function recordUnhandledRejections(): unknown[] {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(() => {
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
  });
  return unhandled;
}
