/**
 * Analytics ingest (`BENCH_ONLY=analytics npm run bench`, or `runAnalyticsBench()`), issue 16: viewers'
 * reports posted to `POST /watch/:uuid/analytics` of the server as `npm start` runs it, by
 * BENCH_ANALYTICS_CONNECTIONS (default 50) connections for BENCH_ANALYTICS_SECONDS (20), each report a
 * new load's start of playback. Prints reports/s and the beacon's p99 beside the targets (≥ 2,000/s,
 * p99 < 20 ms, SQLite), and checks that every acknowledged report was kept (the player's `views`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { api } from './children.ts';
import { startServer } from './mixed.ts';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const SECONDS = Number(process.env.BENCH_ANALYTICS_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.BENCH_ANALYTICS_CONNECTIONS ?? 50);
const TARGET = { rps: 2000, p99: 20 };
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

export interface AnalyticsRow {
  rps: number;
  p99: number;
  acknowledged: number;
  kept: number;
  pass: boolean;
}

export async function runAnalyticsBench(): Promise<AnalyticsRow> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-analytics-bench-'));
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  const server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '', REPORTS_PER_10_MINUTES: '1000000' }, 1);
  try {
    const { base, tokens } = server;
    const created = await api(base, tokens[0], 'POST', '/dashboard/v1/players', {
      player: { name: 'Bench', chapters_attributes: [{ position: 0, video_attributes: { name: 'Bench', upload_url: 'https://media.example.com/v.mp4' } }] },
    });
    if (created.status !== 201) throw new Error(`creating the player answered ${created.status}: ${created.text}`);
    const player = created.json() as { id: number; uuid: string };
    let n = 0;
    const request = {
      method: 'POST' as const,
      path: `/watch/${player.uuid}/analytics`,
      headers: { 'content-type': 'application/json', 'user-agent': UA },
      setupRequest: (req: Record<string, unknown>) => ({
        ...req,
        body: JSON.stringify({ type: 'view', percent_watched: 0, chapter: 0, player_load_id: `bench-${++n}`, visitor_uuid: `visitor-${n % 5000}` }),
      }),
    };
    await autocannon({ url: base, connections: CONNECTIONS, duration: 3, requests: [request] });
    const warm = n;
    const r = await autocannon({ url: base, connections: CONNECTIONS, duration: SECONDS, requests: [request] });
    const acknowledged = r['2xx'];
    const today = new Date().toISOString().slice(0, 10);
    const figures = (await api(base, tokens[0], 'GET', `/dashboard/v1/analytics/players/${player.id}?to=${today}`)).json() as { views: number };
    // Every report of the warm-up and of the run was acknowledged with a 204: all of them are kept.
    const kept = figures.views - warm;
    const row = { rps: r.requests.average, p99: r.latency.p99, acknowledged, kept, pass: false };
    row.pass = row.rps >= TARGET.rps && row.p99 < TARGET.p99 && r.non2xx === 0 && r.errors === 0 && kept >= acknowledged;
    console.log(`\nAnalytics ingest (issue 16): ${CONNECTIONS} connections, ${SECONDS} s, SQLite, ${os.cpus().length} CPUs`);
    console.log('reports/s   p99 ms   acknowledged   kept   targets');
    console.log(
      `${Math.round(row.rps).toString().padStart(9)}${row.p99.toFixed(1).padStart(9)}${String(acknowledged).padStart(15)}${String(kept).padStart(7)}   ≥${TARGET.rps}/s, p99<${TARGET.p99} ms, all kept  ${row.pass ? 'PASS' : 'FAIL'}`,
    );
    return row;
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runAnalyticsBench();
}
