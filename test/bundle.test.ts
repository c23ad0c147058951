/**
 * What `npm start` runs after `npm ci`: the server bundled into dist/server.cjs (scripts/build.mjs),
 * compiled from V8's code cache from the second start on (scripts/start.mjs). The paths that load
 * their files or packages at run time are exercised through it: the player's assets, the docs UI,
 * the tus server, the ffmpeg probe cache. The CLI runs its own bundle, dist/cli.cjs (scripts/cli.mjs).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptHandles, freePort, listeningSockets, until } from './helpers/processes.ts';
import { ACCEPT_HANDLES } from '../src/net/accept-handles.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/**
 * The server's code caches in CODE_CACHE_DIR, named by the build's stamp. `npm start` gives Node
 * flags (package.json), so its cache's name carries their digest too (scripts/run-bundle.mjs).
 */
const NPM_START_CACHE = new RegExp(`^server\\.cjs\\.[0-9a-f]{8}\\.${process.version.replace(/\./g, '\\.')}\\.[0-9a-f]{8}\\.cache$`);
const CLI_CACHE = new RegExp(`^cli\\.cjs\\.[0-9a-f]{8}\\.${process.version.replace(/\./g, '\\.')}\\.cache$`);

describe('the bundle npm start runs', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-bundle-'));
  // The code caches go to a folder of this file's: other test files run the same bundles at the same
  // time, and would write dist/'s caches between this file's removing one and looking for it.
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-bundle-cache-'));
  const npmStartCached = () => fs.readdirSync(cacheDir).some((f) => NPM_START_CACHE.test(f));
  let port: number;

  beforeAll(async () => {
    await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: ROOT });
    port = await freePort();
  }, 60_000);
  afterAll(() => {
    for (const dir of [dataDir, cacheDir]) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** `npm start` until its first answer; answers its stderr so far, and how to stop it. */
  async function start(extraEnv: Record<string, string> = {}): Promise<{ child: ChildProcess; stderr: () => string; stop: () => Promise<void> }> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      RTMP_PORT: '0',
      LOG_LEVEL: 'warn',
      START_TRACE: '1',
      CODE_CACHE_DIR: cacheDir,
      ...extraEnv,
    };
    for (const key of ['DATABASE_URL', 'PUBLIC_URL', 'HOST', 'MEDIA_DIR', 'STORAGE_URL']) delete env[key];
    const child = spawn('npm', ['start', '--silent'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const end = Date.now() + 30_000;
    while (
      !(await fetch(`http://127.0.0.1:${port}/dashboard/v1`).then(
        () => true,
        () => false,
      ))
    ) {
      if (Date.now() > end || child.exitCode !== null) throw new Error(`npm start did not answer:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const stop = async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    };
    return { child, stderr: () => stderr, stop };
  }

  it('leaves the bundles ASCII, read without decoding UTF-8', () => {
    // Comments' em dashes, §s and arrows are written as escapes (scripts/build.mjs); code's are escaped by
    // esbuild, but for regular expressions' literal characters: write those as escapes in src/ (`\u2022`).
    for (const name of ['server', 'cli', 'rollup-thread']) {
      const text = fs.readFileSync(path.join(ROOT, 'dist', `${name}.cjs`), 'utf8');
      const outside = [...text.matchAll(/^.*\P{ASCII}.*$/gmu)].map((m) => m[0].trim().slice(0, 120));
      expect(outside, `${name}.cjs: lines with characters beyond ASCII`).toEqual([]);
    }
  });

  it("serves the API, the pages' assets, the docs UI and tus uploads from its code cache", { timeout: 90_000 }, async () => {
    // The first start compiles the bundle and writes the code cache a few seconds in.
    const first = await start();
    try {
      expect(first.stderr()).toContain('start: bundle, code cache');
      expect(first.stderr()).not.toContain('through tsx');
      // It accepts from its one listening socket through ACCEPT_HANDLES descriptors (src/net/accept-handles.ts).
      expect(listeningSockets(port)).toHaveLength(1);
      await until('its handles', async () => acceptHandles(port).join() === String(ACCEPT_HANDLES));
      const end = Date.now() + 15_000;
      while (!npmStartCached() && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
      expect(npmStartCached()).toBe(true);
      // ffmpeg's version is remembered for the next start.
      expect(fs.existsSync(path.join(dataDir, '.tool-versions.json'))).toBe(true);
    } finally {
      await first.stop();
    }
    // Every part below runs from code compiled out of the cache (where V8 drops a dynamic import's callback).
    const second = await start();
    try {
      expect(second.stderr()).toContain('start: bundle, code cache used');
      const token = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
      const api = (p: string, init: RequestInit = {}) =>
        fetch(`http://127.0.0.1:${port}${p}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) } });
      expect((await api('/dashboard/v1/players')).status).toBe(200);
      for (const asset of ['player.js', 'player.css', 'media-chrome.js', 'hls.js']) {
        const res = await fetch(`http://127.0.0.1:${port}/web/${asset}`);
        expect(res.status, asset).toBe(200);
        expect((await res.text()).length, asset).toBeGreaterThan(100);
      }
      const docs = await fetch(`http://127.0.0.1:${port}/dashboard/docs/`);
      expect(docs.status).toBe(200);
      expect(await docs.text()).toMatch(/<title>Reelbase[^<]*<\/title>/);
      expect((await fetch(`http://127.0.0.1:${port}/dashboard/docs/json`)).status).toBe(200);
      // A direct upload: the tus server is loaded at its first request.
      const upload = await api('/dashboard/v1/uploads', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Clip' }),
      });
      expect(upload.status).toBe(201);
      const { url } = (await upload.json()) as { url: string };
      const created = await fetch(url, { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '4' } });
      expect(created.status).toBe(201);
      const head = await fetch(url, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } });
      expect(head.headers.get('upload-offset')).toBe('0');
      const end = Date.now() + 5_000;
      while (!/start: first response \(\d+\)/.test(second.stderr()) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(second.stderr()).toMatch(/start: first response \(\d+\)/);
      expect(second.stderr()).not.toMatch(/"level":50/);
    } finally {
      await second.stop();
    }
  });

  it("rolls the viewers' reports up on the rollups' thread, from its file beside the bundle", { timeout: 60_000 }, async () => {
    // A data directory of its own: the other tests' servers left a rollup queued 30 s ahead.
    const own = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-bundle-rollups-'));
    const server = await start({ DATA_DIR: own, ANALYTICS_ROLLUP_SECONDS: '1', REPORTS_PER_10_MINUTES: '1000000' });
    try {
      const token = fs.readFileSync(path.join(own, 'owner-token'), 'utf8').trim();
      const api = (p: string, init: RequestInit = {}) =>
        fetch(`http://127.0.0.1:${port}/dashboard/v1${p}`, {
          ...init,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
        });
      const created = await api('/players', {
        method: 'POST',
        body: JSON.stringify({
          // A chapter for the report to be about (its video's source answers nothing: no transcoding needed here).
          player: { name: 'Rolled up', chapters_attributes: [{ position: 0, video_attributes: { name: 'Clip', upload_url: 'http://127.0.0.1:9/clip.mp4' } }] },
        }),
      });
      expect(created.status).toBe(201);
      const { uuid } = (await created.json()) as { uuid: string };
      const views = async () => ((await (await api('/analytics/summary')).json()) as { views: number }).views;
      const before = await views();
      // More than one batch of the event loop's (1,000): a backlog the thread is started for.
      const REPORTS = 1_200;
      for (let sent = 0; sent < REPORTS; sent += 50) {
        const statuses = await Promise.all(
          Array.from({ length: 50 }, async (_, i) => {
            const report = await fetch(`http://127.0.0.1:${port}/watch/${uuid}/analytics`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0 Safari/537.36' },
              body: JSON.stringify({ type: 'view', percent_watched: 0, chapter: 0, player_load_id: `bundle-load-${sent + i}`, visitor_uuid: 'bundle-visitor' }),
            });
            return report.status;
          }),
        );
        expect(new Set(statuses)).toEqual(new Set([204]));
      }
      const end = Date.now() + 20_000;
      while ((await views()) < before + REPORTS && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
      expect(await views(), server.stderr()).toBe(before + REPORTS);
      // (The video's processing fails, its source refused: the rollups' job must not.)
      expect(server.stderr()).not.toContain('analytics.rollup');
    } finally {
      await server.stop();
      fs.rmSync(own, { recursive: true, force: true });
    }
  });

  it('runs the CLI from its bundle, and from its code cache once a command has run', { timeout: 60_000 }, async () => {
    const cliCached = () => fs.readdirSync(cacheDir).some((f) => CLI_CACHE.test(f));
    expect(cliCached()).toBe(false);
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, START_TRACE: '1', CODE_CACHE_DIR: cacheDir };
    delete env.DATABASE_URL;
    const cli = (...args: string[]) => promisify(execFile)('npm', ['run', '--silent', 'reelbase', '--', ...args], { cwd: ROOT, env });
    const first = await cli('org', 'create', '--name', 'From the bundle');
    expect(first.stderr).toContain('start: bundle, code cache none yet');
    expect(JSON.parse(first.stdout.trim().split('\n').at(-1)!).auth_token).toMatch(/^rb_/);
    expect(cliCached()).toBe(true);
    const second = await cli('org', 'create', '--name', 'From the cache');
    expect(second.stderr).toContain('start: bundle, code cache used');
    expect(JSON.parse(second.stdout.trim().split('\n').at(-1)!).auth_token).toMatch(/^rb_/);
  });
});
