/**
 * Lists at size (`BENCH_ONLY=size npm run bench`, or `runSizeBench()`), issue 15: the real server
 * (bench/server.ts) on a database seeded with 1,000,000 CTAs in one organization, 200,000 on one
 * chapter and 800,000 on another of the same player (bench/seed-size.ts), on SQLite and on
 * PostgreSQL. Each request is sent one at a time, BENCH_SIZE_SAMPLES times (default 60; pages drawn
 * at random where the row says "any page"), and its p99 is printed beside the issue's target.
 */
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { postgresUrl, startChild, stopChild, withSchema } from './children.ts';
import { SIZE } from './seed-size.ts';

const SAMPLES = Math.max(5, Number(process.env.BENCH_SIZE_SAMPLES ?? 60));

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
  seedSeconds: number;
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const pick = (max: number) => 1 + Math.floor(Math.random() * max);

/** The requests of the issue's table and targets: a path for the n-th sample, and the p99 targets (ms) on SQLite / PostgreSQL. */
function cases(s: Seeded): Array<{ name: string; url: (n: number) => string; targets: [number, number] }> {
  const [first] = s.chapters;
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

async function run(dialect: 'sqlite' | 'postgres', env: Record<string, string | undefined>): Promise<SizeRow[]> {
  const server = await startChild('server.ts', { ...env, BENCH_SEED: 'size' }, 600_000);
  try {
    const seeded = server.info as Seeded;
    process.stderr.write(`size bench, ${dialect}: seeded ${SIZE.ctas.toLocaleString('en')} CTAs in ${seeded.seedSeconds} s\n`);
    return await measure(dialect, seeded);
  } finally {
    await stopChild(server.child);
  }
}

export async function runSizeBench(): Promise<SizeRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-size-'));
  const rows: SizeRow[] = [];
  try {
    rows.push(...(await run('sqlite', { DATA_DIR: path.join(dir, 'sqlite'), DATABASE_URL: '' })));
    const pgTarget = await postgresUrl();
    if (pgTarget.url) {
      const url = pgTarget.url;
      rows.push(...(await withSchema(url, (schema) => run('postgres', { DATA_DIR: path.join(dir, 'pg'), DATABASE_URL: url, BENCH_PG_SCHEMA: schema }))));
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
