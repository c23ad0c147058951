/**
 * Media bench (`node --import tsx bench/media.ts`, or `runMediaBench()` from bench/run.ts):
 *
 * 0. Ladder: the HLS ladder of a 60 s 1080p30 clip in one ffmpeg run, against its rungs encoded in
 *    separate runs (target ≤ 0.7) and against the clip's duration (target ≤ 1.5).
 * 1. Processing: wall time from `POST /v1/videos` to `status: ready` for a 10 s 1280x720 clip
 *    (SSRF-safe download from a local origin, probe, the ladder encode, sd + hd packaging, thumbnails,
 *    store, database), as a ratio of running the same ladder ffmpeg command directly. Target ≤ 1.15.
 * 2. Serving: requests/s of one rendition fetched by signed URL from Reelbase (signature check,
 *    Range support), as a ratio of @fastify/static serving the same file unsigned; whole file and a
 *    64 KiB range. Target ≥ 0.8 (informative).
 *
 * The servers of part 2 run in child processes of their own (this file, with MEDIA_BENCH_ROLE set),
 * so that autocannon does not share their event loop.
 * Knobs: MEDIA_BENCH_ROUNDS (processing, default 3), MEDIA_BENCH_SERVING_ROUNDS (default 2),
 * MEDIA_BENCH_DURATION (s, default 5), MEDIA_BENCH_CONNECTIONS
 * (default 10), MEDIA_BENCH_PARTS (default "ladder,processing,serving"), BENCH_STRICT=1 (exit 1 on FAIL when
 * run directly). Both sides of each ratio are measured alternately, ROUNDS times. Processing compares
 * the best (shortest) runs, the usual estimator on a shared machine where other load only ever adds
 * time; medians are printed beside them. Serving compares medians.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { buildApp } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createContainer } from '../src/container.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { createMedia } from '../src/media/media.ts';
import { probe } from '../src/media/ffmpeg.ts';
import { ladderCommand } from '../src/media/pipeline.ts';
import { ladderArgs, ladderFor } from '../src/media/presets.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';

const run = promisify(execFile);
const self = fileURLToPath(import.meta.url);
const ROUNDS = Number(process.env.MEDIA_BENCH_ROUNDS ?? 3);
const SERVING_ROUNDS = Number(process.env.MEDIA_BENCH_SERVING_ROUNDS ?? 2);
const PARTS = (process.env.MEDIA_BENCH_PARTS ?? 'ladder,processing,serving').split(',').map((p) => p.trim());
const LADDER_ROUNDS = Number(process.env.MEDIA_BENCH_LADDER_ROUNDS ?? 1);
const DURATION = Number(process.env.MEDIA_BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.MEDIA_BENCH_CONNECTIONS ?? 10);
const SECRET = 'media-bench-signing-secret-0123456789';
const TARGET_PROCESSING = 1.15;
const TARGET_SERVING = 0.8;
const COMMON = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'error', '-y'];

interface Row {
  what: string;
  reelbase: string;
  baseline: string;
  ratio: number;
  target: string;
  pass: boolean;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

function configFor(dataDir: string, extra: Record<string, string> = {}): Config {
  const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, SIGNING_SECRET: SECRET, PUBLIC_URL: 'http://127.0.0.1', ...extra });
  return config;
}

/** A test clip (testsrc2 and a tone) of `size` and `seconds`, in `dir`. */
/**
 * A test clip. `synthetic` (the default): the clean testsrc2 pattern, x264 ultrafast, cheap to decode
 * and to encode. `camera`: what a phone or camera records at 1080p30, grain (temporal noise) in the
 * picture, H.264 High profile (CABAC, B-frames) at 12 Mbit/s.
 */
export async function makeClip(dir: string, size = '1280x720', seconds = 10, kind: 'synthetic' | 'camera' = 'synthetic'): Promise<string> {
  const clip = path.join(dir, `clip-${kind}-${size}-${seconds}s.mp4`);
  const { ffmpegPath } = configFor(dir);
  const video =
    kind === 'camera'
      ? ['-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=30:duration=${seconds},noise=alls=12:allf=t`]
      : ['-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=30:duration=${seconds}`];
  const encode =
    kind === 'camera'
      ? ['-c:v', 'libx264', '-preset', 'faster', '-profile:v', 'high', '-b:v', '12M', '-maxrate', '14M', '-bufsize', '20M']
      : ['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '18'];
  await run(ffmpegPath, [
    ...COMMON,
    ...video,
    ...['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`],
    ...encode,
    ...['-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', clip],
  ]);
  return clip;
}

/** The ladder command the pipeline runs (it also writes the thumbnails), run directly. */
async function baselineOnce(clip: string, outDir: string): Promise<number> {
  const { ffmpegPath, ffprobePath } = configFor(outDir);
  const command = ladderCommand(await probe(ffprobePath, clip), clip, outDir);
  await fsp.mkdir(command.hlsDir, { recursive: true });
  const start = performance.now();
  await run(ffmpegPath, [...COMMON, ...command.args]);
  return performance.now() - start;
}

/**
 * The ladder of a 60 s 1080p30 clip in one encode (one decode, split to every rung), against the same
 * rungs encoded in separate ffmpeg runs (a decode each). Targets: ≤ 0.7× the separate runs, and
 * ≤ 1.5× the clip's duration. The clip is camera-like (MEDIA_BENCH_LADDER_SOURCE=synthetic for the
 * clean pattern, whose decode is so cheap that sharing it saves less: docs/media.md).
 */
async function ladderRows(root: string): Promise<Row[]> {
  const { ffmpegPath, ffprobePath } = configFor(root);
  const source = process.env.MEDIA_BENCH_LADDER_SOURCE === 'synthetic' ? 'synthetic' : 'camera';
  const clip = await makeClip(root, '1920x1080', 60, source);
  const info = await probe(ffprobePath, clip);
  const one: number[] = [];
  const separate: number[] = [];
  for (let round = 0; round < LADDER_ROUNDS; round++) {
    const out = await fsp.mkdtemp(path.join(root, 'ladder-'));
    const command = ladderCommand(info, clip, out);
    await fsp.mkdir(command.hlsDir, { recursive: true });
    let start = performance.now();
    await run(ffmpegPath, [...COMMON, ...command.args]);
    one.push(performance.now() - start);
    let sum = 0;
    for (const rung of ladderFor(info)) {
      const dir = await fsp.mkdtemp(path.join(root, `rung-${rung.name}-`));
      start = performance.now();
      await run(ffmpegPath, [...COMMON, ...ladderArgs({ input: clip, hlsDir: dir, ladder: [rung], hasAudio: info.hasAudio, masterName: 'm.m3u8' })]);
      sum += performance.now() - start;
    }
    separate.push(sum);
    console.error(`ladder round ${round + 1}: one encode ${seconds(one.at(-1)!)}, separate runs ${seconds(sum)}`);
    await fsp.rm(out, { recursive: true, force: true });
  }
  const best = Math.min(...one);
  return [
    {
      what: `ladder of a 60 s 1080p30 ${source} clip, one encode vs separate runs`,
      reelbase: seconds(best),
      baseline: seconds(Math.min(...separate)),
      ratio: best / Math.min(...separate),
      target: '≤ 0.7',
      pass: best / Math.min(...separate) <= 0.7,
    },
    {
      what: `ladder of a 60 s 1080p30 ${source} clip, vs its duration`,
      reelbase: seconds(best),
      baseline: seconds(60_000),
      ratio: best / 60_000,
      target: '≤ 1.5',
      pass: best / 60_000 <= 1.5,
    },
  ];
}

/** An origin for the source file, on 127.0.0.1. */
async function startOrigin(file: string) {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(r)) };
}

/** POST /v1/videos → ready, through the real app, queue and worker (`extra`: more settings, e.g. object storage). */
export async function pipelineOnce(clip: string, dataDir: string, extra: Record<string, string> = {}): Promise<{ ms: number; sdKey: string }> {
  const origin = await startOrigin(clip);
  const config = configFor(dataDir, { UPLOAD_ALLOWED_HOSTS: `127.0.0.1:${origin.port}`, ...extra });
  const database = openDatabase({ sqlitePath: path.join(dataDir, 'bench.sqlite') });
  await migrateToLatest(database.db);
  const container = createContainer({ config, database });
  const app = await buildApp({ config, database, container });
  const { token } = await container.services.organizations.createWithOwner('Bench');
  const runner = new JobRunner(database.db, { handlers: jobHandlers(container), pollMs: 20 });
  runner.start();
  try {
    const start = performance.now();
    const created = await app.inject({
      method: 'POST',
      url: '/dashboard/v1/videos',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'Bench clip', upload_url: `http://127.0.0.1:${origin.port}/clip.mp4` },
    });
    const id = created.json().id;
    for (;;) {
      const row = await database.db.selectFrom('videos').select(['status', 'error_message']).where('id', '=', id).executeTakeFirstOrThrow();
      if (row.status === 'ready') break;
      if (row.status === 'error') throw new Error(`processing failed: ${row.error_message}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const ms = performance.now() - start;
    const file = await database.db.selectFrom('video_files').select('path').where('video_id', '=', id).where('quality', '=', 'sd').executeTakeFirstOrThrow();
    return { ms, sdKey: file.path };
  } finally {
    await runner.stop(1000);
    await app.close();
    await database.destroy();
    await origin.close();
  }
}

// ---- part 2: serving, each server in a child process ----

async function childMain(role: string) {
  const dataDir = process.env.MEDIA_BENCH_DATA_DIR!;
  const key = process.env.MEDIA_BENCH_KEY!;
  const config = configFor(dataDir);
  if (role === 'signed') {
    const database = openDatabase({ sqlitePath: ':memory:' });
    await migrateToLatest(database.db);
    const app = await buildApp({ config, database });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const url = new URL(createMedia(config).fileUrl(key));
    process.stdout.write(`${JSON.stringify({ port: (app.server.address() as AddressInfo).port, path: `${url.pathname}${url.search}` })}\n`);
  } else {
    const { default: Fastify } = await import('fastify');
    const { default: fastifyStatic } = await import('@fastify/static');
    const app = Fastify({ logger: false });
    await app.register(fastifyStatic, { root: config.mediaDir, prefix: '/media/files/' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    process.stdout.write(`${JSON.stringify({ port: (app.server.address() as AddressInfo).port, path: `/media/files/${key}` })}\n`);
  }
}

function startChild(role: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number; path: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', self], {
      env: { ...process.env, ...env, MEDIA_BENCH_ROLE: role },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.once('exit', (code) => reject(new Error(`${role} server exited with ${code}`)));
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      child.removeAllListeners('exit');
      resolve({ child, ...JSON.parse(line) });
    });
  });
}

async function load(url: string, headers: Record<string, string> = {}): Promise<number> {
  // Warm up, then measure.
  await autocannon({ url, connections: CONNECTIONS, duration: 1, headers });
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

async function servingRows(dataDir: string, key: string, size: number): Promise<Row[]> {
  const env = { MEDIA_BENCH_DATA_DIR: dataDir, MEDIA_BENCH_KEY: key };
  const signed = await startChild('signed', env);
  const plain = await startChild('static', env);
  try {
    const rows: Row[] = [];
    for (const [what, headers] of [
      [`whole file (${(size / 1024).toFixed(0)} KiB)`, {}],
      ['range 64 KiB', { range: 'bytes=0-65535' }],
    ] as const) {
      const ours: number[] = [];
      const theirs: number[] = [];
      for (let round = 0; round < SERVING_ROUNDS; round++) {
        ours.push(await load(`http://127.0.0.1:${signed.port}${signed.path}`, headers));
        theirs.push(await load(`http://127.0.0.1:${plain.port}${plain.path}`, headers));
      }
      const ratio = median(ours) / median(theirs);
      rows.push({
        what: `serve ${what}, req/s (median)`,
        reelbase: median(ours).toFixed(0),
        baseline: median(theirs).toFixed(0),
        ratio,
        target: `≥ ${TARGET_SERVING}`,
        pass: ratio >= TARGET_SERVING,
      });
    }
    return rows;
  } finally {
    for (const c of [signed.child, plain.child]) c.kill('SIGTERM');
  }
}

function printTable(rows: Row[]) {
  const header = ['measure', 'reelbase', 'baseline', 'ratio', 'target', ''];
  const lines = rows.map((r) => [r.what, r.reelbase, r.baseline, r.ratio.toFixed(3), r.target, r.pass ? 'PASS' : 'FAIL']);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  console.log('\nMedia bench (baseline: processing = the two ffmpeg transcodes run directly; serving = @fastify/static, unsigned)');
  console.log(fmt(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(fmt(l));
}

/** Runs the media bench and prints its table; answers the rows (for bench/run.ts). */
export async function runMediaBench(): Promise<Row[]> {
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-media-bench-'));
  try {
    const clip = await makeClip(root);
    const direct: number[] = [];
    const full: number[] = [];
    let last: { dataDir: string; sdKey: string } | null = null;
    const rounds = PARTS.includes('processing') ? ROUNDS : 0;
    if (rounds === 0) {
      // Serving only: one pipeline run makes the file to serve.
      const dataDir = await fsp.mkdtemp(path.join(root, 'app-'));
      last = { dataDir, sdKey: (await pipelineOnce(clip, dataDir)).sdKey };
    }
    for (let round = 0; round < rounds; round++) {
      const out = await fsp.mkdtemp(path.join(root, 'direct-'));
      direct.push(await baselineOnce(clip, out));
      const dataDir = await fsp.mkdtemp(path.join(root, 'app-'));
      const { ms, sdKey } = await pipelineOnce(clip, dataDir);
      full.push(ms);
      last = { dataDir, sdKey };
      console.error(`round ${round + 1}: direct ${seconds(direct.at(-1)!)}, pipeline ${seconds(ms)}`);
    }
    const rows: Row[] = [];
    if (PARTS.includes('ladder')) rows.push(...(await ladderRows(root)));
    if (rounds > 0) {
      const ratio = Math.min(...full) / Math.min(...direct);
      rows.push({
        what: `process 10 s 720p clip to ready, best of ${rounds} (median)`,
        reelbase: `${seconds(Math.min(...full))} (${seconds(median(full))})`,
        baseline: `${seconds(Math.min(...direct))} (${seconds(median(direct))})`,
        ratio,
        target: `≤ ${TARGET_PROCESSING}`,
        pass: ratio <= TARGET_PROCESSING,
      });
    }
    if (PARTS.includes('serving')) {
      const size = fs.statSync(path.join(configFor(last!.dataDir).mediaDir, last!.sdKey)).size;
      rows.push(...(await servingRows(last!.dataDir, last!.sdKey, size)));
    }
    printTable(rows);
    return rows;
  } finally {
    await fsp.rm(root, { recursive: true, force: true });
  }
}

if (process.env.MEDIA_BENCH_ROLE) {
  await childMain(process.env.MEDIA_BENCH_ROLE);
} else if (process.argv[1] && path.resolve(process.argv[1]) === self) {
  const rows = await runMediaBench();
  if (process.env.BENCH_STRICT === '1' && rows.some((r) => !r.pass)) process.exit(1);
}
