import net from 'node:net';
import type http from 'node:http';
import { listenOn } from './listen.ts';

/**
 * Listening sockets per API process, where Node can share a port between them.
 *
 * Node accepts one connection per turn of its event loop (libuv 1.45, libuv/libuv#3696). Under load a
 * turn answers every ready connection's request first, tens of milliseconds on two cores, so a burst
 * of new connections waits in the kernel's queue: in the mixed bench, 200 connections opened at once
 * took up to 5 s to be accepted, and their first requests were its slowest by far. With several
 * sockets on the port (SO_REUSEPORT; the kernel spreads new connections over them by their
 * addresses), each accepts one per turn. The kernel lets only sockets of the same user share a port.
 * The processes of API_PROCESSES listen through sockets of their own too, rather than being handed
 * each connection by the cluster's primary, one message and its acknowledgement at a time.
 */
export const ACCEPT_SOCKETS = 64;

/** How a socket shares its port: `reusePort` with more sockets; `exclusive`, in a cluster's process, bound by that process rather than by the primary. */
export interface SharedListen {
  reusePort?: boolean;
  exclusive?: boolean;
}

/** How this process listens: alone or in a cluster (`inCluster`), where Node can share a port; answers how many sockets, and their options. */
export function sharedListen(inCluster: boolean, supported = reusePortSupported()): { sockets: number; options: SharedListen } {
  if (!supported) return { sockets: 1, options: {} };
  return { sockets: ACCEPT_SOCKETS, options: inCluster ? { reusePort: true, exclusive: true } : { reusePort: true } };
}

/**
 * Whether this Node can listen with `reusePort` (22.12 and 23.1 onwards, where the platform has it:
 * Node refuses the option elsewhere). Linux only here, the platform this is run and tested on.
 */
export function reusePortSupported(version = process.versions.node, platform: string = process.platform): boolean {
  const [major, minor] = version.split('.').map(Number);
  return platform === 'linux' && (major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12));
}

/**
 * Opens `count - 1` more listening sockets on the address `server` listens on (which must have
 * listened with `reusePort`, and `options` are how), each handing its connections to `server` as its
 * own. From then on `server.close()` stops them too, and calls back once the connections they handed
 * over have ended as well (Fastify runs its close hooks then).
 */
export async function openAcceptSockets(server: http.Server, count: number, options: SharedListen = { reusePort: true }): Promise<void> {
  const address = server.address();
  if (count <= 1 || address === null || typeof address === 'string') return;
  const extra: net.Server[] = [];
  const close = () => Promise.all(extra.map((socket) => new Promise((resolve) => socket.close(resolve)))).then(() => {});
  // The socket options the HTTP server gives the connections it accepts (TCP_NODELAY above all).
  const { noDelay, keepAlive, keepAliveInitialDelay, allowHalfOpen, highWaterMark } = server as http.Server & net.ServerOpts;
  try {
    for (let i = 1; i < count; i++) {
      // Emitting 'connection' is how an http.Server is handed a socket it did not accept itself.
      const socket = net.createServer({ noDelay, keepAlive, keepAliveInitialDelay, allowHalfOpen, highWaterMark }, (connection) =>
        server.emit('connection', connection),
      );
      extra.push(socket);
      await listenOn(socket, { host: address.address, port: address.port, ...options });
      // An error of accept() would otherwise be thrown: the other sockets go on accepting.
      socket.on('error', (err) => process.stderr.write(`reelbase: a listening socket of port ${address.port} failed: ${err.message}\n`));
    }
  } catch (err) {
    await close();
    throw err;
  }
  // A connection belongs to the socket that accepted it: the server's own close would call back while
  // those handed over are still being answered.
  const closeServer = server.close;
  server.close = function (this: http.Server, callback?: (err?: Error) => void) {
    const handedOver = close();
    return closeServer.call(this, (err?: Error) => void handedOver.then(() => callback?.(err)));
  };
}
