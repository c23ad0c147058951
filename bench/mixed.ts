/**
 * Mixed load (`BENCH_ONLY=mixed npm run bench`, or `runMixedBench()`), issue 15: 200 connections for
 * 60 s against the server as `npm start` runs it, 80 % reads and 20 % writes over the main resources
 * of several organizations: CTAs by id, a chapter's CTA list, players, a player's cta_meta, the events
 * list, and CTA creates and updates. On SQLite and PostgreSQL; prints req/s, p50/p99, the slowest
 * request, errors and the server's peak RSS beside the targets.
 *
 * Knobs: BENCH_MIXED_SECONDS (default 60), BENCH_MIXED_CONNECTIONS (200), BENCH_MIXED_ORGS (4),
 * BENCH_MIXED_ONLY=reads|writes (one side of the mix), BENCH_DIALECTS=sqlite|postgres, BENCH_MIXED_SQLITE_ONLY=1, API_PROCESSES=n (the server's
 * own setting: n processes sharing the port; RSS is then theirs summed), and BENCH_SLOW_MS=n
 * (the app under tsx, bench/server.ts, saying on stderr what it sees: bench/diagnostics.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort, npmStartArgs } from '../test/helpers/processes.ts';
import { api, postgresUrl, startChild, stopChild, withSchema } from './children.ts';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

const SECONDS = Number(process.env.BENCH_MIXED_SECONDS ?? 60);
const CONNECTIONS = Number(process.env.BENCH_MIXED_CONNECTIONS ?? 200);
const ORGS = Number(process.env.BENCH_MIXED_ORGS ?? 4);
const TARGET = { rps: 5000, p99: 100, max: 1000, rssMb: 250 };

export interface MixedRow {
  dialect: string;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  non2xx: number;
  rssMb: number;
  pass: boolean;
}

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

async function call(base: string, token: string, method: string, url: string, body?: unknown) {
  const res = await api(base, token, method, url, body);
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
  return res.json();
}

/** One organization's player with two chapters and 50 CTAs; answers its share of the mix (8 reads, 2 writes). */
async function seedOrg(base: string, token: string, n: number): Promise<Request[]> {
  const player = await call(base, token, 'POST', '/dashboard/v1/players', {
    player: {
      name: `Mixed player ${n}`,
      chapters_attributes: [0, 1].map((position) => ({
        position,
        video_attributes: { name: `Mixed video ${n}.${position}`, upload_url: 'https://media.example.com/mixed.mp4' },
      })),
    },
  });
  const chapter = player.chapters_attributes[0].id;
  const ctas: number[] = [];
  for (let i = 0; i < 50; i++) {
    const cta = await call(base, token, 'POST', '/dashboard/v1/ctas', { chapter_id: chapter, second: i, duration: 5, width: 300, html: `<b>cta ${i}</b>` });
    ctas.push(cta.id);
  }
  // A headers object per request: autocannon writes each body's content-length into it.
  const headers = () => ({ authorization: `Bearer ${token}` });
  const json = () => ({ ...headers(), 'content-type': 'application/json' });
  const get = (p: string): Request => ({ method: 'GET', path: p, headers: headers() });
  return [
    get(`/dashboard/v1/ctas/${ctas[0]}`),
    get(`/dashboard/v1/ctas/${ctas[17]}`),
    get(`/dashboard/v1/players/${player.id}`),
    get(`/dashboard/v1/chapters/${chapter}/ctas?per_page=50`),
    {
      method: 'POST',
      path: '/dashboard/v1/ctas',
      headers: json(),
      body: JSON.stringify({ chapter_id: chapter, second: 3, duration: 5, width: 300, html: '<i>new</i>' }),
    },
    get(`/dashboard/v1/players?per_page=20`),
    get(`/dashboard/v1/ctas/${ctas[33]}`),
    get(`/dashboard/v1/players/${player.id}/cta_meta`),
    get(`/dashboard/v1/events?per_page=20`),
    { method: 'PATCH', path: `/dashboard/v1/ctas/${ctas[49]}`, headers: json(), body: JSON.stringify({ html: `<b>updated ${n}</b>` }) },
  ];
}

/** The resident memory of the server: its process and, with API_PROCESSES > 1, the processes it supervises. */
function rssMb(pid: number): number {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    return kb / 1024 + children.reduce((sum, child) => sum + rssMb(child), 0);
  } catch {
    return 0;
  }
}

export interface Server {
  base: string;
  tokens: string[];
  pid: number;
  stop(): Promise<void>;
}

/**
 * The server as a user runs it: `node <npm start's flags> scripts/start.mjs` (what `npm start` execs: the bundle, its
 * job runner, live ingest and housekeeping), LOG_LEVEL=warn. The first organization is the one the
 * first start makes (its owner token in DATA_DIR/owner-token); the others come from the CLI.
 */
export async function startServer(env: Record<string, string>, orgs = ORGS): Promise<Server> {
  // BENCH_SLOW_MS: bench/server.ts instead (the app under tsx), which can say what it sees (bench/diagnostics.ts).
  if (process.env.BENCH_SLOW_MS) {
    const started = await startChild('server.ts', { ...env, BENCH_ORGS: String(orgs) });
    const { port, tokens, pid } = started.info as { port: number; tokens: string[]; pid: number };
    return { base: `http://127.0.0.1:${port}`, tokens, pid, stop: () => stopChild(started.child) };
  }
  const port = await freePort();
  const all = { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', RTMP_PORT: String(await freePort()), LOG_LEVEL: 'warn' };
  // BENCH_SERVER_NODE_ARGS: flags for the server's Node (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), to see where its time goes.
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, ...npmStartArgs()], { cwd: root, env: all, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const base = `http://127.0.0.1:${port}`;
  const tokenFile = path.join(env.DATA_DIR, 'owner-token');
  for (let waited = 0; ; waited += 50) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    if (waited > 60_000) throw new Error('the server did not answer within 60 s');
    const token = fs.existsSync(tokenFile) ? fs.readFileSync(tokenFile, 'utf8').trim() : null;
    const ok =
      token &&
      (await fetch(`${base}/dashboard/v1/players`, { headers: { authorization: `Bearer ${token}` } }).then(
        (r) => r.ok,
        () => false,
      ));
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const tokens = [fs.readFileSync(tokenFile, 'utf8').trim()];
  for (let i = 1; i < orgs; i++) {
    const out = execFileSync(process.execPath, ['scripts/cli.mjs', 'org', 'create', '--name', `Bench ${i}`], {
      cwd: root,
      env: all,
      encoding: 'utf8',
    });
    tokens.push(JSON.parse(out.trim().split('\n').at(-1)!).auth_token);
  }
  return {
    base,
    tokens,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

async function runOne(dialect: string, env: Record<string, string>): Promise<MixedRow> {
  const server = await startServer(env);
  try {
    const { base, tokens } = server;
    // Interleaved by organization: each connection's walk through the list touches every one of them.
    const perOrg = await Promise.all(tokens.map((token, n) => seedOrg(base, token, n)));
    const requests: Request[] = [];
    for (let i = 0; i < perOrg[0].length; i++) for (const org of perOrg) requests.push(org[i]);
    // BENCH_MIXED_ONLY=reads|writes: one side of the mix alone, to see what each costs.
    const only = process.env.BENCH_MIXED_ONLY;
    if (only) requests.splice(0, requests.length, ...requests.filter((r) => (r.method === 'GET') === (only === 'reads')));
    let peak = rssMb(server.pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 250);
    await autocannon({ url: base, connections: CONNECTIONS, duration: 3, requests });
    const r = await autocannon({ url: base, connections: CONNECTIONS, duration: SECONDS, requests });
    clearInterval(sampler);
    const row = {
      dialect,
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      max: r.latency.max,
      errors: r.errors + r.timeouts,
      non2xx: r.non2xx,
      rssMb: peak,
    };
    const pass = row.errors === 0 && row.non2xx === 0 && row.max < TARGET.max && row.p99 < TARGET.p99 && row.rssMb < TARGET.rssMb;
    process.stderr.write(`  mixed ${dialect}: ${JSON.stringify(row)}\n`);
    return { ...row, pass: dialect === 'sqlite' ? pass && row.rps >= TARGET.rps : pass };
  } finally {
    await server.stop();
  }
}

export async function runMixedBench(): Promise<MixedRow[]> {
  process.stderr.write(`Mixed load: ${CONNECTIONS} connections, ${SECONDS} s, ${ORGS} organizations, ${os.cpus().length} CPUs\n`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-mixed-'));
  const rows: MixedRow[] = [];
  try {
    // The bundle npm start runs, built from the sources as they are.
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
    // BENCH_DIALECTS=sqlite or postgres: one of them (BENCH_MIXED_SQLITE_ONLY=1 is the first).
    const dialects = (process.env.BENCH_MIXED_SQLITE_ONLY === '1' ? 'sqlite' : (process.env.BENCH_DIALECTS ?? 'sqlite,postgres')).split(',');
    if (dialects.includes('sqlite')) rows.push(await runOne('sqlite', { DATA_DIR: path.join(dataDir, 'sqlite'), DATABASE_URL: '' }));
    const pg = dialects.includes('postgres') ? await postgresUrl() : { url: null };
    if (pg.url) {
      const url = pg.url;
      rows.push(
        await withSchema(url, (schema) => runOne('postgres', { DATA_DIR: path.join(dataDir, 'pg'), DATABASE_URL: url, PGOPTIONS: `-c search_path=${schema}` })),
      );
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const sqlite = rows.find((r) => r.dialect === 'sqlite');
  const postgres = rows.find((r) => r.dialect === 'postgres');
  // PostgreSQL within 2× of SQLite (req/s).
  if (sqlite && postgres && postgres.rps * 2 < sqlite.rps) postgres.pass = false;
  console.log(
    `\nMixed load (issue 15): 80 % reads / 20 % writes, ${CONNECTIONS} connections, ${SECONDS} s, ${ORGS} organizations, API_PROCESSES=${process.env.API_PROCESSES ?? 1}`,
  );
  console.log('database      req/s   p50 ms   p99 ms   max ms  errors  RSS MB   targets');
  for (const r of rows) {
    const target =
      r.dialect === 'sqlite'
        ? `≥${TARGET.rps} req/s, p99<${TARGET.p99}, max<${TARGET.max}, 0 errors, RSS<${TARGET.rssMb}`
        : `≥½ SQLite's req/s, p99<${TARGET.p99}, max<${TARGET.max}, 0 errors, RSS<${TARGET.rssMb}`;
    console.log(
      `${r.dialect.padEnd(10)}${Math.round(r.rps).toString().padStart(9)}${r.p50.toFixed(0).padStart(9)}${r.p99.toFixed(0).padStart(9)}${r.max
        .toFixed(0)
        .padStart(9)}${String(r.errors + r.non2xx).padStart(8)}${r.rssMb.toFixed(0).padStart(8)}   ${target}  ${r.pass ? 'PASS' : 'FAIL'}`,
    );
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runMixedBench();
}
