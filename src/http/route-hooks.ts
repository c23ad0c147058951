import type { RouteOptions } from 'fastify';

type HookName = 'onRequest' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend';

/**
 * Adds a hook to one route from an `onRoute` hook. The cross-cutting steps (negotiation, request
 * normalisation, auth, idempotency, CSV/XLSX, Deprecation) are attached this way, each built for the
 * route it serves from the route's options: a route pays only for the steps it needs, and a step does
 * not look its route up again on every request (on a cached read, that work is most of the cost).
 * Steps run in the order their `register…` functions were called in app.ts.
 */
export function addRouteHook(route: RouteOptions, name: HookName, hook: (...args: any[]) => unknown): void {
  const existing = route[name] as unknown;
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
  (route as unknown as Record<string, unknown>)[name] = [...list, hook];
}

export function routeHasMethod(route: RouteOptions, method: string): boolean {
  return Array.isArray(route.method) ? route.method.includes(method as never) : route.method === method;
}
