import { describe, expect, it } from 'vitest';
import {
  FIXTURE_EXIT_BOUND_MS as EXIT_BOUND_MS,
  runSourceFixture,
} from '../../../../test/support/source-fixture.js';

const runFixture = () =>
  runSourceFixture(new URL('./client-without-zod-fixture.ts', import.meta.url), { sourceCondition: false });

describe('createTritonClient', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('validates valid options in a fresh process without loading zod', async () => {
    const { code, stdout, stderr } = await runFixture();
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const result = JSON.parse(stdout.slice(stdout.indexOf('RESULT ') + 7));
    expect(result).toEqual({ afterClient: false, engine: 'http2', afterSchema: true });
  });
});
