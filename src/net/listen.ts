import type net from 'node:net';

/** `server.listen(options)` as a promise: rejected by the error a failed listen emits, whose listener goes once it listens. */
export function listenOn(server: net.Server, options: net.ListenOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
