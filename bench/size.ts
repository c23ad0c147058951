/**
 * Lists at size (`BENCH_ONLY=size npm run bench`, or `runSizeBench()`), issue 15: the real server
 * (bench/server.ts) on a database seeded with 1,000,000 CTAs in one organization, 200,000 on one
 * chapter and 800,000 on another of the same player (bench/seed-size.ts), on SQLite and on
 * PostgreSQL. Each request is sent one at a time, BENCH_SIZE_SAMPLES times (default 200, so that the
 * p99 is not simply the slowest sample; pages drawn at random where the row says "any page"), and its
 * p99 is printed beside the issue's target.
 */
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { postgresUrl, startChild, stopChild, withSchema } from './children.ts';
import { SIZE } from './seed-size.ts';

const SAMPLES = Math.max(5, Number(process.env.BENCH_SIZE_SAMPLES ?? 200));

export interface SizeRow {
  dialect: string;
  name: string;
  p50: number;
  p99: number;
  target: number;
  pass: boolean;
  /** summary.count of the answer, where the list has one. */
  count: number | null;
}

interface Seeded {
  port: number;
  token: string;
  playerId: number;
  chapters: [number, number];
  organizationId: number;
  seedSeconds: number;
}

export const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const pick = (max: number) => 1 + Math.floor(Math.random() * max);

/** The requests of the issue's table and targets: a path for the n-th sample, and the p99 targets (ms) on SQLite / PostgreSQL. */
function cases(s: Seeded): Array<{ name: string; url: (n: number) => string; targets: [number, number] }> {
  const [first] = s.chapters;
  const live = `/dashboard/v1/organizations/${s.organizationId}/live`;
  const chapterPages = Math.ceil(SIZE.onFirstChapter / 200);
  const playerPages = Math.ceil(SIZE.ctas / 200);
  const list = [25, 50] as [number, number];
  const search = [50, 50] as [number, number];
  return [
    { name: 'chapter CTAs, per_page=200, page 1 (200k)', url: () => `/dashboard/v1/chapters/${first}/ctas?per_page=200&page=1`, targets: list },
    { name: 'chapter CTAs, per_page=200, last page', url: () => `/dashboard/v1/chapters/${first}/ctas?per_page=200&page=${chapterPages}`, targets: list },
    { name: 'chapter CTAs, per_page=200, any page', url: () => `/dashboard/v1/chapters/${first}/ctas?per_page=200&page=${pick(chapterPages)}`, targets: list },
    { name: 'player CTAs, per_page=200, page 2500 (1M)', url: () => `/dashboard/v1/players/${s.playerId}/ctas?per_page=200&page=2500`, targets: list },
    {
      name: 'player CTAs, per_page=200, any page',
      url: () => `/dashboard/v1/players/${s.playerId}/ctas?per_page=200&page=${pick(playerPages)}`,
      targets: list,
    },
    { name: 'player cta_meta (1M)', url: () => `/dashboard/v1/players/${s.playerId}/cta_meta`, targets: [25, 25] },
    { name: 'events, per_page=200, page 1 (1M in the org)', url: () => '/dashboard/v1/events?per_page=200&page=1', targets: list },
    { name: 'events, per_page=200, page 5000', url: () => '/dashboard/v1/events?per_page=200&page=5000', targets: list },
    { name: 'events search "webinar", per_page=50', url: () => '/dashboard/v1/events/search?query=webinar&per_page=50', targets: search },
    { name: 'players, per_page=200, page 1 (1M)', url: () => '/dashboard/v1/players?per_page=200&page=1', targets: list },
    { name: 'players, query=webinar (1M)', url: () => '/dashboard/v1/players?query=webinar&per_page=50', targets: search },
    { name: 'videos, query=webinar (1M)', url: () => '/dashboard/v1/videos?query=webinar&per_page=50', targets: search },
    { name: 'users, per_page=200, any page (1M)', url: () => `/dashboard/v1/users?per_page=200&page=${pick(SIZE.users / 200)}`, targets: list },
    { name: 'users, query=webinar (1M)', url: () => '/dashboard/v1/users?query=webinar&per_page=50', targets: search },
    { name: 'tags, per_page=200, any page (1M)', url: () => `/dashboard/v1/tags?per_page=200&page=${pick(SIZE.tags / 200)}`, targets: list },
    { name: 'tags, query=webinar (1M)', url: () => '/dashboard/v1/tags?query=webinar&per_page=50', targets: search },
    { name: 'live, per_page=50, page 1 (100k)', url: () => `${live}?per_page=50&page=1`, targets: list },
    { name: 'live, query=webinar', url: () => `${live}?per_page=50&query=webinar`, targets: search },
    { name: 'live, ongoing by air_date desc', url: () => `${live}?states[]=ongoing&order_by=air_date&direction=desc&per_page=50`, targets: list },
    { name: 'live, per_page=50, last page', url: () => `${live}?per_page=50&page=${SIZE.liveInstances / 50}`, targets: list },
  ];
}

async function measure(dialect: 'sqlite' | 'postgres', s: Seeded): Promise<SizeRow[]> {
  const rows: SizeRow[] = [];
  for (const c of cases(s)) {
    const times: number[] = [];
    let count: number | null = null;
    for (let n = 0; n < SAMPLES + 2; n++) {
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${s.port}${c.url(n)}`, { headers: { authorization: `Bearer ${s.token}` } });
      const body = (await res.json()) as { summary?: { count?: number } } & Record<string, unknown>;
      const took = performance.now() - started;
      if (res.status !== 200) throw new Error(`${c.name}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      // A list that answers fast with nothing in it measures nothing.
      const items = Object.values(body).find(Array.isArray);
      if (items && items.length === 0) throw new Error(`${c.name}: an empty page (${c.url(n)})`);
      // The first two warm the route (its schemas compile at its first request).
      if (n >= 2) times.push(took);
      count = body.summary?.count ?? count;
    }
    const target = c.targets[dialect === 'sqlite' ? 0 : 1];
    const p99 = percentile(times, 99);
    rows.push({ dialect, name: c.name, p50: percentile(times, 50), p99, target, pass: p99 < target, count });
  }
  return rows;
}

/** Milliseconds of each of SAMPLES CTA creations on a chapter, one at a time (after two to warm the route). */
async function createTimes(port: number, token: string, chapterId: number): Promise<number[]> {
  const times: number[] = [];
  for (let n = 0; n < SAMPLES + 2; n++) {
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/dashboard/v1/ctas`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chapter_id: chapterId, second: n, duration: 5, auto_close: true, width: 300, html: `<p>Offer ${n}</p>` }),
    });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`CTA create: ${res.status}`);
    if (n >= 2) times.push(performance.now() - started);
  }
  return times;
}

/** The same creations on an empty database of the same dialect: the baseline of the ratio. */
async function emptyCreateTimes(env: Record<string, string | undefined>): Promise<number[]> {
  const server = await startChild('server.ts', env, 60_000);
  try {
    const { port, token } = server.info as { port: number; token: string };
    const res = await fetch(`http://127.0.0.1:${port}/dashboard/v1/players`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        player: { name: 'Empty', chapters_attributes: [{ position: 0, video_attributes: { name: 'v', upload_url: 'https://media.example.com/v.mp4' } }] },
      }),
    });
    const player = (await res.json()) as { chapters_attributes: Array<{ id: number }> };
    return await createTimes(port, token, player.chapters_attributes[0].id);
  } finally {
    await stopChild(server.child);
  }
}

async function run(dialect: 'sqlite' | 'postgres', env: Record<string, string | undefined>, emptyEnv: Record<string, string | undefined>): Promise<SizeRow[]> {
  const server = await startChild('server.ts', { ...env, BENCH_SEED: 'size' }, 600_000);
  let rows: SizeRow[];
  let atSize: number[];
  try {
    const seeded = server.info as Seeded;
    process.stderr.write(`size bench, ${dialect}: seeded ${SIZE.ctas.toLocaleString('en')} CTAs in ${seeded.seedSeconds} s\n`);
    rows = await measure(dialect, seeded);
    atSize = await createTimes(seeded.port, seeded.token, seeded.chapters[1]);
  } finally {
    await stopChild(server.child);
  }
  const empty = await emptyCreateTimes(emptyEnv);
  const ratio = percentile(atSize, 50) / percentile(empty, 50);
  process.stderr.write(
    `size bench, ${dialect}: CTA create p50 ${percentile(atSize, 50).toFixed(1)} ms at 1M, ${percentile(empty, 50).toFixed(1)} ms empty (p99 ${percentile(atSize, 99).toFixed(1)} / ${percentile(empty, 99).toFixed(1)})\n`,
  );
  rows.push({ dialect, name: 'CTA create, 1M vs empty (ratio of p50s)', p50: ratio, p99: ratio, target: 1.5, pass: ratio <= 1.5, count: null });
  return rows;
}

export async function runSizeBench(): Promise<SizeRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-size-'));
  const rows: SizeRow[] = [];
  try {
    rows.push(
      ...(await run('sqlite', { DATA_DIR: path.join(dir, 'sqlite'), DATABASE_URL: '' }, { DATA_DIR: path.join(dir, 'sqlite-empty'), DATABASE_URL: '' })),
    );
    const pgTarget = await postgresUrl();
    if (pgTarget.url) {
      const url = pgTarget.url;
      const pgEnv = (name: string, schema: string) => ({ DATA_DIR: path.join(dir, name), DATABASE_URL: url, BENCH_PG_SCHEMA: schema });
      rows.push(...(await withSchema(url, (big) => withSchema(url, (empty) => run('postgres', pgEnv('pg', big), pgEnv('pg-empty', empty))))));
    } else process.stderr.write(`size bench: PostgreSQL skipped: ${pgTarget.why}\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  printSizeBench(rows);
  return rows;
}

export function printSizeBench(rows: SizeRow[]) {
  process.stdout.write(`\nLists at size (1M CTAs in the organization, 200k on one chapter; sequential, ${SAMPLES} samples each)\n`);
  process.stdout.write(
    `${'dialect'.padEnd(9)} ${'request'.padEnd(46)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'target'.padStart(8)}  result  count\n`,
  );
  for (const r of rows) {
    process.stdout.write(
      `${r.dialect.padEnd(9)} ${r.name.padEnd(46)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${`< ${r.target}`.padStart(8)}  ${(r.pass ? 'PASS' : 'FAIL').padEnd(6)}  ${r.count ?? ''}\n`,
    );
  }
}
