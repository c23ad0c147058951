import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { openDatabase } from '../../src/db/database.ts';
import { collectHandlers } from '../../src/jobs/registry.ts';
import { jobHandlers } from '../../src/modules/job-handlers.ts';

const noop = async () => {};

describe('job lanes', () => {
  it('collectHandlers gives each handler the lane of its kind (short when not said)', () => {
    expect(collectHandlers({ a: 'media', b: 'short' }, [{ a: noop, b: noop }])).toEqual({
      a: { handler: noop, lane: 'media' },
      b: { handler: noop, lane: 'short' },
    });
    expect(collectHandlers(['a'], [{ a: noop }])).toEqual({ a: { handler: noop, lane: 'short' } });
    expect(() => collectHandlers({ a: 'media' }, [{ a: noop }, { a: noop }])).toThrow(/"a" has two handlers/);
  });

  it('downloads and transcodes run in the media lane, everything else in the short lane', async () => {
    const database = openDatabase({ sqlitePath: ':memory:' });
    try {
      const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: '/tmp/reelbase-test', SIGNING_SECRET: 'test-signing-secret-0123456789' });
      const handlers = jobHandlers(createContainer({ config, database }));
      const media = Object.keys(handlers).filter((kind) => handlers[kind].lane === 'media');
      expect(media.sort()).toEqual(['caption.fetch', 'live.record', 'thumbnail.fetch', 'video.files', 'video.hls', 'video.process']);
      for (const kind of Object.keys(handlers)) expect(typeof handlers[kind].handler, kind).toBe('function');
    } finally {
      await database.destroy();
    }
  });
});
