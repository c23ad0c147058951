/**
 * `npm run reelbase -- upload FILE`: the CLI as a user runs it (a child process sharing the server's
 * database), against the server listening on a real port; its bytes pass through a throttling proxy so
 * that it can be interrupted halfway, and run again to resume.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobRunner } from '../src/jobs/runner.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { makeTestMedia, type TestMedia } from './helpers/media.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/** A TCP proxy to `port` that forwards client bytes at `bytesPerSecond` (0: at full speed). */
async function throttlingProxy(port: number) {
  const state = { bytesPerSecond: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      if (state.bytesPerSecond === 0) return void upstream.write(chunk);
      client.pause();
      upstream.write(chunk);
      setTimeout(() => client.resume(), (chunk.length / state.bytesPerSecond) * 1000);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { state, port: (server.address() as net.AddressInfo).port, close: () => new Promise((r) => server.close(r)) };
}

describe.each(dialects)('the upload command on %s', (dialect) => {
  let t: TestApp;
  let dataDir: string;
  let media: TestMedia;
  let port: number;
  let proxy: Awaited<ReturnType<typeof throttlingProxy>>;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), `reelbase-cli-upload-${dialect}-`));
    media = await makeTestMedia();
    t = await createTestApp(dialect, { DATA_DIR: dataDir }, { sqlitePath: path.join(dataDir, 'reelbase.sqlite') });
    await t.services.organizations.bootstrapIfEmpty();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as net.AddressInfo).port;
    proxy = await throttlingProxy(port);
    // The CLI opens the same database: the SQLite file under DATA_DIR, or this file's PostgreSQL schema.
    env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', SIGNING_SECRET: t.config.signingSecret, PUBLIC_URL: `http://127.0.0.1:${port}` };
    delete env.DATABASE_URL;
    if (dialect === 'postgres') {
      const schema = (await t.database.db.selectNoFrom((eb) => eb.fn<string>('current_schema').as('s')).executeTakeFirstOrThrow()).s;
      env.DATABASE_URL = process.env.TEST_DATABASE_URL;
      env.PGOPTIONS = `-c search_path=${schema}`;
    }
  });
  afterAll(async () => {
    await proxy?.close();
    await t?.close();
    await fsp.rm(dataDir, { recursive: true, force: true });
    await fsp.rm(media.dir, { recursive: true, force: true });
  });

  const cli = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(process.execPath, ['scripts/cli.mjs', ...args], { env, cwd: ROOT });
      return { code: 0, last: JSON.parse(stdout.trim().split('\n').at(-1)!), stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, last: JSON.parse(e.stdout.trim().split('\n').at(-1)!), stderr: e.stderr };
    }
  };

  it('uploads a local file, shows progress on stderr, and with --wait prints the ready video', { timeout: 90_000 }, async () => {
    const runner = new JobRunner(t.database.db, { handlers: jobHandlers(t.container), backoff: () => 10, pollMs: 10 });
    runner.start();
    try {
      const result = await cli('upload', media.small, '--name', 'From the CLI', '--wait');
      expect(result.code, result.stderr).toBe(0);
      expect(Object.keys(result.last).sort()).toEqual(['player_uuid', 'status', 'video_id', 'watch_url']);
      expect(result.last.status).toBe('ready');
      expect(result.last.watch_url).toBe(`http://127.0.0.1:${port}/watch/${result.last.player_uuid}`);
      expect(result.stderr).toMatch(/\[#+\] 100%/);
      const video = await t.services.videos.get(1, result.last.video_id as number);
      expect(video).toMatchObject({ name: 'From the CLI', status: 'ready', origin: 'upload', seconds: 2 });
      // The watch page it printed plays.
      expect((await fetch(result.last.watch_url as string)).status).toBe(200);
      // `media backfill-hls` queues a ladder for each ready video without one (here: none, then this one).
      expect((await cli('media', 'backfill-hls')).last).toEqual({ queued: 0 });
      await t.database.db
        .deleteFrom('video_files')
        .where('video_id', '=', result.last.video_id as number)
        .where('quality', '=', 'hls')
        .execute();
      expect((await cli('media', 'backfill-hls', '--org', '1')).last).toEqual({ queued: 1 });
    } finally {
      await runner.stop(1000);
    }
  });

  it('refuses a missing file, a bad --org and a bad --url with a JSON error and a non-zero exit', async () => {
    for (const args of [
      ['upload', path.join(dataDir, 'nope.mp4')],
      ['upload', media.small, '--org', 'x'],
      ['upload', media.small, '--org', '999'],
      ['upload', media.small, '--url', 'ftp://x'],
    ]) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.last.error).toEqual(expect.any(String));
    }
  });

  it('resumes an interrupted upload from its offset when run again', async () => {
    // 6 MB, sent at 2 MB/s through the proxy: interrupted after the first bytes land.
    const big = path.join(dataDir, 'big.bin');
    await fsp.writeFile(big, Buffer.alloc(6 * 1024 * 1024, 3));
    proxy.state.bytesPerSecond = 2 * 1024 * 1024;
    const args = ['scripts/cli.mjs', 'upload', big, '--url', `http://127.0.0.1:${proxy.port}`];
    const first = spawn(process.execPath, args, { env, cwd: ROOT, stdio: 'ignore' });
    const uploadsDir = t.config.uploads.dir;
    const received = () =>
      fs.existsSync(uploadsDir)
        ? fs
            .readdirSync(uploadsDir)
            .filter((f) => !f.endsWith('.json'))
            .map((f) => fs.statSync(path.join(uploadsDir, f)).size)
        : [];
    const end = Date.now() + 20_000;
    while (!received().some((size) => size >= 1024 * 1024) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const [offset] = received();
    expect(offset).toBeGreaterThanOrEqual(1024 * 1024);
    expect(offset).toBeLessThan(6 * 1024 * 1024);

    proxy.state.bytesPerSecond = 0;
    const second = await cli('upload', big, '--url', `http://127.0.0.1:${proxy.port}`);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/Resuming the upload of .*big\.bin \(video \d+\)/);
    const uploads = await t.database.db
      .selectFrom('uploads')
      .selectAll()
      .where('video_id', '=', second.last.video_id as number)
      .execute();
    expect(uploads).toHaveLength(1); // the same upload continued: no second video
    expect(uploads[0]).toMatchObject({ status: 'complete', size: 6 * 1024 * 1024 });
    expect(second.last.status).toBeNull(); // queued for processing (not media: it will end in error)
  });
});
