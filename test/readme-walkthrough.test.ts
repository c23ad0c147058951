/**
 * The README's walkthrough runs as pasted: its shell blocks ("A first walkthrough", then "Managing your
 * organization") are taken from README.md and run in order by bash against a fresh `npm start`, in a
 * folder laid out like a checkout (the project's package.json, src and node_modules linked in), the
 * way a newcomer runs them. `curl` fails on any 4xx/5xx there, and the script stops at the first error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, freshSchemaEnv } from './helpers/processes.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { dialects } from './helpers/harness.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The ```sh blocks of the README sections named, in order. */
export function shellBlocks(markdown: string, sections: string[]): string[] {
  const blocks: string[] = [];
  for (const section of sections) {
    const start = markdown.indexOf(`\n## ${section}\n`);
    if (start < 0) throw new Error(`README has no section "${section}"`);
    const next = markdown.indexOf('\n## ', start + 4);
    const body = markdown.slice(start, next < 0 ? undefined : next);
    for (const match of body.matchAll(/```sh\n([\s\S]*?)```/g)) blocks.push(match[1]);
  }
  return blocks;
}

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe.each(dialects)('the README walkthrough on %s', (dialect) => {
  const started: ChildProcess[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const child of started) child.kill('SIGTERM');
    await Promise.all(started.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    for (const dir of dirs) await fsp.rm(dir, { recursive: true, force: true });
  });

  it('runs every shell block in order against a fresh server', { timeout: 180_000 }, async () => {
    const blocks = shellBlocks(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'), ['A first walkthrough', 'Managing your organization']);
    expect(blocks.length).toBeGreaterThanOrEqual(8);

    // A folder like a fresh checkout after `npm ci`.
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), `reelbase-readme-${dialect}-`));
    dirs.push(dir);
    for (const name of ['package.json', 'node_modules', 'src', 'tsconfig.json', 'scripts', 'dist'])
      await fsp.symlink(path.join(ROOT, name), path.join(dir, name));
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), RTMP_PORT: '0', LOG_LEVEL: 'warn' };
    for (const key of ['DATA_DIR', 'DATABASE_URL', 'PUBLIC_URL', 'HOST', 'MEDIA_DIR', 'PGOPTIONS']) delete env[key];
    if (dialect === 'postgres') {
      Object.assign(env, await freshSchemaEnv('readme'));
    }

    const server = spawn('npm', ['start'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(server);
    let serverOutput = '';
    server.stdout.on('data', (d: Buffer) => (serverOutput += d.toString()));
    server.stderr.on('data', (d: Buffer) => (serverOutput += d.toString()));
    const end = Date.now() + 60_000;
    while (!serverOutput.includes('Owner token')) {
      if (Date.now() > end || server.exitCode !== null) throw new Error(`the server did not start:\n${serverOutput}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    // As pasted, in order; curl fails on an error answer (the README's own commands use -s only).
    const script = ['set -euo pipefail', 'curl() { command curl --fail-with-body "$@"; }', ...blocks].join('\n');
    const { code, output } = await run('bash', ['-c', script], { cwd: dir, env });
    expect(code, `${output}\n--- server ---\n${serverOutput}`).toBe(0);

    const lines = output.trim().split('\n');
    // The CLI upload waited for processing; the last command made a token acting as the invited user.
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'demo.json'), 'utf8'))).toMatchObject({
      status: 'ready',
      watch_url: expect.stringContaining(`:${port}/watch/`),
    });
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ auth_token: expect.any(String), role: 'editor' });
    expect(output).toContain('<a href=\\"https://example.com\\">Book a demo</a>'); // the CTA, in the list
    expect(output).toContain('id,chapter_id,second,duration'); // the CSV list
    expect(output).toContain('"type":"video"'); // oEmbed
  });
});
