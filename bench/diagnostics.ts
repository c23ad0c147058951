/**
 * What a bench server sees of a load, on stderr (`BENCH_SLOW_MS=n`, bench/server.ts): every request
 * slower than n ms inside the server, requests still unanswered after 2 s, socket errors, and every
 * 5 s the event loop's delay and the connections accepted so far. A latency the load generator
 * reports but the server does not is spent before the server reads the request (docs/performance.md,
 * "Mixed load").
 */
import type http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const say = (line: string) => process.stderr.write(`${line} at ${new Date().toISOString()}\n`);

export function watchServer(server: http.Server, slowMs: number): void {
  let connections = 0;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  server.on('connection', (socket) => {
    connections++;
    socket.once('error', (err: NodeJS.ErrnoException) => say(`socket error ${err.code} ${err.message}`));
  });
  setInterval(() => {
    say(`event loop delay max ${Math.round(loop.max / 1e6)} ms, p99 ${Math.round(loop.percentile(99) / 1e6)} ms; connections accepted so far ${connections}`);
    loop.reset();
  }, 5000).unref();
  const inFlight = new Map<http.ServerResponse, { started: number; what: string }>();
  setInterval(() => {
    for (const [res, r] of inFlight) {
      if (performance.now() - r.started < 2000) continue;
      say(`unanswered after ${Math.round(performance.now() - r.started)} ms: ${r.what}`);
      inFlight.delete(res);
    }
  }, 1000).unref();
  // Before the app's own listener: the time from the request's headers to its last byte.
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const started = performance.now();
    inFlight.set(res, { started, what: `${req.method} ${req.url}` });
    res.once('close', () => inFlight.delete(res));
    res.once('finish', () => {
      const ms = performance.now() - started;
      if (ms > slowMs) say(`slow: ${Math.round(ms)} ms ${req.method} ${req.url} ${res.statusCode}`);
    });
  });
}
