import { describe, expect, it } from 'vitest';
import { createTritonClient } from './client.js';
import { InfergateError } from './errors.js';
import { assertSafeHeaders } from './header-values.js';

function refusal(run: () => unknown): InfergateError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InfergateError);
    return error as InfergateError;
  }
  throw new Error('expected a refusal');
}

describe('header values', () => {
  it('refuses CR, LF, other control characters and non-ASCII, naming the header but not the value', () => {
    for (const value of ['tok-SECRET\r\nx-evil: 1', 'tok-SECRET\n', 'tok-SECRET\u0000', 'tök-SECRET']) {
      const error = refusal(() => assertSafeHeaders({ authorization: value }));
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.rawMessage).toContain("'authorization'");
      expect(error.rawMessage).not.toContain('SECRET');
    }
    expect(() =>
      assertSafeHeaders({ authorization: 'Bearer abc.DEF-123_~+/=', 'x-tab': 'a\tb' }),
    ).not.toThrow();
    expect(refusal(() => assertSafeHeaders({ 'bad name': 'v' })).code).toBe('INVALID_ARGUMENT');
  });

  it('refuses a symbol key or a record of another shape, which Object.entries would drop or misread', () => {
    const shapes: unknown[] = [
      { authorization: 'Bearer t', [Symbol('tenant')]: 'v' },
      'abc',
      ['x'],
      5,
      null,
      new Map([['authorization', 'Bearer t']]),
    ];
    for (const headers of shapes) {
      const error = refusal(() => assertSafeHeaders(headers as never, 'call headers'));
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.rawMessage).toMatch(/^call headers: /);
    }
    expect(refusal(() => assertSafeHeaders({ [Symbol('tenant')]: 'v' })).rawMessage).toContain(
      'Symbol(tenant)',
    );
    // What z.record takes, call headers take too: no prototype, or a hidden symbol key.
    const hidden = Object.defineProperty({ a: 'b' }, Symbol('hidden'), { value: 1, enumerable: false });
    for (const headers of [Object.assign(Object.create(null), { a: 'b' }), hidden]) {
      expect(() => assertSafeHeaders(headers)).not.toThrow();
    }
  });

  it('client options: headers and accessToken with CR/LF are refused at creation', () => {
    const headers = refusal(() =>
      createTritonClient({ url: '127.0.0.1:8001', headers: { authorization: 'Bearer tok-SECRET\r\nx: 1' } }),
    );
    expect(headers.code).toBe('INVALID_ARGUMENT');
    expect(headers.rawMessage).not.toContain('SECRET');
    const token = refusal(() => createTritonClient({ url: '127.0.0.1:8001', accessToken: 'tok-SECRET\n' }));
    expect(token.code).toBe('INVALID_ARGUMENT');
    expect(token.rawMessage).toContain('accessToken');
    expect(token.rawMessage).not.toContain('SECRET');
  });

  it('call headers with CR/LF fail the call with INVALID_ARGUMENT before anything is sent', async () => {
    const client = createTritonClient({ url: '127.0.0.1:1' });
    try {
      const error = await client
        .serverLive({ headers: { 'x-user': 'name\r\nx-admin: yes' } })
        .catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(InfergateError);
      expect((error as InfergateError).code).toBe('INVALID_ARGUMENT');
      for (const engine of ['http2', 'grpc-js'] as const) {
        const other = createTritonClient({ url: '127.0.0.1:1', engine });
        try {
          const symbolKey = await other
            .infer('m', [], { headers: { [Symbol('tenant')]: 'v' } as never })
            .catch((thrown: unknown) => thrown);
          expect(symbolKey).toBeInstanceOf(InfergateError);
          expect((symbolKey as InfergateError).code).toBe('INVALID_ARGUMENT');
          expect((symbolKey as InfergateError).rawMessage).toContain('Symbol(tenant)');
        } finally {
          await other.close();
        }
      }
    } finally {
      await client.close();
    }
  });
});
