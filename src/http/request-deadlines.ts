import type http from 'node:http';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface Deadlines {
  /** The whole body of an ordinary request must arrive within this many milliseconds (then 408). */
  bodyMs: number;
  /** A long upload (`isLongUpload`) has no total deadline, but may not stall for longer than this. */
  idleMs: number;
  isLongUpload: (url: string) => boolean;
}

const hasBody = (req: http.IncomingMessage) => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';

/**
 * Node's `requestTimeout`, decided per request. A body dripped a byte at a time must not hold a
 * connection for ever, so ordinary bodies get REQUEST_TIMEOUT_SECONDS; but a tus PATCH of a large file
 * over a slow link legitimately takes minutes, so it is only cut when it stops sending. Requests
 * without a body cost nothing here (headers have Node's own headersTimeout).
 */
export function withRequestDeadlines(handler: Handler, deadlines: Deadlines): Handler {
  return (req, res) => {
    if (hasBody(req)) {
      const socket = req.socket;
      if (deadlines.isLongUpload(req.url ?? '/')) {
        // An idle timer of its own on the socket, removed with the response: Node's keep-alive timeout
        // (set on the same socket once the response is sent) is left as it is.
        const idle = () => socket.destroy();
        socket.setTimeout(deadlines.idleMs);
        socket.on('timeout', idle);
        const done = () => {
          socket.removeListener('timeout', idle);
          // A body that is still arriving after the answer (a refused capability, an error) is not read by
          // anyone: the connection ends rather than wait for it.
          if (!req.complete) socket.destroy();
        };
        res.once('finish', done);
        res.once('close', () => socket.removeListener('timeout', idle));
      } else {
        const timer = setTimeout(() => {
          if (req.complete || res.headersSent) return;
          // What Node's own request timeout answers; the connection ends with it.
          socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
          setTimeout(() => socket.destroy(), 1000).unref();
        }, deadlines.bodyMs);
        timer.unref();
        const clear = () => clearTimeout(timer);
        req.once('end', clear);
        res.once('finish', clear);
        res.once('close', clear);
      }
    }
    handler(req, res);
  };
}
