/**
 * The baseline: a bare node:http server answering every request with the same JSON body Reelbase
 * answered (BENCH_BODY), on a random port. Prints one JSON line {port} and serves until SIGTERM.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const body = Buffer.from(process.env.BENCH_BODY ?? '{}');
const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
