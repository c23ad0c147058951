import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';

/**
 * A step every request of a route runs before validation (request id, negotiation, normalisation,
 * authentication). It throws an AppError to refuse the request, or returns a promise to wait for.
 */
export type RouteStep = (request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;

/** Builds a route's step from its options, once, when the route is registered; undefined: none. */
export type RouteStepFactory = (route: RouteOptions) => RouteStep | undefined;

const factoriesOf = new WeakMap<FastifyInstance, RouteStepFactory[]>();

/**
 * Adds a step to every route registered from now on. The steps of a route are composed, in the order
 * they were added, into one preValidation hook built for that route: a request pays for one Fastify
 * hook, not one per concern, and a step reads its route's options once at startup rather than through
 * `request.routeOptions` (a getter that builds a new object) on every request. On a cached read the
 * hooks were most of the cost (docs/performance.md).
 */
export function addRouteStep(app: FastifyInstance, factory: RouteStepFactory): void {
  let factories = factoriesOf.get(app);
  if (!factories) {
    const list: RouteStepFactory[] = (factories = []);
    factoriesOf.set(app, list);
    app.addHook('onRoute', (route) => {
      const steps = list.map((make) => make(route)).filter((step): step is RouteStep => step !== undefined);
      if (steps.length > 0) addRouteHook(route, 'preValidation', composeSteps(steps));
    });
  }
  factories.push(factory);
}

function composeSteps(steps: RouteStep[]) {
  return (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => runSteps(steps, 0, request, reply, done);
}

function runSteps(steps: RouteStep[], from: number, request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
  try {
    for (let i = from; i < steps.length; i++) {
      const pending = steps[i](request, reply);
      if (pending) {
        pending.then(() => runSteps(steps, i + 1, request, reply, done), done);
        return;
      }
    }
  } catch (err) {
    done(err as Error);
    return;
  }
  done();
}

type HookName = 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend';

/**
 * Adds a Fastify hook to one route, from an `onRoute` hook: for steps only some routes need
 * (idempotency on POST, CSV/XLSX on lists, Deprecation on deprecated routes).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Fastify's hook signatures differ per hook name; the caller passes the one `name` expects.
export function addRouteHook(route: RouteOptions, name: HookName, hook: (...args: any[]) => unknown): void {
  const existing = route[name] as unknown;
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
  (route as unknown as Record<string, unknown>)[name] = [...list, hook];
}

export function routeHasMethod(route: RouteOptions, method: string): boolean {
  return Array.isArray(route.method) ? route.method.includes(method) : route.method === method;
}
