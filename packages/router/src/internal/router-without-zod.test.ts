import { describe, expect, it } from 'vitest';
import {
  FIXTURE_EXIT_BOUND_MS as EXIT_BOUND_MS,
  runSourceFixture,
} from '../../../../test/support/source-fixture.js';

// As core's client-without-zod.test.ts: a fresh process, so that nothing else loaded zod first.
const runFixture = () => runSourceFixture(new URL('./router-without-zod-fixture.ts', import.meta.url));

describe('createInferRouter and createChatRouter', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('import and validate valid options (saved breaker states too) in a fresh process without loading zod', async () => {
    const { code, stdout, stderr } = await runFixture();
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const result = JSON.parse(stdout.slice(stdout.indexOf('RESULT ') + 7));
    expect(result).toEqual({ afterImport: false, afterRouters: false, afterSchema: true });
  });
});
