/**
 * Requests sent at a steady rate (open loop: a slow answer does not hold back the requests after it,
 * so a stall shows in their latencies too), each one's latency counted from when it was sent.
 * autocannon's rates send each second's requests in a burst at its start, which measures the burst
 * rather than the rate; this spreads them over the second (within the 1 ms of a timer).
 */
import http from 'node:http';

export interface PacedRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface PacedResult {
  sent: number;
  ok: number;
  failed: number;
  /** Answers per second over the run. */
  rps: number;
  /** Longest the sender fell behind its schedule, in seconds (it must stay near 0 for the figures to hold). */
  lagging: number;
  /** Milliseconds, from when each request was sent. */
  mean: number;
  p50: number;
  p99: number;
  max: number;
}

export async function paced(options: { base: string; rate: number; seconds: number; connections: number; next: () => PacedRequest }): Promise<PacedResult> {
  const { hostname, port } = new URL(options.base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  let sent = 0;
  let failed = 0;
  let lagging = 0;
  const started = performance.now();
  const total = Math.round(options.rate * options.seconds);
  const inFlight = new Set<Promise<void>>();

  const send = () => {
    const { method, path, headers, body } = options.next();
    const sentAt = performance.now();
    const done = new Promise<void>((resolve) => {
      const req = http.request(
        { agent, host: hostname, port, method, path, headers: body ? { ...headers, 'content-length': Buffer.byteLength(body) } : headers },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode! >= 200 && res.statusCode! < 300) latencies.push(performance.now() - sentAt);
            else failed++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.end(body);
    });
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };

  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * options.rate));
      // Behind by more than 10 ms: the sender, not the server, would set the pace.
      lagging = Math.max(lagging, (due - sent) / options.rate);
      for (; sent < due; sent++) send();
      if (sent >= total) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] : NaN);
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    sent,
    lagging,
    ok: latencies.length,
    failed,
    rps: latencies.length / elapsed,
    mean: round(latencies.reduce((s, l) => s + l, 0) / Math.max(1, latencies.length)),
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    max: round(latencies.at(-1) ?? NaN),
  };
}
