import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { requestFingerprint } from '../../src/modules/idempotency/idempotency.service.ts';

/** The recursive definition the fingerprints stored so far were made with (keys are kept 24 h across upgrades). */
function recursiveCanonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(recursiveCanonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([k, v]) => k !== 'auth_token' && v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${recursiveCanonical(v)}`).join(',')}}`;
}

const recursiveFingerprint = (method: string, path: string, body: unknown) =>
  createHash('sha256')
    .update(`${method} ${path}\n${recursiveCanonical(body)}`)
    .digest('hex');

const withTokens = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 1 }),
    fc.constant(undefined),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('auth_token', 'a', 'B', '__x', '')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('requestFingerprint', () => {
  it('gives the fingerprint the recursive canonical form gave, for any JSON body', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), withTokens), (body) => {
        expect(requestFingerprint('POST', '/p', body)).toBe(recursiveFingerprint('POST', '/p', body));
      }),
      { numRuns: 500 },
    );
  });

  it('ignores key order and auth_token at any level', () => {
    expect(requestFingerprint('POST', '/p', { a: 1, b: { c: [1, { d: 2, e: 3 }] } })).toBe(
      requestFingerprint('POST', '/p', { b: { c: [1, { e: 3, d: 2, auth_token: 'x' }] }, auth_token: 'y', a: 1 }),
    );
  });

  it('fingerprints a body nested far deeper than the stack allows', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 50_000; i++) deep = i % 2 ? [deep] : { a: deep };
    expect(requestFingerprint('POST', '/p', deep)).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint('POST', '/p', deep)).not.toBe(requestFingerprint('POST', '/p', [deep]));
  });
});
