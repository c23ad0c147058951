/**
 * Analytics ingest (`BENCH_ONLY=analytics npm run bench`, or `runAnalyticsBench()`), issue 16: viewers'
 * reports posted to `POST /watch/:uuid/analytics` of the server as `npm start` runs it (SQLite), each
 * report a new load's start of playback, over up to BENCH_ANALYTICS_CONNECTIONS (default 50) connections,
 * BENCH_ANALYTICS_SECONDS (20) per phase:
 * - sustained: reports sent at a steady 2,000/s (bench/paced.ts), the beacon's p99 counted from when
 *   each was sent (target: the rate is held, p99 < 20 ms);
 * - capacity: as fast as the server answers (autocannon, closed loop), the reports/s it reaches;
 * - reads: `GET /dashboard/v1/players/:id` at a steady BENCH_ANALYTICS_READ_RATE (500/s), alone and
 *   then beside reports at 2,000/s (sent from a thread of their own): the reads' mean latency may grow
 *   by 10 % at most. The same two runs against a bare node:http server (bench/baseline.ts) in the same
 *   run give the machine's own share (two senders and a server on two cores); the figure is Reelbase's
 *   slowdown divided by the bare server's, and both are printed. A mean is moved by a few stalls of
 *   the machine (one pair of runs gave anything from 0.99× to 6.5× on one commit), so each side runs
 *   BENCH_ANALYTICS_TRIALS (5) pairs of BENCH_ANALYTICS_TRIAL_SECONDS (10), alone then beside, and
 *   the slowdown of each is the median of its pairs' ratios; every pair is printed.
 * Checks that every acknowledged report was kept (the player's `views`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { api, startChild, stopChild } from './children.ts';
import { startServer } from './mixed.ts';
import { paced, type PacedResult } from './paced.ts';
import { pacedOnThread, viewReport } from './paced-worker.ts';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const SECONDS = Number(process.env.BENCH_ANALYTICS_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.BENCH_ANALYTICS_CONNECTIONS ?? 50);
const TARGET = { rps: 2000, p99: 20, readSlowdown: 1.1 };
/** API reads (a player, by an API token) measured alone and beside the reports. */
const READ_RATE = Number(process.env.BENCH_ANALYTICS_READ_RATE ?? 500);
const READ_CONNECTIONS = 4;
const TRIALS = Math.max(1, Math.floor(Number(process.env.BENCH_ANALYTICS_TRIALS ?? 5)) || 5);
const TRIAL_SECONDS = Number(process.env.BENCH_ANALYTICS_TRIAL_SECONDS ?? 10);
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

export interface AnalyticsRow {
  /** At the target rate. */
  rps: number;
  p99: number;
  /** As fast as the server answers. */
  capacity: number;
  /** API reads' mean latency beside the reports / alone (the median of the pairs), divided by the same ratio of a bare node:http server. */
  readSlowdown: number;
  /** The two ratios it is made of. */
  readSlowdownReelbase: number;
  readSlowdownBare: number;
  acknowledged: number;
  kept: number;
  pass: boolean;
}

export async function runAnalyticsBench(): Promise<AnalyticsRow> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-analytics-bench-'));
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  const server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '', REPORTS_PER_10_MINUTES: '1000000', BENCH_JOBS: '1' }, 1);
  try {
    const { base, tokens } = server;
    const created = await api(base, tokens[0], 'POST', '/dashboard/v1/players', {
      player: { name: 'Bench', chapters_attributes: [{ position: 0, video_attributes: { name: 'Bench', upload_url: 'https://media.example.com/v.mp4' } }] },
    });
    if (created.status !== 201) throw new Error(`creating the player answered ${created.status}: ${created.text}`);
    const player = created.json() as { id: number; uuid: string };
    let n = 0;
    const report = () => viewReport(`/watch/${player.uuid}/analytics`, UA, `bench-${++n}`, n);
    const read = () => ({ method: 'GET' as const, path: `/dashboard/v1/players/${player.id}`, headers: { authorization: `Bearer ${tokens[0]}` } });
    const reports = (seconds: number) => paced({ base, rate: TARGET.rps, seconds, connections: CONNECTIONS, next: report });
    const readsOn = (to: string, seconds = TRIAL_SECONDS) => paced({ base: to, rate: READ_RATE, seconds, connections: READ_CONNECTIONS, next: read });

    await reports(3);
    await readsOn(base, 3);
    const warm = n;
    const sustained = await reports(SECONDS);
    // As fast as it answers: autocannon, closed loop, each request a new report.
    const flood = { ...report(), setupRequest: (req: Record<string, unknown>) => ({ ...req, body: report().body }) };
    const capacity = await autocannon({ url: base, connections: CONNECTIONS, duration: SECONDS, requests: [flood] });
    // The capacity phase's backlog (100,000 reports and more) is not the steady 2,000/s of the pairs:
    // rolled up before them, so that no "alone" run carries it. Runs of the pairs' own reports then
    // fall where the 30 s schedule puts them, in either run of a pair.
    const today = new Date().toISOString().slice(0, 10);
    const viewsOf = async (path: string) => ((await api(base, tokens[0], 'GET', `${path}?to=${today}`)).json() as { views: number }).views;
    for (const started = Date.now(); (await viewsOf('/dashboard/v1/analytics/summary')) < (await viewsOf(`/dashboard/v1/analytics/players/${player.id}`));) {
      if (Date.now() - started > 120_000) throw new Error('the rollups did not catch up within 120 s');
      await new Promise((r) => setTimeout(r, 500));
    }
    // API reads at a steady rate, alone and then with the reports at the target rate alongside, sent
    // from another thread; then the same against a bare server answering the player's JSON.
    const stream = (to: string, prefix: string) =>
      pacedOnThread({
        base: to,
        rate: TARGET.rps,
        seconds: TRIAL_SECONDS,
        connections: CONNECTIONS,
        path: `/watch/${player.uuid}/analytics`,
        userAgent: UA,
        prefix,
      });
    const pairs = async (to: string, label: string): Promise<Pair[]> => {
      const done: Pair[] = [];
      for (let i = 0; i < TRIALS; i++) {
        const alone = await readsOn(to);
        const [beside, alongside] = await Promise.all([readsOn(to), stream(to, `${label}-${i}`)]);
        done.push({ alone, beside, alongside });
      }
      return done;
    };
    const reelbasePairs = await pairs(base, 'beside');
    const playerJson = (await api(base, tokens[0], 'GET', `/dashboard/v1/players/${player.id}`)).text;
    const bare = await startChild('baseline.ts', { BENCH_BODY: playerJson });
    let barePairs: Pair[];
    try {
      const bareBase = `http://127.0.0.1:${bare.info.port}`;
      await readsOn(bareBase);
      barePairs = await pairs(bareBase, 'bare');
    } finally {
      await stopChild(bare.child);
    }
    const reportsBeside = reelbasePairs.reduce((sum, p) => sum + p.alongside.ok, 0);
    const acknowledged = sustained.ok + capacity['2xx'] + reportsBeside;
    // Every report of the warm-up and of the runs was acknowledged with a 204: all of them are kept.
    const kept = (await viewsOf(`/dashboard/v1/analytics/players/${player.id}`)) - warm;
    const everyRun = [...reelbasePairs, ...barePairs].flatMap((p) => [p.alone, p.beside, p.alongside]);
    const failed = sustained.failed + capacity.non2xx + capacity.errors + everyRun.reduce((sum, r) => sum + r.failed, 0);
    const reelbaseRatio = median(reelbasePairs.map(ratioOf));
    const bareRatio = median(barePairs.map(ratioOf));
    const slowdown = reelbaseRatio / bareRatio;
    const row = {
      rps: sustained.rps,
      p99: sustained.p99,
      capacity: capacity.requests.average,
      readSlowdown: slowdown,
      readSlowdownReelbase: reelbaseRatio,
      readSlowdownBare: bareRatio,
      acknowledged,
      kept,
      pass: false,
    };
    // Held: within 1 % of the rate asked for.
    row.pass = row.rps >= TARGET.rps * 0.99 && row.p99 < TARGET.p99 && failed === 0 && kept >= acknowledged && slowdown <= TARGET.readSlowdown;
    console.log(`\nAnalytics ingest (issue 16): ${SECONDS} s per phase, SQLite, ${os.cpus().length} CPUs`);
    console.log('phase                                      per s   mean ms   p50 ms   p99 ms   target');
    const line = (name: string, r: PacedResult, target: string) =>
      console.log(
        `${name.padEnd(40)}${Math.round(r.rps).toString().padStart(7)}${r.mean.toFixed(2).padStart(10)}${r.p50.toFixed(2).padStart(9)}${r.p99.toFixed(2).padStart(9)}   ${target}${r.lagging > 0.01 ? ` (the sender fell ${Math.round(r.lagging * 1000)} ms behind)` : ''}`,
      );
    line(`reports at ${TARGET.rps}/s`, sustained, `≥${TARGET.rps}/s held, p99 < ${TARGET.p99} ms`);
    console.log(
      `${'reports, as fast as answered (50 conn.)'.padEnd(40)}${Math.round(capacity.requests.average).toString().padStart(7)}${capacity.latency.average.toFixed(2).padStart(10)}${capacity.latency.p50.toFixed(2).padStart(9)}${capacity.latency.p99.toFixed(2).padStart(9)}`,
    );
    const printPairs = (who: string, list: Pair[]) =>
      list.forEach((p, i) => {
        line(`${who} reads at ${READ_RATE}/s, alone (${i + 1})`, p.alone, '');
        line(`${who} reads, beside ${TARGET.rps}/s (${i + 1})`, p.beside, `${ratioOf(p).toFixed(2)}× alone`);
        line(`  (the reports meanwhile)`, p.alongside, '');
      });
    printPairs('API', reelbasePairs);
    printPairs('bare', barePairs);
    console.log(
      `median of ${TRIALS} pairs of ${TRIAL_SECONDS} s: API reads ${reelbaseRatio.toFixed(2)}× alone; bare node:http ${bareRatio.toFixed(2)}× (the machine's share)`,
    );
    console.log(
      `API reads slowed by the reports: ${reelbaseRatio.toFixed(2)}× ÷ ${bareRatio.toFixed(2)}× = ${slowdown.toFixed(2)}×  (target ≤ ${TARGET.readSlowdown}×)`,
    );
    console.log(`acknowledged ${acknowledged}, kept ${kept}, failed ${failed}  ${row.pass ? 'PASS' : 'FAIL'}`);
    return row;
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Pair {
  alone: PacedResult;
  beside: PacedResult;
  /** The reports sent beside the reads. */
  alongside: PacedResult;
}

const ratioOf = (p: Pair) => p.beside.mean / p.alone.mean;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runAnalyticsBench();
}
