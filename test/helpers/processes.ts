import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { TEST_SCHEMA_PREFIX } from './harness.ts';

/** A TCP port free on 127.0.0.1 right now (for a server a test starts as a process, or on a real port). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The environment that points a Reelbase process (or the CLI) at a fresh PostgreSQL schema of this
 * test run, named `name` (the global teardown drops it with the run's others).
 */
export async function freshSchemaEnv(name: string): Promise<{ DATABASE_URL: string; PGOPTIONS: string }> {
  const url = process.env.TEST_DATABASE_URL!;
  const schema = `${TEST_SCHEMA_PREFIX}${process.env.REELBASE_TEST_RUN ?? 'norun'}_${name}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.query(`create schema ${schema}`);
  } finally {
    await admin.end();
  }
  return { DATABASE_URL: url, PGOPTIONS: `-c search_path=${schema}` };
}

/** Polls `check` every 50 ms until it answers something truthy (a throw counts as not yet). */
export async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface JsonAnswer {
  status: number;
  body: any;
  headers: http.IncomingHttpHeaders;
}

/**
 * A JSON request with a bearer token to a server a test started as a process, over Node's own client
 * (`agent`: keep the connection, to meet the same process again). `abort` drops the connection, as a
 * client that went away does.
 */
export function sendJson(
  target: { port: number; token: string; agent?: http.Agent },
  method: string,
  url: string,
  body?: unknown,
): { answer: Promise<JsonAnswer>; abort: () => void } {
  const data = body === undefined ? undefined : JSON.stringify(body);
  let req: http.ClientRequest;
  const answer = new Promise<JsonAnswer>((resolve, reject) => {
    req = http.request(
      {
        host: '127.0.0.1',
        port: target.port,
        method,
        path: url,
        agent: target.agent,
        headers: {
          authorization: `Bearer ${target.token}`,
          ...(data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null, headers: res.headers }));
      },
    );
    req.once('error', reject);
    req.end(data);
  });
  return { answer, abort: () => req.destroy() };
}

/**
 * What `npm start` runs, after `node`: its Node flags (package.json's start script) and
 * scripts/start.mjs, for tests and benches that start the server as users do, with `node` itself.
 */
export function npmStartArgs(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(path.dirname(path.dirname(import.meta.dirname)), 'package.json'), 'utf8'));
  const flags = /\bnode\s+(.*?)\s*scripts\/start\.mjs/.exec(pkg.scripts.start)?.[1];
  if (flags === undefined) throw new Error(`package.json's start script does not run scripts/start.mjs: ${pkg.scripts.start}`);
  return [...flags.split(/\s+/).filter(Boolean), 'scripts/start.mjs'];
}

/** The sockets of this machine listening on 127.0.0.1:`port` (/proc/net/tcp; state 0A is LISTEN), by their inodes. */
export const listeningSockets = (port: number): string[] =>
  fs
    .readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, local, , state]) => state === '0A' && local === `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`)
    .map((fields) => fields[9]);

/**
 * How many descriptors each process holding a listening socket of `port` has of it (src/net/accept-handles.ts),
 * ascending; processes of other users unseen.
 */
export function acceptHandles(port: number): number[] {
  const sockets = new Set(listeningSockets(port).map((inode) => `socket:[${inode}]`));
  const counts: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone meanwhile, or not ours
    }
    // (A descriptor may close meanwhile: the one that listed this process's own, for one.)
    const held = fds.filter((fd) => sockets.has(readlinkOrNull(`/proc/${pid}/fd/${fd}`) ?? '')).length;
    if (held > 0) counts.push(held);
  }
  return counts.sort((a, b) => a - b);
}

function readlinkOrNull(link: string): string | null {
  try {
    return fs.readlinkSync(link);
  } catch {
    return null;
  }
}
