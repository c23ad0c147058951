/**
 * A shutdown waits for the handlers still running, also those whose client has gone: the HTTP
 * server's drain forgets such a request, and its handler went on using a database that was closing
 * ("driver has already been destroyed" in the log; a write of several statements cut between them).
 * The server is a real process: what is tested is its shutdown. The handler is held inside the
 * database, by a lock that another connection holds on the table it writes. On SQLite that wait
 * holds the process's one thread, signal handling included, so the case is PostgreSQL's; the same
 * run on SQLite checks that the shutdown still ends well.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dialects } from './helpers/harness.ts';
import { freePort, freshSchemaEnv, sendJson, until } from './helpers/processes.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const P = '/dashboard/v1';

const send = (port: number, token: string, method: string, url: string, body?: unknown) => sendJson({ port, token }, method, url, body);

describe.each(dialects)('a shutdown while a request runs, on %s', (dialect) => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await fsp.rm(dir, { recursive: true, force: true });
  });

  it('lets the handler of a request whose client went away finish before the database closes', { timeout: 60_000 }, async () => {
    const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), `reelbase-shutdown-requests-${dialect}-`));
    dirs.push(dataDir);
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', RTMP_PORT: '0', ROLE: 'api' };
    for (const key of ['DATABASE_URL', 'PGOPTIONS', 'PUBLIC_URL', 'HOST', 'MEDIA_DIR', 'REDIS_URL', 'STORAGE_URL', 'API_PROCESSES']) delete env[key];
    if (dialect === 'postgres') Object.assign(env, await freshSchemaEnv('shutdown_requests'));
    const port = await freePort();
    env.PORT = String(port);
    const server = spawn(process.execPath, ['scripts/start.mjs'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    server.stdout.on('data', (d: Buffer) => (out += d.toString()));
    server.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
    try {
      const token = await until('the owner token', async () => fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim());
      await until('listening', async () => out.includes('Server listening'));
      const player = await send(port, token, 'POST', `${P}/players`, {
        player: {
          name: 'Held',
          chapters_attributes: [{ position: 0, video_attributes: { name: 'Held video', upload_url: 'https://media.example.com/held.mp4' } }],
        },
      }).answer;
      expect(player.status).toBe(201);
      const chapterId = player.body.chapters_attributes[0].id;
      const cta = await send(port, token, 'POST', `${P}/ctas`, { chapter_id: chapterId, second: 1, duration: 5, width: 300, html: '<b>before</b>' }).answer;
      expect(cta.status).toBe(201);

      // Another connection holds the table of CTAs; the update waits inside the database for it.
      let release: () => Promise<void>;
      let readHtml: () => Promise<string>;
      if (dialect === 'postgres') {
        const holder = new pg.Client({ connectionString: env.DATABASE_URL, options: env.PGOPTIONS });
        await holder.connect();
        await holder.query('begin');
        await holder.query('lock table events in access exclusive mode');
        release = async () => {
          await holder.query('commit');
        };
        readHtml = async () => {
          const { rows } = await holder.query('select html from events where id = $1', [cta.body.id]);
          await holder.end();
          return rows[0].html as string;
        };
      } else {
        const holder = new Sqlite(path.join(dataDir, 'reelbase.sqlite'));
        holder.exec('begin exclusive');
        release = async () => void holder.exec('commit');
        readHtml = async () => {
          const row = holder.prepare('select html from events where id = ?').get(cta.body.id) as { html: string };
          holder.close();
          return row.html;
        };
      }
      const held = send(port, token, 'PATCH', `${P}/ctas/${cta.body.id}`, { html: '<b>after</b>', second: 2 });
      held.answer.catch(() => undefined);
      // On PostgreSQL the server's process waits for the lock; on SQLite its one thread does.
      await new Promise((r) => setTimeout(r, 300));
      held.abort();
      await new Promise((r) => setTimeout(r, 100));
      server.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 700));
      await release!();
      expect(await exited, out).toBe(0);
      expect(await readHtml!()).toBe('<b>after</b>');
      expect(out).not.toMatch(/destroyed/);
      expect(out).not.toMatch(/"level":50/);
      expect(out).toMatch(/reelbase: stopped\n/);
    } finally {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    }
  });
});
