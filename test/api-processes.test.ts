/**
 * API_PROCESSES=2 (src/api-processes.ts) as `npm start` runs it: a supervisor and two processes
 * sharing the port. Both serve; a write answered by one is read by the other on the very next
 * request; the organization of a first start is made once; a process that dies is started again;
 * SIGTERM to the supervisor stops them all.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dialects } from './helpers/harness.ts';
import { acceptHandles, freePort, freshSchemaEnv, listeningSockets, npmStartArgs, sendJson, until } from './helpers/processes.ts';
import { ACCEPT_HANDLES } from '../src/net/accept-handles.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const P = '/dashboard/v1';

function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A request on `agent`'s one kept-alive connection, served by the process that connection was handed to. */
async function request(agent: http.Agent, port: number, token: string, method: string, url: string, body?: unknown) {
  const { status, body: answer, headers } = await sendJson({ port, token, agent }, method, url, body).answer;
  // The request id's prefix is its process's (src/http/request-id.ts).
  return { status, body: answer, process: String(headers['x-request-id']).split('-')[0] };
}

const connection = () => new http.Agent({ keepAlive: true, maxSockets: 1 });

describe.each(dialects)('API_PROCESSES=2 on %s', (dialect) => {
  let server: ChildProcess | undefined;
  const dirs: string[] = [];

  afterAll(async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      for (const pid of childrenOf(server.pid!)) process.kill(pid, 'SIGKILL');
      server.kill('SIGKILL');
    }
    for (const dir of dirs) await fsp.rm(dir, { recursive: true, force: true });
  });

  it('serves from both processes, reads each write at once from the other, restarts one that dies, and stops on SIGTERM', { timeout: 90_000 }, async () => {
    const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), `reelbase-processes-${dialect}-`));
    dirs.push(dataDir);
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', API_PROCESSES: '2' };
    for (const key of ['DATABASE_URL', 'PGOPTIONS', 'PUBLIC_URL', 'HOST', 'MEDIA_DIR', 'REDIS_URL', 'STORAGE_URL']) delete env[key];
    if (dialect === 'postgres') Object.assign(env, await freshSchemaEnv('processes'));
    const port = await freePort();
    env.PORT = String(port);
    env.RTMP_PORT = String(await freePort());
    server = spawn(process.execPath, npmStartArgs(), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    server.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    server.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => server!.once('exit', resolve));

    const token = await until('the owner token', async () => fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim());
    const processes = await until('two API processes', async () => childrenOf(server!.pid!).length === 2 && childrenOf(server!.pid!));
    await until('both listening', async () => (out.match(/Server listening/g) ?? []).length === 2 && true);
    // One listening socket, made by the supervisor; each process accepts from it through handles of its own.
    await until('the handles of both processes', async () => acceptHandles(port).join() === `1,${ACCEPT_HANDLES},${ACCEPT_HANDLES}`);
    expect(listeningSockets(port)).toHaveLength(1);
    // The first start's organization is made once, by the first process; the ingest runs there only.
    expect(out.match(/created organization/g)).toHaveLength(1);
    expect(out.match(/RTMP ingest listening/g)).toHaveLength(1);

    const agents: http.Agent[] = [];
    const on = () => {
      const agent = connection();
      agents.push(agent);
      return (method: string, url: string, body?: unknown) => request(agent, port, token, method, url, body);
    };
    const first = on();
    const player = await first('POST', `${P}/players`, {
      player: {
        name: 'Shared',
        chapters_attributes: [{ position: 0, video_attributes: { name: 'Shared video', upload_url: 'https://media.example.com/shared.mp4' } }],
      },
    });
    expect(player.status).toBe(201);
    const cta = await first('POST', `${P}/ctas`, { chapter_id: player.body.chapters_attributes[0].id, second: 1, duration: 5, width: 300, html: '<b>0</b>' });
    expect(cta.status).toBe(201);
    const url = `${P}/ctas/${cta.body.id}`;
    // The second connection goes to the other process. Meanwhile both serve reads of the same CTA on
    // connections of their own, so that each keeps the CTA in its read cache and has just looked at the
    // database when the write comes: with a change check of a millisecond, 8 to 15 reads in 300 saw the
    // value before the write.
    // (Whichever process is free accepts the next connection from the shared socket: new connections
    // are opened until one lands there.)
    let second = on();
    let firstRead = await second('GET', url);
    for (let tries = 1; firstRead.process === cta.process && tries < 50; tries++) {
      second = on();
      firstRead = await second('GET', url);
    }
    expect(firstRead.status).toBe(200);
    expect(firstRead.process, 'the other process').not.toBe(cta.process);
    let writing = true;
    const readers = Array.from({ length: 6 }, () => on()).map(async (read) => {
      while (writing) expect((await read('GET', url)).status).toBe(200);
    });
    try {
      for (let i = 1; i <= 300; i++) {
        const written = await first('PATCH', url, { html: `<b>${i}</b>` });
        expect(written.status).toBe(200);
        const read = await second('GET', url);
        expect(read.body.html, `read ${i}`).toBe(`<b>${i}</b>`);
        expect([written.process, read.process]).toEqual([cta.process, firstRead.process]);
      }
    } finally {
      writing = false;
      await Promise.all(readers);
      for (const agent of agents) agent.destroy();
    }
    const servedBy = new Set([...out.matchAll(/"pid":(\d+)[^\n]*"msg":"request completed"/g)].map((m) => Number(m[1])));
    expect([...servedBy].sort()).toEqual([...processes].sort());

    // A process that dies is started again; the service goes on meanwhile.
    const [, secondPid] = processes;
    process.kill(secondPid, 'SIGKILL');
    const replaced = await until('a new second process', async () => {
      const now = childrenOf(server!.pid!);
      return now.length === 2 && !now.includes(secondPid) && now;
    });
    await until('the new process listening', async () => (out.match(/Server listening/g) ?? []).length === 3 && true);
    expect(out).toMatch(/API process 2 of 2 stopped \(SIGKILL\); starting it again/);
    for (let i = 0; i < 4; i++) {
      const agent = connection();
      expect((await request(agent, port, token, 'GET', url)).status).toBe(200);
      agent.destroy();
    }

    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of replaced) expect(fs.existsSync(`/proc/${pid}`), `process ${pid} gone`).toBe(false);
  });
});

describe('API_PROCESSES=2 when the first process cannot start', () => {
  it('stops with that process exit code rather than starting it again and again', { timeout: 60_000 }, async () => {
    const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-processes-fail-'));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, API_PROCESSES: '2', PORT: String(await freePort()), RTMP_PORT: '0' };
      for (const key of ['DATABASE_URL', 'PGOPTIONS', 'PUBLIC_URL', 'HOST', 'MEDIA_DIR', 'REDIS_URL', 'STORAGE_URL']) delete env[key];
      // Not a database: the first process fails as it opens it, after the supervisor's checks passed.
      fs.writeFileSync(path.join(dataDir, 'reelbase.sqlite'), 'not a database, but long enough to be read as one '.repeat(100));
      const child = spawn(process.execPath, npmStartArgs(), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code, out).toBe(1);
      expect(out).toMatch(/file is not a database/);
      expect(out).toMatch(/API process 1 of 2 stopped before it served \(exit code 1\); stopping/);
      expect(out.match(/file is not a database/g), 'one attempt').toHaveLength(1);
    } finally {
      await fsp.rm(dataDir, { recursive: true, force: true });
    }
  });
});
