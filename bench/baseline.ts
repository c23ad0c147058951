/**
 * The baselines: a server answering every request with the same JSON body Reelbase answered
 * (BENCH_BODY), on a random port. BENCH_BASELINE=node (default) is a bare node:http server, the
 * issue's reference; BENCH_BASELINE=fastify is a bare Fastify route, shown for context (the framework's
 * own floor, before auth and the database). Prints one JSON line {port} and serves until SIGTERM.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

const body = Buffer.from(process.env.BENCH_BODY ?? '{}');
const ready = (port: number) => process.stdout.write(`${JSON.stringify({ port })}\n`);

if (process.env.BENCH_BASELINE === 'fastify') {
  const app = Fastify({ logger: false });
  app.get('/*', async (_req, reply) => reply.type('application/json; charset=utf-8').send(body));
  await app.listen({ host: '127.0.0.1', port: 0 });
  ready((app.server.address() as AddressInfo).port);
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
} else {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => ready((server.address() as AddressInfo).port));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
