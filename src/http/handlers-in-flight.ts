import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The route handlers still running. A shutdown waits for them before the database closes: the HTTP
 * server's own drain (`app.close()`) forgets a request once its client has gone, while its handler
 * goes on using the database, and a handler of several statements could stop between two of them
 * ("driver has already been destroyed", seen at the end of loaded runs: docs/performance.md).
 */
export class HandlersInFlight {
  private running = 0;
  private waiting: Array<() => void> = [];

  begin(): void {
    this.running++;
  }

  end(): void {
    if (--this.running > 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }

  /** Resolves once no handler runs (at once when none does). */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}

const trackers = new WeakMap<FastifyInstance, HandlersInFlight>();

/** Counts the handlers of every route registered from now on. */
export function trackHandlers(app: FastifyInstance): HandlersInFlight {
  const tracker = new HandlersInFlight();
  trackers.set(app, tracker);
  const end = () => tracker.end();
  app.addHook('onRoute', (route) => {
    const handler = route.handler as (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => unknown;
    route.handler = function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      tracker.begin();
      let result: unknown;
      try {
        result = handler.call(this, request, reply);
      } catch (err) {
        tracker.end();
        throw err;
      }
      if (!isThenable(result)) {
        tracker.end();
        return result;
      }
      // Fastify goes on with the handler's own promise: no hop added to the answer's path.
      result.then(end, end);
      return result;
    };
  });
  return tracker;
}

export function handlersInFlight(app: FastifyInstance): HandlersInFlight | undefined {
  return trackers.get(app);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}
