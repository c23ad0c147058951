import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type pg from 'pg';
import { pgDriver } from './db/pg-driver.ts';
import type { Config } from './config.ts';
import { toolProblem, toolSource, type ToolName } from './lib/ffmpeg-binaries.ts';
import { listenOn } from './net/listen.ts';

/**
 * What the server checks at start, before it creates anything (docs/api-decisions.md, "Start-up
 * errors"): a start that cannot succeed stops with one sentence saying what to change, instead of a
 * stack printed after the organization "Default" and its owner token were already made.
 */

/** An expected start-up failure: its message is the one line printed (no stack). */
export class StartupError extends Error {}

/** The checks, cheapest and most common first; the port check is first as it creates nothing at all. */
export async function checkStartup(config: Config): Promise<void> {
  if (config.role !== 'worker') await checkPort(config.host, config.port);
  for (const [name, binary] of toolsUsed(config)) checkTool(config, name, binary);
  checkWritable('DATA_DIR', config.dataDir);
  checkWritable('MEDIA_DIR', config.mediaDir);
  await checkDatabase(config.databaseUrl);
}

/**
 * The tools a role runs: the worker transcodes (ffprobe, then ffmpeg) and builds live recordings
 * (ffmpeg); the API runs only ffmpeg, to package the RTMP ingest, and only when that is on.
 */
export function toolsUsed(config: Config): Array<[ToolName, string]> {
  if (config.role === 'api') return config.live.rtmpPort > 0 ? [['ffmpeg', config.ffmpegPath]] : [];
  return [
    ['ffmpeg', config.ffmpegPath],
    ['ffprobe', config.ffprobePath],
  ];
}

/**
 * Binding a throw-away listener is the check for the common case (something else holds the port), made
 * before the database is even opened. The real server listens later (`listenHoldingRequests`), still
 * before the owner is created, so a port taken in between fails the same way with nothing made.
 */
async function checkPort(host: string, port: number): Promise<void> {
  const probe = net.createServer();
  try {
    await listenOn(probe, { host, port });
  } catch (err) {
    throw listenError(err, host, port);
  } finally {
    await new Promise((resolve) => probe.close(resolve));
  }
}

/** The sentence for a failed listen on HOST:PORT; other errors unchanged (they keep their stack). */
function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  const addresses = '127.0.0.1, or 0.0.0.0 for all addresses of this machine';
  switch (code) {
    case 'EADDRINUSE':
      return new StartupError(`PORT ${port} is already in use on ${host}: stop what listens there or set PORT to a free port.`);
    case 'EACCES':
      return new StartupError(`PORT ${port} is a privileged port this user may not listen on: set PORT to 1024 or above.`);
    case 'EADDRNOTAVAIL':
      return new StartupError(`HOST ${host} is not an address of this machine: set HOST to one of its addresses (${addresses}).`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return new StartupError(`HOST ${host} does not resolve to an address: set HOST to an address of this machine (${addresses}).`);
    case 'EAFNOSUPPORT':
      return new StartupError(`HOST ${host} is an IPv6 address and this machine has no IPv6: set HOST to an IPv4 address (${addresses}).`);
    default:
      return err;
  }
}

/** The server as `listenHoldingRequests` needs it (the Fastify app; src/ outside the web layer does not import fastify). */
interface Listener {
  server: http.Server;
  listen(options: { host: string; port: number }): Promise<string>;
}

/**
 * Listens on HOST:PORT, holding every request until the returned function is called. The owner is
 * created after the listen succeeded (a port lost since `checkPort` then fails with nothing made) and
 * before any request is answered (whoever sees the port answer finds DATA_DIR/owner-token written).
 * (With HOST=localhost Fastify also listens on ::1 through a server of its own, which is not held.)
 */
export async function listenHoldingRequests(app: Listener, host: string, port: number): Promise<() => void> {
  const { server } = app;
  const handlers = server.listeners('request') as Array<(req: http.IncomingMessage, res: http.ServerResponse) => void>;
  if (handlers.length !== 1) throw new Error(`expected one request handler on the HTTP server, found ${handlers.length}`);
  const [handler] = handlers;
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  const held = (req: http.IncomingMessage, res: http.ServerResponse) => void opened.then(() => handler.call(server, req, res));
  server.removeListener('request', handler);
  server.on('request', held);
  try {
    await app.listen({ host, port });
  } catch (err) {
    throw listenError(err, host, port);
  }
  return () => {
    // From here on requests go straight to the app, without the extra step.
    server.removeListener('request', held);
    server.on('request', handler);
    open();
  };
}

function checkTool(config: Config, name: ToolName, binary: string): void {
  const problem = toolProblem(binary);
  if (problem === null) return;
  const variable = name === 'ffmpeg' ? 'FFMPEG_PATH' : 'FFPROBE_PATH';
  const what = toolSource(binary) === 'env' ? `${variable} ${binary}` : `${name} ${binary}`;
  const fix =
    config.role === 'api'
      ? `set ${variable} to an ${name} executable, or RTMP_PORT=0 to run this API process without live ingest`
      : `set ${variable} to an ${name} executable, or install ffmpeg 5 or newer on the PATH (Debian: apt-get install ffmpeg)`;
  throw new StartupError(`${what} cannot be run (${problem}): ${fix}.`);
}

/** Creates the directory if needed and writes (then removes) a file in it. */
function checkWritable(variable: string, dir: string): void {
  const probe = path.join(dir, `.reelbase-write-check-${process.pid}`);
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(probe, '');
    fs.rmSync(probe, { force: true });
  } catch (err) {
    throw new StartupError(`${variable} ${dir} is not writable: ${fsReason(err, dir)}; set ${variable} to a directory this user can write.`);
  }
}

function fsReason(err: unknown, dir: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    // The nearest existing part of the path is a file: name it.
    for (let p = dir; path.dirname(p) !== p; p = path.dirname(p)) {
      try {
        if (!fs.statSync(p).isDirectory()) return `${p} is a file, not a directory`;
      } catch {
        // missing, or below a file: look further up
      }
    }
    return code;
  }
  const reasons: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EROFS: 'read-only file system',
    ENOSPC: 'no space left on device',
    EDQUOT: 'disk quota exceeded',
  };
  return (code && reasons[code]) ?? (err instanceof Error ? err.message : String(err));
}

const DATABASE_TIMEOUT_MS = 10_000;

/** PostgreSQL: one connection and `select 1`; the lines name the host, user and database, never the password. SQLite is a file in DATA_DIR. */
async function checkDatabase(url: string | undefined): Promise<void> {
  if (!url) return;
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new StartupError('DATABASE_URL must start with postgres:// or postgresql://: fix it, or unset it to use SQLite in DATA_DIR.');
  }
  let client: pg.Client;
  try {
    client = new (pgDriver().Client)({ connectionString: url, connectionTimeoutMillis: DATABASE_TIMEOUT_MS });
  } catch {
    throw new StartupError('DATABASE_URL is not a valid URL: check its syntax (characters such as @ : / in the password must be percent-encoded).');
  }
  // A connection that fails after the check is an error of the running server, not of this check.
  client.on('error', () => {});
  let connected = false;
  try {
    await client.connect();
    connected = true;
    await client.query('select 1');
  } catch (err) {
    throw new StartupError(databaseProblem(err, client, url));
  } finally {
    if (connected) await client.end().catch(() => {});
  }
}

function databaseProblem(err: unknown, client: pg.Client, url: string): string {
  const where = `${client.host}:${client.port}`;
  const code = (err as { code?: string }).code;
  const secret = typeof client.password === 'string' && client.password !== '' ? client.password : null;
  const message = (err instanceof Error ? err.message : String(err)).replaceAll(url, 'DATABASE_URL');
  const said = secret ? message.replaceAll(secret, '***') : message;
  switch (code) {
    case 'ECONNREFUSED':
      return `Cannot reach the database at ${where} (connection refused): start PostgreSQL there or fix the host and port in DATABASE_URL.`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Cannot reach the database at ${where} (host not found): fix the host in DATABASE_URL.`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `Cannot reach the database at ${where} (${code}): check the host and port in DATABASE_URL and the network.`;
    case '28P01':
    case '28000':
      return `The database at ${where} refused user "${client.user}" (${said}): fix the user or password in DATABASE_URL.`;
    case '3D000':
      return `The database "${client.database}" does not exist at ${where}: create it (createdb ${client.database}) or fix its name in DATABASE_URL.`;
    default:
      if (/timeout/i.test(said)) {
        return `The database at ${where} did not answer within ${DATABASE_TIMEOUT_MS / 1000} s: check the host and port in DATABASE_URL and the network.`;
      }
      return `Cannot use the database at ${where} as user "${client.user}" (${said}): check DATABASE_URL.`;
  }
}
