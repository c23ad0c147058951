/**
 * A fuzz pass over every operation of /dashboard/openapi.json: requests generated with fast-check from
 * each operation's parameter and body schemas (test/helpers/openapi-arbitraries.ts: valid values and
 * boundaries, wrong types, missing and extra fields, huge and deep bodies, unicode, real and foreign
 * ids, `.json`, Accept headers, other roles). No answer may be a 5xx, and every error must have the
 * error shape. A failure lists each offending request with the error the app logged for it.
 * The long run (20,000+ requests) is scripts/fuzz-openapi.mjs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { errorLog, fuzzOperations, operationsOf, seedWorld, type Operation, type World } from './helpers/openapi-arbitraries.ts';

/** Requests per operation: about 130 operations, so a little over 1,500 requests per dialect. */
const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS_PER_OPERATION ?? 25);

describe.each(dialects)('fuzzing the OpenAPI operations on %s', (dialect) => {
  let t: TestApp;
  let ops: Operation[];
  let world: World;
  const log = errorLog();

  beforeAll(async () => {
    t = await createTestApp(dialect, { LOG_LEVEL: 'error' }, { logStream: log.stream });
    world = await seedWorld(t);
    const doc = await t.app.inject({ method: 'GET', url: '/dashboard/openapi.json' });
    expect(doc.statusCode).toBe(200);
    ops = operationsOf(doc.json());
  });
  afterAll(() => t.close());

  it('covers every operation of the document', () => {
    expect(ops.length).toBeGreaterThan(100);
    for (const method of ['GET', 'POST', 'PATCH', 'PUT', 'DELETE']) expect(ops.some((op) => op.method === method)).toBe(true);
    // Bodies, path and query parameters all have schemas to generate from.
    expect(ops.filter((op) => op.body).length).toBeGreaterThan(40);
    expect(ops.filter((op) => op.pathParams.length > 0).every((op) => op.pathParams.every((p) => p.schema))).toBe(true);
  });

  it('answers every generated request below 500, errors in the error shape', { timeout: 120_000 }, async () => {
    const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
    const stats = await fuzzOperations(t.app, ops, world, { runsPerOperation: RUNS_PER_OPERATION, seed, errorsByRequestId: log.byRequestId });
    expect(stats.requests).toBe(ops.length * RUNS_PER_OPERATION);
    // Failures, with the seed that replays them: FUZZ_SEED=<seed> npx vitest run test/fuzz-openapi.test.ts
    expect({ seed: stats.seed, failures: stats.failures }).toEqual({ seed: stats.seed, failures: [] });
    // The requests reached the operations, not only the validation in front of them.
    const ok = Object.entries(stats.byStatus).filter(([status]) => Number(status) < 300);
    expect(ok.reduce((sum, [, n]) => sum + n, 0)).toBeGreaterThan(stats.requests / 10);
  });
});
