import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACCEPT_SOCKETS, openAcceptSockets, reusePortSupported, sharedListen } from '../src/net/accept-sockets.ts';
import { listenOn } from '../src/net/listen.ts';

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
    // Node refuses the option where the platform lacks it.
    expect(reusePortSupported('24.0.0', 'darwin')).toBe(false);
    // A cluster's process binds its own sockets; without reusePort, one socket as before.
    expect(sharedListen(true, true)).toEqual({ sockets: ACCEPT_SOCKETS, options: { reusePort: true, exclusive: true } });
    expect(sharedListen(false, true)).toEqual({ sockets: ACCEPT_SOCKETS, options: { reusePort: true } });
    expect(sharedListen(true, false)).toEqual({ sockets: 1, options: {} });
  });

  /** An HTTP server listening as `npm start`'s does on this Node, answering with `handler`. */
  async function listening(handler: http.RequestListener) {
    const { sockets, options } = sharedListen(false);
    const server = http.createServer(handler);
    await listenOn(server, { host: '127.0.0.1', port: 0, ...options });
    await openAcceptSockets(server, sockets, options);
    return { server, port: (server.address() as net.AddressInfo).port };
  }

  /** A GET over `agent`'s connection (by default one of its own): when its answer ended (ms since `from`). */
  const get = (port: number, from: number, agent: http.Agent | false = false) =>
    new Promise<number>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - from));
      });
      req.on('error', reject);
    });

  it('accepts 40 waiting connections in a few turns of the event loop, each answered', { timeout: 30_000 }, async () => {
    const { server, port } = await listening((_req, res) => res.end('ok'));
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
      if (reusePortSupported()) expect(turns).toBeLessThanOrEqual(10);
      else expect(turns).toBeGreaterThanOrEqual(30);
    } finally {
      clearImmediate(ticking!);
      client.kill();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(path.dirname(flag), { recursive: true, force: true });
    }
  });

  it("calls close's callback once the requests of every socket's connections have been answered", { timeout: 30_000 }, async () => {
    const from = performance.now();
    const finished: number[] = [];
    let started = 0;
    const { server, port } = await listening((_req, res) => {
      started++;
      res.on('finish', () => finished.push(performance.now() - from));
      setTimeout(() => res.end('ok'), 300);
    });
    const answers = Array.from({ length: 20 }, () => get(port, from));
    while (started < 20) await new Promise((r) => setTimeout(r, 5));
    const closed = new Promise<number>((resolve) => server.close(() => resolve(performance.now() - from)));
    await Promise.all(answers);
    expect(finished).toHaveLength(20);
    // Without waiting for the sockets that handed their connections over, it was called at once.
    expect(await closed).toBeGreaterThanOrEqual(Math.max(...finished));
  });

  it('answers a response written in two parts at once on every socket (TCP_NODELAY, as the HTTP server sets it)', { timeout: 30_000 }, async () => {
    const { server, port } = await listening((_req, res) => {
      res.write('a');
      setImmediate(() => res.end('b'));
    });
    try {
      const took: number[] = [];
      // Kept-alive connections: the first segments of a connection are acknowledged at once.
      for (let c = 0; c < 5; c++) {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        for (let i = 0; i < 10; i++) {
          took.push(await get(port, performance.now(), agent));
        }
        agent.destroy();
      }
      took.sort((a, b) => a - b);
      // Nagle's algorithm holds the second part until the first is acknowledged: ~40 ms (delayed ACK).
      expect(took[25]).toBeLessThan(20);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
