import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import type http from 'node:http';

/**
 * Handles through which a process accepts the connections of its listening socket.
 *
 * Node accepts one connection per handle per turn of its event loop (libuv 1.45, libuv/libuv#3696).
 * Under load a turn answers every ready connection's request first, tens of milliseconds on two
 * cores, so a burst of new connections waits in the kernel's queue: in the mixed bench, 200
 * connections opened at once took up to 5 s to be accepted, and their first requests were its
 * slowest by far. Each handle needs a file descriptor of its own (epoll watches descriptors), and
 * Node has no dup(): a short-lived child process is sent the socket and sends it back, and each
 * message carries a new descriptor of the same socket (SCM_RIGHTS). The connections still wait in
 * one queue, taken in order, 64 per turn. (Sockets of their own sharing the port, SO_REUSEPORT,
 * did less well: the kernel spreads connections over their queues by address, unevenly, and Node 20
 * cannot make them.) API_PROCESSES' processes are each sent the one socket by the cluster's primary
 * and do the same (src/api-processes.ts).
 */
export const ACCEPT_HANDLES = 64;

/**
 * The child: sends the socket it is given back as many times as asked, one after another (each waits
 * for the receipt of the one before), then leaves. Its 'message' listener stays: without one, Node
 * stops waiting on the channel, and the child would exit before the first receipt came.
 */
const DUPLICATOR = `process.on('message', (count, handle) => {
  const next = (err) => (err || count-- <= 0 ? process.connected && process.disconnect() : process.send(0, handle, next));
  next();
});`;

/** How long the child may take; the server goes on with the handles it has by then. */
const DUPLICATE_TIMEOUT_MS = 10_000;
/** A failing accept() (EMFILE) fails on every handle every turn: said once in this long. */
const ERROR_LOG_INTERVAL_MS = 10_000;

/**
 * Gives `server` (listening on a socket of its own, not a cluster's round-robin stand-in) `count - 1`
 * more handles on its socket, each handing its connections to `server` as its own. The server
 * answers meanwhile through its own handle; the promise settles once the child is gone (never
 * rejected). From the call on, `server.close()` stops the handles too, and calls back once the
 * child is gone and the connections they handed over have ended as well (Fastify runs its close
 * hooks then). Where the handles cannot be had (no such socket, Windows, a child that cannot be run
 * or fails) the server keeps its one handle, and why is logged.
 *
 * Each new connection wakes every handle (epoll has no exclusive wake-up through libuv), and all but
 * one of them find nothing to accept: about 40 µs of system time per new connection with 64
 * (docs/performance.md, "Session 27"). Kept-alive connections, a reverse proxy's, do not pay it.
 */
export function openAcceptHandles(
  server: http.Server,
  count: number,
  log: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
): Promise<void> {
  const socket = (server as unknown as { _handle?: { fd?: number } | null })._handle;
  if (count <= 1 || process.platform === 'win32' || typeof socket?.fd !== 'number' || socket.fd < 0) return Promise.resolve();
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, ['-e', DUPLICATOR], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: {} });
  } catch (err) {
    log(`reelbase: accepting through one handle (${(err as Error).message})`);
    return Promise.resolve();
  }
  const extra: net.Server[] = [];
  let closing = false;
  let loggedAt = -Infinity;
  const acceptFailed = (err: Error) => {
    if (performance.now() - loggedAt < ERROR_LOG_INTERVAL_MS) return;
    loggedAt = performance.now();
    log(`reelbase: a handle of the listening socket failed: ${err.message}`);
  };
  // The socket options the HTTP server gives the connections it accepts (TCP_NODELAY above all).
  const { noDelay, keepAlive, keepAliveInitialDelay, allowHalfOpen, highWaterMark } = server as http.Server & net.ServerOpts;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill(), DUPLICATE_TIMEOUT_MS);
    // A child that fails ('error') may close after, or never: whichever comes first settles, once.
    let settled = false;
    const settle = (why?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (why !== undefined) log(`reelbase: accepting through ${extra.length + 1} handles (${why})`);
      else if (extra.length < count - 1 && !closing) log(`reelbase: accepting through ${extra.length + 1} handles of ${count}`);
      resolve();
    };
    child.on('message', (_message, handle) => {
      // A descriptor that came after the server closed would keep its socket accepting.
      if (closing || !handle) return void (handle as { close?: () => void } | undefined)?.close?.();
      // Emitting 'connection' is how an http.Server is handed a connection it did not accept itself.
      const accepting = net.createServer({ noDelay, keepAlive, keepAliveInitialDelay, allowHalfOpen, highWaterMark }, (connection) =>
        server.emit('connection', connection),
      );
      // An error of accept() would otherwise be thrown: the other handles go on accepting.
      accepting.on('error', acceptFailed);
      accepting.listen(handle as net.Server);
      extra.push(accepting);
    });
    // A child that could not be started (EMFILE, EAGAIN) may say so without ever closing.
    child.on('error', (err) => settle(err.message));
    child.once('close', () => settle());
  });
  if (child.connected) child.send(count - 1, socket as unknown as net.Server, (err: Error | null) => err && child.kill());

  // A connection belongs to the handle that accepted it: the server's own close would call back
  // while those handed over are still being answered, and the child may still hold the socket.
  const closeServer = server.close;
  server.close = function (this: http.Server, callback?: (err?: Error) => void) {
    closing = true;
    child.kill();
    const handedOver = done.then(() => Promise.all(extra.map((handle) => new Promise((resolve) => handle.close(resolve)))));
    return closeServer.call(this, (err?: Error) => void handedOver.then(() => callback?.(err)));
  };
  return done;
}
