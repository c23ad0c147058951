/**
 * Cold start (`BENCH_ONLY=cold npm run bench`, or `runColdStartBench()`): `npm start` on an existing
 * data directory, from the spawn to the first 200 of an authenticated `GET /dashboard/v1/players`,
 * median of 5 (issue 15: < 500 ms). Beside it, for context: the server's own process started
 * directly (`node scripts/start.mjs`, what npm start execs), npm itself running a script that does
 * nothing (`npm run noop`: npm's own share of any `npm start`), and a bare node:http server.
 * The bundle is built first; the first start (data directory, schema, code cache) is not counted.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/processes.ts';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const RUNS = 5;
const TARGET_MS = 500;

export interface ColdStartRow {
  name: string;
  medianMs: number;
  runsMs: number[];
  target: number | null;
  pass: boolean;
}

/** Spawns `command`, polls `url` every 5 ms until it answers 200; answers the milliseconds from the spawn. */
async function timeToExit(command: string[]): Promise<number> {
  const started = performance.now();
  await new Promise((resolve, reject) => spawn(command[0], command.slice(1), { cwd: root, stdio: 'ignore' }).once('exit', resolve).once('error', reject));
  return performance.now() - started;
}

async function timeToFirst200(command: string[], env: Record<string, string>, url: () => string | null, linger = 0): Promise<number> {
  const started = performance.now();
  const child: ChildProcess = spawn(command[0], command.slice(1), {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`${command.join(' ')} exited before answering`);
      if (performance.now() - started > 30_000) throw new Error(`${command.join(' ')} did not answer within 30 s`);
      const address = url();
      const ok =
        address !== null &&
        (await fetch(address).then(
          (r) => r.status === 200,
          () => false,
        ));
      if (ok) {
        const took = performance.now() - started;
        await new Promise((r) => setTimeout(r, linger));
        return took;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    if (!exited) {
      // npm start runs the server in its own process group's child: end them all.
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function runColdStartBench(): Promise<ColdStartRow[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-cold-'));
  try {
    const port = await freePort();
    const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: '', LOG_LEVEL: 'warn' };
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
    const npmStart = ['npm', 'start', '--silent'];
    const tokenFile = path.join(dataDir, 'owner-token');
    const api = () =>
      fs.existsSync(tokenFile) ? `http://127.0.0.1:${port}/dashboard/v1/players?auth_token=${fs.readFileSync(tokenFile, 'utf8').trim()}` : null;
    // The first start creates the data directory, its owner token and its schema; the code cache is written 3 s in.
    await timeToFirst200(npmStart, env, api, 4000);
    const runs: number[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await timeToFirst200(npmStart, env, api));
    const direct: number[] = [];
    for (let i = 0; i < RUNS; i++) direct.push(await timeToFirst200([process.execPath, 'scripts/start.mjs'], env, api));
    const noop: number[] = [];
    for (let i = 0; i < RUNS; i++) noop.push(await timeToExit(['npm', 'run', '--silent', 'noop']));
    const bare: number[] = [];
    const script = `require('node:http').createServer((q, s) => s.end('{}')).listen(${port}, '127.0.0.1')`;
    for (let i = 0; i < RUNS; i++) bare.push(await timeToFirst200([process.execPath, '-e', script], {}, () => `http://127.0.0.1:${port}/`));
    const rows: ColdStartRow[] = [
      { name: 'npm start → first 200 (authenticated API)', medianMs: median(runs), runsMs: runs, target: TARGET_MS, pass: median(runs) < TARGET_MS },
      { name: 'node scripts/start.mjs → first 200 (context)', medianMs: median(direct), runsMs: direct, target: null, pass: true },
      { name: "npm run noop: npm's own share (context)", medianMs: median(noop), runsMs: noop, target: null, pass: true },
      { name: 'bare node:http → first 200 (context)', medianMs: median(bare), runsMs: bare, target: null, pass: true },
    ];
    printColdStart(rows);
    return rows;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function printColdStart(rows: ColdStartRow[]) {
  process.stdout.write('\nCold start (median of 5, existing data directory)\n');
  process.stdout.write(`${'measure'.padEnd(50)} ${'median ms'.padStart(10)} ${'target'.padStart(8)}  result  runs\n`);
  for (const r of rows) {
    const target = r.target === null ? '—' : `< ${r.target}`;
    const result = r.target === null ? '' : r.pass ? 'PASS' : 'FAIL';
    process.stdout.write(
      `${r.name.padEnd(50)} ${r.medianMs.toFixed(0).padStart(10)} ${target.padStart(8)}  ${result.padEnd(6)}  ${r.runsMs.map((x) => x.toFixed(0)).join(', ')}\n`,
    );
  }
}
