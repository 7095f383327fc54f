import { describe, expect, it } from 'vitest';
import { ErrorCode, InfergateError } from '../errors.js';
import { ServerExtensions } from './server-extensions.js';

describe('ServerExtensions', () => {
  it('asks the server once, again on refresh, and again after a failed answer', async () => {
    const answers: (readonly string[] | Error)[] = [
      ['statistics'],
      ['statistics', 'sequence'],
      new InfergateError(ErrorCode.Unavailable, 'connection refused'),
      ['binary_tensor_data'],
    ];
    let asked = 0;
    const extensions = new ServerExtensions(async () => {
      const answer = answers[asked++];
      if (answer instanceof Error) throw answer;
      return { extensions: answer ?? [] };
    });
    expect([...(await extensions.get())]).toEqual(['statistics']);
    expect([...(await extensions.get())]).toEqual(['statistics']);
    expect(asked).toBe(1);
    expect([...(await extensions.get({ refresh: true }))]).toEqual(['statistics', 'sequence']);
    await expect(extensions.get({ refresh: true })).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    expect([...(await extensions.get())]).toEqual(['binary_tensor_data']);
    expect(asked).toBe(4);
  });
});
