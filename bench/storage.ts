/**
 * Uploads and object storage bench (`BENCH_ONLY=storage npm run bench`, or `runStorageBench()`):
 *
 * 1. tus upload of a 200 MB file over loopback (POST, then one PATCH streaming the file) to the real
 *    server, as a ratio of a plain PUT of the same file to a bare node:http server writing it to disk.
 *    Target ≥ 0.7. The API process's resident memory is sampled during the upload: it must stay flat
 *    (the bytes are streamed, not buffered): peak growth < 64 MB.
 * 2. S3 mode (STORAGE_URL on a local S3-compatible server, test/helpers/s3-server.ts): processing time of
 *    a 10 s 720p clip, as a ratio of local mode. Target ≤ 1.15.
 * 3. A 64 KiB range read by signed URL from S3 mode, as a ratio of the same read in local mode
 *    (mean latency, sequential requests). Target ≤ 2. Repeated reads are served from the S3 store's
 *    slices (S3_READ_CACHE_MB); the rows below it give the read with every request a GET, and the
 *    S3 server's own ranged GET.
 *
 * Each server runs in a child process of its own (this file, with STORAGE_BENCH_ROLE set).
 * Knobs: STORAGE_BENCH_MB (default 200), STORAGE_BENCH_ROUNDS (default 3), STORAGE_BENCH_PARTS
 * (default "upload,processing,range").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import autocannon from 'autocannon';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { S3FileStore } from '../src/media/s3-file-store.ts';
import { startS3Server } from '../test/helpers/s3-server.ts';
import { makeClip, pipelineOnce } from './media.ts';

const self = fileURLToPath(import.meta.url);
const MB = Number(process.env.STORAGE_BENCH_MB ?? 200);
const ROUNDS = Number(process.env.STORAGE_BENCH_ROUNDS ?? 3);
const PARTS = (process.env.STORAGE_BENCH_PARTS ?? 'upload,processing,range').split(',').map((p) => p.trim());
const SECRET = 'storage-bench-signing-secret-0123456789';

export interface StorageRow {
  what: string;
  reelbase: string;
  baseline: string;
  ratio: number;
  target: string;
  pass: boolean;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// ---- child processes ----

async function childMain(role: string) {
  const dataDir = process.env.STORAGE_BENCH_DATA_DIR!;
  if (role === 'put') {
    // The baseline: a plain PUT written to disk.
    let n = 0;
    const server = http.createServer((req, res) => {
      const file = path.join(dataDir, `put-${n++}`);
      req.pipe(fs.createWriteStream(file)).on('finish', () => {
        res.writeHead(201).end();
        fs.rmSync(file, { force: true });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port, pid: process.pid })}\n`);
    return;
  }
  const extra = JSON.parse(process.env.STORAGE_BENCH_ENV ?? '{}') as Record<string, string>;
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    SIGNING_SECRET: SECRET,
    PUBLIC_URL: 'http://127.0.0.1',
    MAX_UPLOAD_BYTES: String(4 * 1024 ** 3),
    ...extra,
  });
  const database = openDatabase({ sqlitePath: path.join(dataDir, `${role}.sqlite`) });
  await migrateToLatest(database.db);
  const container = createContainer({ config, database });
  const app = await buildApp({ config, database, container });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  if (role === 'tus') {
    const { organization } = await container.services.organizations.createWithOwner('Bench');
    const paths: string[] = [];
    for (let i = 0; i < ROUNDS + 1; i++) paths.push(new URL((await container.services.uploads.create(organization.id, { name: `Bench ${i}` })).url).pathname);
    process.stdout.write(`${JSON.stringify({ port, pid: process.pid, paths })}\n`);
  } else {
    // role 'range': a signed URL of a file already in the store.
    const url = new URL(container.media.fileUrl(process.env.STORAGE_BENCH_KEY!));
    process.stdout.write(`${JSON.stringify({ port, pid: process.pid, path: `${url.pathname}${url.search}` })}\n`);
  }
}

function startChild(role: string, env: Record<string, string>): Promise<{ child: ChildProcess; info: Record<string, any> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', self], {
      env: { ...process.env, ...env, STORAGE_BENCH_ROLE: role },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.once('exit', (code) => reject(new Error(`${role} server exited with ${code}`)));
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      child.removeAllListeners('exit');
      resolve({ child, info: JSON.parse(line) });
    });
  });
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Resident memory of a process, in bytes (Linux). */
function rss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** Sends `file` in one request; answers the time taken (ms) and the response status. */
function stream(port: number, method: string, urlPath: string, file: string, headers: Record<string, string>): Promise<{ ms: number; status: number }> {
  return new Promise((resolve, reject) => {
    const size = fs.statSync(file).size;
    const start = performance.now();
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers: { ...headers, 'content-length': String(size) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - start, status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    fs.createReadStream(file).pipe(req);
  });
}

async function uploadPart(dir: string): Promise<StorageRow[]> {
  const file = path.join(dir, 'upload.bin');
  const fd = fs.openSync(file, 'w');
  const block = Buffer.alloc(1024 * 1024, 7);
  for (let i = 0; i < MB; i++) fs.writeSync(fd, block);
  fs.closeSync(fd);
  const size = MB * 1024 * 1024;
  const tusTimes: number[] = [];
  const putTimes: number[] = [];
  let growth = 0;
  const tus = await startChild('tus', { STORAGE_BENCH_DATA_DIR: path.join(dir, 'tus') });
  const put = await startChild('put', { STORAGE_BENCH_DATA_DIR: dir });
  try {
    const paths = tus.info.paths as string[];
    for (let round = 0; round <= ROUNDS; round++) {
      const urlPath = paths[round];
      const created = await fetch(`http://127.0.0.1:${tus.info.port}${urlPath}`, {
        method: 'POST',
        headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': String(size) },
      });
      if (created.status !== 201) throw new Error(`tus creation answered ${created.status}`);
      const before = rss(tus.info.pid as number);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rss(tus.info.pid as number))), 50);
      const t = await stream(tus.info.port as number, 'PATCH', urlPath, file, {
        'Tus-Resumable': '1.0.0',
        'Upload-Offset': '0',
        'Content-Type': 'application/offset+octet-stream',
      });
      clearInterval(sampler);
      if (t.status !== 204) throw new Error(`tus PATCH answered ${t.status}`);
      const p = await stream(put.info.port as number, 'PUT', '/file', file, {});
      if (round === 0) continue; // warm-up
      tusTimes.push(t.ms);
      putTimes.push(p.ms);
      growth = Math.max(growth, peak - before);
      // Each upload's bytes go: the next round writes its own.
      await fsp.rm(path.join(dir, 'tus', 'media', '.uploads'), { recursive: true, force: true }).catch(() => {});
    }
  } finally {
    await stop(tus.child);
    await stop(put.child);
  }
  const rate = (ms: number) => size / 1e6 / (ms / 1000);
  const tusRate = rate(median(tusTimes));
  const putRate = rate(median(putTimes));
  return [
    {
      what: `tus upload, ${MB} MB (median of ${ROUNDS})`,
      reelbase: `${tusRate.toFixed(0)} MB/s`,
      baseline: `${putRate.toFixed(0)} MB/s (PUT)`,
      ratio: tusRate / putRate,
      target: '≥ 0.70',
      pass: tusRate / putRate >= 0.7,
    },
    {
      what: 'API memory growth during the upload',
      reelbase: `${(growth / 1e6).toFixed(1)} MB`,
      baseline: `${MB} MB file`,
      ratio: growth / size,
      target: '< 64 MB',
      pass: growth < 64e6,
    },
  ];
}

async function processingPart(dir: string, s3env: Record<string, string>): Promise<StorageRow> {
  const clip = await makeClip(dir);
  const local: number[] = [];
  const s3: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    local.push((await pipelineOnce(clip, path.join(dir, `local-${round}`))).ms);
    s3.push((await pipelineOnce(clip, path.join(dir, `s3-${round}`), s3env)).ms);
  }
  // Best runs: other load on a shared machine only ever adds time (as bench/media.ts).
  const ratio = Math.min(...s3) / Math.min(...local);
  return {
    what: 'processing a 10 s 720p clip, S3 / local',
    reelbase: `${(Math.min(...s3) / 1000).toFixed(2)} s`,
    baseline: `${(Math.min(...local) / 1000).toFixed(2)} s`,
    ratio,
    target: '≤ 1.15',
    pass: ratio <= 1.15,
  };
}

async function rangePart(dir: string, s3env: Record<string, string>): Promise<StorageRow[]> {
  const clip = await makeClip(dir);
  const key = 'videos/bench/r0/hd.mp4';
  const size = (await fsp.stat(clip)).size;
  type Kind = 'local' | 's3' | 's3-uncached' | 'local-walk' | 's3-walk';
  const means: Record<Kind, number[]> = { local: [], s3: [], 's3-uncached': [], 'local-walk': [], 's3-walk': [] };
  for (const [kind, extra] of [
    ['local', {}],
    ['s3', s3env],
    // Every read a GET of the bucket: the first read of a slice, or S3_READ_CACHE_MB=0.
    ['s3-uncached', { ...s3env, S3_READ_CACHE_MB: '0' }],
    // A first viewer: the file read from start to end in 64 KiB ranges, as a player does, with room
    // for one slice only, so that every slice is fetched from the bucket once (one read in 16).
    ['local-walk', {}],
    ['s3-walk', { ...s3env, S3_READ_CACHE_MB: '1' }],
  ] as const) {
    const dataDir = path.join(dir, `range-${kind}`);
    const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, SIGNING_SECRET: SECRET, ...extra });
    const copy = path.join(dir, `copy-${kind}.mp4`);
    await fsp.copyFile(clip, copy);
    const database = openDatabase({ sqlitePath: ':memory:' });
    await migrateToLatest(database.db);
    await createContainer({ config, database }).media.store.put(key, copy);
    await database.destroy();
    const server = await startChild('range', { STORAGE_BENCH_DATA_DIR: dataDir, STORAGE_BENCH_KEY: key, STORAGE_BENCH_ENV: JSON.stringify(extra) });
    try {
      const url = `http://127.0.0.1:${server.info.port}${server.info.path}`;
      const headers = { range: 'bytes=1000000-1065535' };
      let at = 0;
      const walk = [
        {
          setupRequest: (req: Record<string, unknown>) => {
            if (at + 65_536 > size) at = 0;
            const range = `bytes=${at}-${at + 65_535}`;
            at += 65_536;
            return { ...req, headers: { ...(req.headers as Record<string, string>), range } };
          },
        },
      ];
      const load = kind.endsWith('-walk') ? { requests: walk } : { headers };
      await autocannon({ url, connections: 1, duration: 1, ...load });
      for (let round = 0; round < ROUNDS; round++) {
        const result = await autocannon({ url, connections: 1, duration: 3, ...load });
        if (result.non2xx > 0) throw new Error(`${kind} range reads answered ${result.non2xx} non-2xx`);
        means[kind].push(result.latency.mean);
      }
    } finally {
      await stop(server.child);
    }
  }
  const ratio = median(means.s3) / median(means.local);
  // Context: the S3 server's own ranged GET of the same bytes, straight from the SDK (the floor of S3 mode).
  const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: path.join(dir, 'range-s3'), SIGNING_SECRET: SECRET, ...s3env });
  const database = openDatabase({ sqlitePath: ':memory:' });
  await migrateToLatest(database.db);
  const store = createContainer({ config, database }).media.store as S3FileStore;
  const get = () =>
    store.client
      .send(new GetObjectCommand({ Bucket: store.bucket, Key: `media/${key}`, Range: 'bytes=1000000-1065535' }))
      .then((o) => o.Body!.transformToByteArray());
  for (let i = 0; i < 50; i++) await get();
  const started = performance.now();
  for (let i = 0; i < 300; i++) await get();
  const floor = (performance.now() - started) / 300;
  return [
    {
      what: '64 KiB range read, S3 / local (mean latency)',
      reelbase: `${median(means.s3).toFixed(2)} ms`,
      baseline: `${median(means.local).toFixed(2)} ms`,
      ratio,
      target: '≤ 2.00',
      pass: ratio <= 2,
    },
    {
      what: '64 KiB ranges walking the file, first viewer',
      reelbase: `${median(means['s3-walk']).toFixed(2)} ms`,
      baseline: `${median(means['local-walk']).toFixed(2)} ms`,
      ratio: median(means['s3-walk']) / median(means['local-walk']),
      target: '≤ 2.00',
      pass: median(means['s3-walk']) / median(means['local-walk']) <= 2,
    },
    {
      what: '  context: S3, every read a GET (cache off)',
      reelbase: `${median(means['s3-uncached']).toFixed(2)} ms`,
      baseline: `${median(means.local).toFixed(2)} ms`,
      ratio: median(means['s3-uncached']) / median(means.local),
      target: 'info',
      pass: true,
    },
    {
      what: '  context: the S3 server alone (SDK ranged GET)',
      reelbase: `${floor.toFixed(2)} ms`,
      baseline: `${median(means.local).toFixed(2)} ms`,
      ratio: floor / median(means.local),
      target: 'info',
      pass: true,
    },
  ];
}

export async function runStorageBench(): Promise<StorageRow[]> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-storage-bench-'));
  const rows: StorageRow[] = [];
  const s3 = PARTS.some((p) => p !== 'upload') ? await startS3Server() : null;
  try {
    if (PARTS.includes('upload')) rows.push(...(await uploadPart(dir)));
    if (s3 && PARTS.includes('processing')) rows.push(await processingPart(dir, s3.env));
    if (s3 && PARTS.includes('range')) rows.push(...(await rangePart(dir, s3.env)));
  } finally {
    await s3?.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
  console.log('\nUploads and object storage');
  console.log(`${'measure'.padEnd(46)}${'reelbase'.padStart(14)}${'baseline'.padStart(20)}${'ratio'.padStart(8)}  target`);
  console.log('-'.repeat(104));
  for (const r of rows) {
    const verdict = r.target === 'info' ? '' : r.pass ? 'PASS' : 'FAIL';
    console.log(`${r.what.padEnd(46)}${r.reelbase.padStart(14)}${r.baseline.padStart(20)}${r.ratio.toFixed(2).padStart(8)}  ${r.target.padEnd(8)} ${verdict}`);
  }
  return rows;
}

if (process.env.STORAGE_BENCH_ROLE) {
  await childMain(process.env.STORAGE_BENCH_ROLE);
} else if (process.argv[1] === self) {
  const rows = await runStorageBench();
  if (process.env.BENCH_STRICT === '1' && rows.some((r) => !r.pass)) process.exitCode = 1;
}
