import { describe, expect, it } from 'vitest';
import { InfergateError } from './errors.js';
import { withExtension } from './extension.js';

const unimplemented = (text: string) => () => Promise.reject(new InfergateError('UNIMPLEMENTED', text));

describe('withExtension', () => {
  it('names the extension when the server lacks the method', async () => {
    for (const text of ['The server does not implement the method /x/Y', 'Method not found!']) {
      const error = await withExtension('statistics', 'modelStatistics()', 'h:1', unimplemented(text)).catch(
        (e) => e,
      );
      expect(error.message).toContain(
        "does not support the 'statistics' extension needed by modelStatistics()",
      );
      expect(error.details).toEqual({ extension: 'statistics' });
      expect(error.cause.rawMessage).toBe(text);
    }
  });

  it("keeps the server's own UNIMPLEMENTED reasons", async () => {
    const text = 'trace file location can not be updated through network protocol';
    const error = await withExtension('trace', 'updateTraceSettings()', 'h:1', unimplemented(text)).catch(
      (e) => e,
    );
    expect(error.rawMessage).toBe(text);
  });

  it('passes other errors and results through', async () => {
    expect(await withExtension('trace', 'x', 'h:1', async () => 7)).toBe(7);
    const other = new InfergateError('UNAVAILABLE', 'down');
    expect(await withExtension('trace', 'x', 'h:1', () => Promise.reject(other)).catch((e) => e)).toBe(other);
  });
});
