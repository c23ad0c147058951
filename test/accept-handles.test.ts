import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACCEPT_HANDLES, openAcceptHandles } from '../src/net/accept-handles.ts';
import { listenOn } from '../src/net/listen.ts';
import { acceptHandles, listeningSockets, until } from './helpers/processes.ts';

/**
 * A burst of new connections is accepted within a few turns of the event loop: the server accepts
 * through 64 descriptors of its listening socket (src/net/accept-handles.ts); with one, Node accepts
 * one per turn.
 */

describe('handles of the listening socket', () => {
  /** An HTTP server listening as `npm start`'s does (through `handles` handles), answering with `handler`. */
  async function listening(handler: http.RequestListener, handles = ACCEPT_HANDLES) {
    const server = http.createServer(handler);
    await listenOn(server, { host: '127.0.0.1', port: 0 });
    await openAcceptHandles(server, handles);
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

  /** The turns of the event loop 40 waiting connections take to be accepted, each answered. */
  async function turnsToAccept40(handles: number): Promise<number> {
    const { server, port } = await listening((_req, res) => res.end('ok'), handles);
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
      return acceptedAt[39] - acceptedAt[0] + 1;
    } finally {
      clearImmediate(ticking!);
      client.kill();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(path.dirname(flag), { recursive: true, force: true });
    }
  }

  it('accepts 40 waiting connections in one or two turns of the event loop through its handles, in 40 through one', { timeout: 60_000 }, async () => {
    expect(await turnsToAccept40(ACCEPT_HANDLES)).toBeLessThanOrEqual(2);
    expect(await turnsToAccept40(1)).toBeGreaterThanOrEqual(30);
  });

  it('takes one descriptor of its socket per handle; closing the server closes them all', { timeout: 30_000 }, async () => {
    const { server, port } = await listening((_req, res) => res.end('ok'));
    await until('the duplicating child gone', async () => acceptHandles(port).join() === String(ACCEPT_HANDLES));
    await new Promise((resolve) => server.close(resolve));
    expect(listeningSockets(port)).toHaveLength(0);
  });

  it('closed while the child is still handing the handles over: calls back once no descriptor of the socket is left', { timeout: 30_000 }, async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await listenOn(server, { host: '127.0.0.1', port: 0 });
    const { port } = server.address() as net.AddressInfo;
    const lines: string[] = [];
    const handedOver = openAcceptHandles(server, ACCEPT_HANDLES, (line) => void lines.push(line));
    // Some handles in: the child holds the socket, and more are on their way.
    await until('a first handle', async () => (acceptHandles(port)[0] ?? 0) > 1, 10_000);
    await new Promise((resolve) => server.close(resolve));
    expect(listeningSockets(port)).toHaveLength(0);
    expect(acceptHandles(port)).toEqual([]);
    await handedOver;
    // Nor did a descriptor that arrived after the close stay.
    expect(acceptHandles(port)).toEqual([]);
    // Closing is not a failure worth a line.
    expect(lines).toEqual([]);
  });

  it('a child that cannot be run leaves the server its one handle, answering, and one line saying why', { timeout: 30_000 }, async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await listenOn(server, { host: '127.0.0.1', port: 0 });
    const { port } = server.address() as net.AddressInfo;
    const lines: string[] = [];
    const execPath = process.execPath;
    // spawn() of a missing file fails with 'error' (ENOENT), then the child still 'close's.
    process.execPath = path.join(os.tmpdir(), 'reelbase-no-such-node');
    let handedOver: Promise<void>;
    try {
      handedOver = openAcceptHandles(server, ACCEPT_HANDLES, (line) => void lines.push(line));
    } finally {
      process.execPath = execPath;
    }
    await handedOver;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines).toEqual([expect.stringMatching(/^reelbase: accepting through 1 handles \(.*ENOENT/)]);
    expect(acceptHandles(port)).toEqual([1]);
    expect(await get(port, performance.now())).toBeGreaterThan(0);
    await new Promise((resolve) => server.close(resolve));
    expect(listeningSockets(port)).toHaveLength(0);
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
