/** The bench's child servers (bench/server.ts, bench/baseline.ts) and its PostgreSQL schemas. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const here = path.dirname(fileURLToPath(import.meta.url));
const DEFAULT_PG = 'postgres://postgres@127.0.0.1:5432/test';

export interface Started {
  child: ChildProcess;
  info: Record<string, any>;
}

/** Starts a bench server script and waits for its one JSON line on stdout. */
export function startChild(script: string, env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<Started> {
  return new Promise((resolve, reject) => {
    // BENCH_SERVER_NODE_ARGS: extra Node options for the servers only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
    const extra = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const child = spawn(process.execPath, [...extra, '--import', 'tsx', path.join(here, script)], {
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const timer = setTimeout(() => reject(new Error(`${script} did not start within ${timeoutMs / 1000} s`)), timeoutMs);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ child, info: JSON.parse(line) });
    });
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => (clearTimeout(timer), resolve()));
    child.kill('SIGTERM');
  });
}

export async function postgresUrl(): Promise<{ url: string | null; why?: string }> {
  const url = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || DEFAULT_PG;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return { url };
  } catch (err) {
    return { url: null, why: `${url.replace(/\/\/[^@/]*@/, '//***@')} unreachable (${(err as Error).message})` };
  } finally {
    await client.end().catch(() => {});
  }
}

export async function withSchema<T>(url: string, run: (schema: string) => Promise<T>): Promise<T> {
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`create schema ${schema}`);
    return await run(schema);
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`).catch(() => {});
    await admin.end();
  }
}

/** A Dashboard API request of a bench, with a Bearer token and a JSON body when given. */
export async function api(base: string, token: string, method: string, url: string, body?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}
