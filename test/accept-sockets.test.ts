import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACCEPT_SOCKETS, openAcceptSockets, reusePortSupported } from '../src/net/accept-sockets.ts';

/**
 * A burst of new connections is accepted within a few turns of the event loop where Node can share
 * the port between sockets (src/net/accept-sockets.ts); with one socket, Node accepts one per turn.
 */

describe('listening sockets sharing the port', () => {
  it('reusePort is known from Node 22.12 and 23.1', () => {
    expect(reusePortSupported('20.20.2')).toBe(false);
    expect(reusePortSupported('22.11.0')).toBe(false);
    expect(reusePortSupported('22.12.0')).toBe(true);
    expect(reusePortSupported('23.0.0')).toBe(false);
    expect(reusePortSupported('23.1.0')).toBe(true);
    expect(reusePortSupported('24.0.0')).toBe(true);
  });

  it('accepts 40 waiting connections in a few turns of the event loop, each answered', { timeout: 30_000 }, async () => {
    const shared = reusePortSupported();
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0, reusePort: shared } as net.ListenOptions, resolve));
    const close = await openAcceptSockets(server, shared ? ACCEPT_SOCKETS : 1);
    const { port } = server.address() as net.AddressInfo;
    // One count per turn of the event loop.
    let turn = 0;
    let ticking: NodeJS.Immediate;
    const tick = () => {
      turn++;
      ticking = setImmediate(tick);
    };
    tick();
    const acceptedAt: number[] = [];
    server.on('connection', () => acceptedAt.push(turn));
    const flag = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-accept-')), 'connected');
    // Another process connects 40 times (the kernel completes each handshake unaccepted), says so in
    // `flag`, then asks over each connection once.
    const client = spawn(
      process.execPath,
      [
        '-e',
        `const net = require('node:net'); const fs = require('node:fs');
         const sockets = []; let connected = 0, answered = 0;
         for (let i = 0; i < 40; i++) {
           const s = net.connect(${port}, '127.0.0.1', () => { if (++connected === 40) { fs.writeFileSync(${JSON.stringify(flag)}, ''); for (const t of sockets) t.write('GET / HTTP/1.1\\r\\nhost: x\\r\\nconnection: close\\r\\n\\r\\n'); } });
           let text = ''; s.on('data', (d) => (text += d)); s.on('end', () => { if (!text.startsWith('HTTP/1.1 200')) process.exit(2); if (++answered === 40) process.exit(0); });
           sockets.push(s);
         }`,
      ],
      { stdio: 'inherit' },
    );
    const exited = new Promise<number | null>((resolve) => client.once('exit', resolve));
    try {
      // The event loop held until all 40 wait to be accepted.
      const until = Date.now() + 15_000;
      while (!fs.existsSync(flag) && Date.now() < until);
      expect(fs.existsSync(flag)).toBe(true);
      expect(await exited).toBe(0);
      expect(acceptedAt).toHaveLength(40);
      const turns = acceptedAt[39] - acceptedAt[0] + 1;
      // 40 connections over 64 sockets: as many turns as the most any one socket got; with one socket, 40.
      if (shared) expect(turns).toBeLessThanOrEqual(10);
      else expect(turns).toBeGreaterThanOrEqual(30);
    } finally {
      clearImmediate(ticking!);
      client.kill();
      await close();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(path.dirname(flag), { recursive: true, force: true });
    }
  });
});
