/**
 * The scale-out deployment (docs/deployment.md) as real processes: two API processes (ROLE=api) and
 * a worker (ROLE=worker) sharing the database and one S3 bucket (a real S3-compatible server process).
 * A file is uploaded with tus half to API 1 and the rest to API 2, processed by the worker (killed
 * mid-transcode: a second worker finishes the job), and played from API 2; API 1 is killed under
 * traffic and API 2 keeps answering, with nothing API 1 acknowledged lost.
 * SQLite: the processes share one DATA_DIR on one machine (its database file). PostgreSQL: each process
 * has a DATA_DIR of its own, as on separate machines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as tus from 'tus-js-client';
import { freePort, freshSchemaEnv, until } from './helpers/processes.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { dialects } from './helpers/harness.ts';
import { ffmpegPath } from './helpers/media.ts';
import { startS3Server, type S3Server } from './helpers/s3-server.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '..');
const P = '/dashboard/v1';
const run = promisify(execFile);

/** Whether a process under `pid` (its children, theirs…) is an ffmpeg: what /proc says of each. */
function runsFfmpeg(pid: number): boolean {
  const parents = new Map<number, number[]>();
  const names = new Map<number, string>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      names.set(Number(entry), stat.slice(stat.indexOf('(') + 1, close));
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const under = [...(parents.get(pid) ?? [])];
  for (let next = under.pop(); next !== undefined; next = under.pop()) {
    if (names.get(next)?.includes('ffmpeg')) return true;
    under.push(...(parents.get(next) ?? []));
  }
  return false;
}

interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
}

describe.each(dialects)('several nodes on %s', (dialect) => {
  const procs: Proc[] = [];
  const dirs: string[] = [];
  let s3: S3Server | undefined;

  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => new Promise((r) => (p.child.exitCode !== null || p.child.signalCode !== null ? r(null) : p.child.once('exit', r)))));
    await s3?.close();
    for (const dir of dirs) await fsp.rm(dir, { recursive: true, force: true });
  });

  it('uploads across two API nodes, survives a worker and an API node dying, and loses nothing', { timeout: 240_000 }, async () => {
    s3 = await startS3Server();
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), `reelbase-scale-${dialect}-`));
    dirs.push(root);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...s3.env,
      SIGNING_SECRET: 'scale-out-test-signing-secret-0123',
      RTMP_PORT: '0',
      LOG_LEVEL: 'warn',
      JOB_LEASE_SECONDS: '3',
      WORKER_CONCURRENCY: '1',
    };
    for (const key of ['DATABASE_URL', 'PGOPTIONS', 'PUBLIC_URL', 'HOST', 'MEDIA_DIR', 'REDIS_URL']) delete env[key];
    if (dialect === 'postgres') {
      Object.assign(env, await freshSchemaEnv('scaleout'));
    }
    const dataDir = (name: string) => (dialect === 'sqlite' ? path.join(root, 'shared') : path.join(root, name));
    const start = (name: string, extra: Record<string, string>): Proc => {
      const child = spawn(process.execPath, ['scripts/start.mjs'], {
        cwd: ROOT,
        env: { ...env, DATA_DIR: dataDir(name), ...extra },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const proc = { name, child, output: () => out };
      procs.push(proc);
      return proc;
    };
    const [port1, port2] = [await freePort(), await freePort()];
    const base1 = `http://127.0.0.1:${port1}`;
    const base2 = `http://127.0.0.1:${port2}`;

    const api1 = start('api1', { ROLE: 'api', PORT: String(port1), PUBLIC_URL: base1 });
    const token = await until('the owner token', async () => fs.readFileSync(path.join(dataDir('api1'), 'owner-token'), 'utf8').trim(), 60_000);
    start('api2', { ROLE: 'api', PORT: String(port2), PUBLIC_URL: base2 });
    const auth = { authorization: `Bearer ${token}` };
    await until('API 2', async () => (await fetch(`${base2}${P}`, { headers: auth })).ok);
    let worker = start('worker1', { ROLE: 'worker' });

    // A 10 s 720p clip: its transcode lasts long enough to kill the worker in the middle of it.
    const clip = path.join(root, 'clip.mp4');
    await run(ffmpegPath, [
      '-loglevel',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=1280x720:rate=30:duration=10',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-crf',
      '12',
      '-pix_fmt',
      'yuv420p',
      clip,
    ]);
    const data = await fsp.readFile(clip);

    const created = (await (
      await fetch(`${base1}${P}/uploads`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Across nodes"}' })
    ).json()) as {
      url: string;
      video_id: number;
      player_uuid: string;
    };
    const upload = (options: { endpoint?: string; uploadUrl?: string; stopAt?: number }) =>
      new Promise<string>((resolve) => {
        const u = new tus.Upload(data, {
          ...options,
          chunkSize: 5 * 1024 * 1024,
          retryDelays: [200, 500, 1000, 2000],
          onChunkComplete: (_c, accepted) => {
            if (options.stopAt !== undefined && accepted >= options.stopAt) void u.abort().then(() => resolve('stopped'));
          },
          onSuccess: () => resolve('done'),
          onError: (err) => resolve(err.message),
        });
        u.start();
      });
    const capability = new URL(created.url).pathname;
    expect(await upload({ endpoint: `${base1}${capability}`, stopAt: Math.floor(data.length / 2) })).toBe('stopped');
    expect(await upload({ uploadUrl: `${base2}${capability}` })).toBe('done');

    // The worker takes the job; it dies in the middle of the transcode; a second worker finishes it.
    const status = async () => ((await (await fetch(`${base2}${P}/videos/${created.video_id}`, { headers: auth })).json()) as { status: string | null }).status;
    await until('processing to start', async () => (await status()) === 'processing', 60_000);
    // Killed while its ffmpeg transcodes, not before.
    await until('the worker to run ffmpeg', async () => runsFfmpeg(worker.child.pid!), 60_000);
    worker.child.kill('SIGKILL');
    await new Promise((r) => worker.child.once('exit', r));
    expect(await status()).toBe('processing');
    worker = start('worker2', { ROLE: 'worker' });
    await until('the video to be ready', async () => (await status()) === 'ready', 120_000);

    // Played from API 2: the watch page, and its media with ranges.
    const page = await fetch(`${base2}/watch/${created.player_uuid}`);
    expect(page.status).toBe(200);
    const source = /\/play\/[^"'\s]+\.mp4/.exec(await page.text())?.[0];
    expect(source).toBeDefined();
    const ranged = await fetch(`${base2}${source!.replace(/&amp;/g, '&')}`, { headers: { range: 'bytes=0-65535' } });
    expect(ranged.status).toBe(206);
    expect(
      Buffer.from(await ranged.arrayBuffer())
        .subarray(4, 8)
        .toString(),
    ).toBe('ftyp');
    const files = (await (await fetch(`${base2}${P}/videos/${created.video_id}/files`, { headers: auth })).json()) as { urls: { hd: string } };
    expect((await fetch(files.urls.hd, { headers: { range: 'bytes=100-199' } })).status).toBe(206);
    // A link signed by one node is good on another (one SIGNING_SECRET).
    const signedBy1 = (await (await fetch(`${base1}${P}/videos/${created.video_id}/files`, { headers: auth })).json()) as { urls: { hd: string } };
    const on2 = new URL(signedBy1.urls.hd);
    expect((await fetch(`${base2}${on2.pathname}${on2.search}`, { headers: { range: 'bytes=100-199' } })).status).toBe(206);

    // API 1 dies under traffic: what it acknowledged is kept, and API 2 keeps answering.
    const acknowledged: number[] = [];
    const api2Answers: number[] = [];
    let stop = false;
    const writes = (async () => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await fetch(`${base1}${P}/tags`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `tag ${i}` }),
          });
          if (res.status === 201) acknowledged.push(((await res.json()) as { id: number }).id);
        } catch {
          await new Promise((r) => setTimeout(r, 20)); // API 1 is gone
        }
      }
    })();
    const reads = (async () => {
      while (!stop) api2Answers.push((await fetch(`${base2}${P}/players`, { headers: auth })).status);
    })();
    await until('some writes', async () => acknowledged.length >= 20);
    api1.child.kill('SIGKILL');
    await new Promise((r) => api1.child.once('exit', r));
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await Promise.all([writes, reads]);
    expect(api2Answers.length).toBeGreaterThan(10);
    expect(api2Answers.every((s) => s === 200)).toBe(true);
    const tags = (await (await fetch(`${base2}${P}/tags`, { headers: auth })).json()) as Array<{ id: number }>;
    const kept = new Set(tags.map((t) => t.id));
    expect(acknowledged.filter((id) => !kept.has(id))).toEqual([]);
  });
});
