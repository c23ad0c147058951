import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { openDatabase } from '../../src/db/database.ts';
import { collectHandlers } from '../../src/jobs/registry.ts';
import { jobHandlers } from '../../src/modules/job-handlers.ts';
import { JOB_KINDS } from '../../src/modules/job-kinds.ts';

const noop = async () => {};

describe('job registry', () => {
  it('gathers one handler per kind', () => {
    const all = collectHandlers(['a', 'b'], [{ a: noop }, { b: noop }]);
    expect(Object.keys(all).sort()).toEqual(['a', 'b']);
  });

  it('refuses a kind handled twice, a kind without a handler and a handler of no kind', () => {
    expect(() => collectHandlers(['a'], [{ a: noop }, { a: noop }])).toThrow(/"a" has two handlers/);
    expect(() => collectHandlers(['a', 'b'], [{ a: noop }])).toThrow(/without a handler: b/);
    expect(() => collectHandlers(['a'], [{ a: noop, z: noop }])).toThrow(/unknown kind "z"/);
  });

  it("this build's areas handle every kind of job-kinds.ts exactly once", async () => {
    const database = openDatabase({ sqlitePath: ':memory:' });
    try {
      const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: '/tmp/reelbase-test', SIGNING_SECRET: 'test-signing-secret-0123456789' });
      const handlers = jobHandlers(createContainer({ config, database }));
      expect(Object.keys(handlers).sort()).toEqual([...JOB_KINDS].sort());
    } finally {
      await database.destroy();
    }
  });
});
