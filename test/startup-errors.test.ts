import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, npmStartArgs } from './helpers/processes.ts';
import { listenHoldingRequests, StartupError } from '../src/startup-checks.ts';

/**
 * A start that cannot succeed ends with exit code 1 and one sentence on stderr saying what to change,
 * with nothing created before it: no organization, no owner token (src/startup-checks.ts). The server
 * is a real process here, started as `npm start` starts it, since what is tested is what an operator
 * sees on the terminal. SQLite, except the cases of an unreachable PostgreSQL (which need no server).
 */

const ROOT = path.resolve(import.meta.dirname, '..');

const dirs: string[] = [];
const holders: net.Server[] = [];

afterEach(async () => {
  for (const server of holders.splice(0)) await new Promise((resolve) => server.close(resolve));
  for (const dir of dirs.splice(0)) await fsp.rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-startup-'));
  dirs.push(dir);
  return dir;
}

/** A port held by another listener for the rest of the test. */
async function heldPort(): Promise<number> {
  const server = net.createServer();
  holders.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

/** A path inside a RegExp, matched literally. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stderr's last non-empty line. */
  last: string;
}

/** `npm start`'s command (package.json: the bundle the test setup built) with this environment; fails when the server is still running after `ms` (it is then killed). */
async function start(env: Record<string, string>, ms = 25_000): Promise<Ended> {
  const child = spawn(process.execPath, npmStartArgs(), {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(await freePort()),
      RTMP_PORT: '0',
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      FFMPEG_PATH: '',
      FFPROBE_PATH: '',
      ROLE: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after ${ms} ms\n${stdout}\n${stderr}`));
    }, ms);
  });
  try {
    const code = await Promise.race([closed, late]);
    const lines = stderr.split('\n').filter((line) => line.trim() !== '');
    return { code, stdout, stderr, last: lines.at(-1) ?? '' };
  } finally {
    clearTimeout(timer);
  }
}

/** One clear line: exit code 1, the sentence last on stderr, no stack anywhere, no token printed. */
function expectOneLine(ended: Ended, sentence: RegExp): void {
  const output = `${ended.stdout}\n${ended.stderr}`;
  expect(ended.code, output).toBe(1);
  expect(ended.last, output).toMatch(sentence);
  expect(output).not.toMatch(/^ {4}at /m);
  expect(output).not.toContain('Owner token');
}

/** Nothing was created in DATA_DIR: no owner token, no database file. */
function expectNothingCreated(dataDir: string): void {
  expect(fs.existsSync(path.join(dataDir, 'owner-token'))).toBe(false);
  expect(fs.existsSync(path.join(dataDir, 'reelbase.sqlite'))).toBe(false);
}

describe('start-up errors are one clear line, before anything is created', () => {
  it('a port held by another listener: PORT named, and DATA_DIR not even created', async () => {
    const dataDir = path.join(await tempDir(), 'data');
    const port = await heldPort();
    const ended = await start({ DATA_DIR: dataDir, PORT: String(port) });
    expectOneLine(ended, new RegExp(`^PORT ${port} is already in use on 127\\.0\\.0\\.1: .*set PORT to a free port\\.$`));
    expectNothingCreated(dataDir);
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  it('the worker role does not listen: a held port does not concern it', async () => {
    // A missing ffprobe stops the worker after the port would have been checked: the line proves which check ran.
    const dir = await tempDir();
    const port = await heldPort();
    const ended = await start({ DATA_DIR: path.join(dir, 'data'), PORT: String(port), ROLE: 'worker', FFPROBE_PATH: path.join(dir, 'no-ffprobe') });
    expectOneLine(ended, /^FFPROBE_PATH \S+ cannot be run \(no such file\): set FFPROBE_PATH to an ffprobe executable/);
  });

  it('a HOST that is not an address of this machine', async () => {
    const dataDir = path.join(await tempDir(), 'data');
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned to a machine.
    const ended = await start({ DATA_DIR: dataDir, HOST: '192.0.2.1' });
    expectOneLine(ended, /^HOST 192\.0\.2\.1 is not an address of this machine: set HOST to /);
    expectNothingCreated(dataDir);
  });

  it('a DATA_DIR that cannot be created (its parent is a regular file)', async () => {
    // A path under a file fails for root too, where a chmod would not stop the writes.
    const file = path.join(await tempDir(), 'not-a-directory');
    fs.writeFileSync(file, '');
    const dataDir = path.join(file, 'data');
    const ended = await start({ DATA_DIR: dataDir });
    expectOneLine(
      ended,
      new RegExp(
        `^DATA_DIR ${literal(dataDir)} is not writable: ${literal(file)} is a file, not a directory; set DATA_DIR to a directory this user can write\\.$`,
      ),
    );
  });

  it('an ffmpeg that does not exist (FFMPEG_PATH)', async () => {
    const dir = await tempDir();
    const dataDir = path.join(dir, 'data');
    const missing = path.join(dir, 'bin', 'ffmpeg');
    const ended = await start({ DATA_DIR: dataDir, FFMPEG_PATH: missing });
    expectOneLine(ended, new RegExp(`^FFMPEG_PATH ${literal(missing)} cannot be run \\(no such file\\): set FFMPEG_PATH to an ffmpeg executable`));
    expectNothingCreated(dataDir);
  });

  it('an ffmpeg that is not executable', async () => {
    const dir = await tempDir();
    const dataDir = path.join(dir, 'data');
    const notExecutable = path.join(dir, 'ffmpeg');
    fs.writeFileSync(notExecutable, 'not a program', { mode: 0o644 });
    const ended = await start({ DATA_DIR: dataDir, FFMPEG_PATH: notExecutable });
    expectOneLine(ended, new RegExp(`^FFMPEG_PATH ${literal(notExecutable)} cannot be run \\(permission denied: not an executable file\\): `));
    expectNothingCreated(dataDir);
  });

  it('an unreachable PostgreSQL (DATABASE_URL): the host is named, the password never printed', async () => {
    const dataDir = path.join(await tempDir(), 'data');
    const ended = await start({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://postgres:s3cret-pw@127.0.0.1:1/none' });
    expectOneLine(ended, /^Cannot reach the database at 127\.0\.0\.1:1 \(connection refused\): .*DATABASE_URL\.$/);
    expect(`${ended.stdout}${ended.stderr}`).not.toContain('s3cret-pw');
    expectNothingCreated(dataDir);
  });

  it('a DATABASE_URL that is not PostgreSQL', async () => {
    const dataDir = path.join(await tempDir(), 'data');
    const ended = await start({ DATA_DIR: dataDir, DATABASE_URL: 'mysql://root:s3cret-pw@127.0.0.1/reelbase' });
    expectOneLine(ended, /^DATABASE_URL must start with postgres:\/\/ or postgresql:\/\/: /);
    expect(`${ended.stdout}${ended.stderr}`).not.toContain('s3cret-pw');
  });

  it('a configuration error is its one line too', async () => {
    const ended = await start({ DATA_DIR: path.join(await tempDir(), 'data'), PORT: 'eighty' });
    expectOneLine(ended, /^Invalid configuration: \/PORT /);
  });

  describe.runIf(process.env.TEST_DATABASE_URL)('PostgreSQL', () => {
    it('a database that does not exist on a reachable server', async () => {
      const url = new URL(process.env.TEST_DATABASE_URL ?? '');
      url.pathname = '/reelbase_no_such_database';
      const ended = await start({ DATA_DIR: path.join(await tempDir(), 'data'), DATABASE_URL: url.toString() });
      expectOneLine(ended, /^The database "reelbase_no_such_database" does not exist at \S+: create it /);
      if (url.password) expect(`${ended.stdout}${ended.stderr}`).not.toContain(url.password);
    });
  });
});

describe('listenHoldingRequests', () => {
  /** A server shaped like the Fastify app's: one request handler, and listen(). */
  function fakeApp() {
    const server = http.createServer((_req, res) => res.end('answered'));
    return {
      server,
      listen: ({ host, port }: { host: string; port: number }) =>
        new Promise<string>((resolve, reject) => {
          server.once('error', reject);
          server.listen({ host, port }, () => resolve(`http://${host}:${port}`));
        }),
    };
  }

  it('holds requests until it is told to answer them (the owner is created meanwhile)', async () => {
    const app = fakeApp();
    const answerRequests = await listenHoldingRequests(app, '127.0.0.1', 0);
    try {
      const { port } = app.server.address() as net.AddressInfo;
      let answered = false;
      const answer = fetch(`http://127.0.0.1:${port}/`).then(async (res) => {
        answered = true;
        return res.text();
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(answered).toBe(false);
      answerRequests();
      expect(await answer).toBe('answered');
      // Afterwards the app's own handler is the only one again.
      expect(app.server.listeners('request')).toHaveLength(1);
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('answered');
    } finally {
      app.server.closeAllConnections();
      await new Promise((resolve) => app.server.close(resolve));
    }
  });

  it('a port taken since the start-up check is the same one line', async () => {
    const port = await heldPort();
    const failed = await listenHoldingRequests(fakeApp(), '127.0.0.1', port).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(StartupError);
    expect((failed as Error).message).toMatch(new RegExp(`^PORT ${port} is already in use on 127\\.0\\.0\\.1: `));
  });
});
