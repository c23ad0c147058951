import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FormBodyError, parseFormBody } from '../../src/http/form-body.ts';
import { coerceForm, type SchemaNode } from '../../src/http/form-coercion.ts';

/** What Rack itself makes of each body (Debian's ruby-rack, installed by .ci/run): the reference's parser. */
function rackParse(bodies: string[]): unknown[] {
  const script = `
    require "rack"; require "json"
    out = JSON.parse(STDIN.read).map do |body|
      begin
        { "ok" => Rack::Utils.parse_nested_query(body, "&") }
      rescue Rack::Utils::ParameterTypeError, Rack::Utils::InvalidParameterError, Rack::QueryParser::ParamsTooDeepError
        { "error" => true }
      end
    end
    print JSON.generate(out)`;
  return JSON.parse(execFileSync('ruby', ['-e', script], { input: JSON.stringify(bodies), maxBuffer: 64 << 20 }).toString()) as unknown[];
}

function ours(body: string): unknown {
  try {
    return { ok: JSON.parse(JSON.stringify(parseFormBody(body))) as unknown };
  } catch (err) {
    if (err instanceof FormBodyError) return { error: true };
    throw err;
  }
}

describe('parseFormBody (Rack nested-query rules)', () => {
  it('parses what HTTParty sends for a Hash body, arrays of hashes included', () => {
    const body =
      'player[name]=Launch&player[chapters_attributes][][position]=0&player[chapters_attributes][][video_attributes][name]=Intro' +
      '&player[chapters_attributes][][position]=1&player[chapters_attributes][][video_attributes][name]=Demo&auth_token=abc';
    expect(ours(body)).toEqual({
      ok: {
        player: {
          name: 'Launch',
          chapters_attributes: [
            { position: '0', video_attributes: { name: 'Intro' } },
            { position: '1', video_attributes: { name: 'Demo' } },
          ],
        },
        auth_token: 'abc',
      },
    });
  });

  it('keeps indexed keys as a hash, decodes + and %, and reads a bare key as null', () => {
    expect(ours('a[0][x]=1&a[1][x]=2&q=a+b%20c%E2%82%AC&flag')).toEqual({ ok: { a: { 0: { x: '1' }, 1: { x: '2' } }, q: 'a b c€', flag: null } });
  });

  it('refuses type clashes, bad escapes, keys that reach a prototype and depth past 100', () => {
    for (const body of ['a=1&a[]=2', 'a[]=1&a[b]=2', 'a=%zz', '__proto__[x]=1', 'a[constructor][prototype]=1', `a${'[b]'.repeat(101)}=1`]) {
      expect(ours(body), body).toEqual({ error: true });
    }
  });

  it('makes the same objects as Rack on 600 generated bodies', () => {
    const segment = fc.constantFrom('[]', '[a]', '[b]', '[0]', '[1]', '[x][]', '[]]', '[', ']', '[[a]]', '[ a]');
    const name = fc
      .tuple(fc.constantFrom('a', 'b', 'c', 'x y', '€', '[a]', ''), fc.array(segment, { maxLength: 4 }))
      .map(([head, rest]) => head + rest.join(''));
    const value = fc.oneof(fc.string({ unit: 'binary', maxLength: 6 }), fc.constantFrom('', '0', 'true'));
    const pair = fc.tuple(name, fc.option(value, { nil: undefined })).map(([k, v]) => {
      const key = encodeURIComponent(k).replace(/%5B/g, '[').replace(/%5D/g, ']');
      return v === undefined ? key : `${key}=${encodeURIComponent(v).replace(/%20/g, '+')}`;
    });
    const bodies = fc.sample(
      fc.array(pair, { maxLength: 8 }).map((pairs) => pairs.join('&')),
      { numRuns: Number(process.env.FORM_RUNS ?? 600), seed: Number(process.env.FORM_SEED ?? 18) },
    );
    const expected = rackParse(bodies);
    const mismatches = bodies.filter((body, i) => JSON.stringify(sorted(ours(body))) !== JSON.stringify(sorted(expected[i])));
    expect(mismatches).toEqual([]);
  });
});

/** Key order aside (JavaScript lists integer keys first). */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

describe('coerceForm (values take the schema types)', () => {
  const schema: SchemaNode = {
    type: 'object',
    properties: {
      second: { type: 'integer' },
      ratio: { type: 'number' },
      enabled: { type: 'boolean' },
      description: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      expiry: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
      ids: { type: 'array', items: { type: 'integer' } },
      tags: { type: 'array', items: { type: 'string' } },
      chapters: { type: 'array', items: { type: 'object', properties: { position: { type: 'integer' } } } },
    },
  };

  it('converts integers, numbers and booleans, and leaves what does not convert for the schema to refuse', () => {
    expect(coerceForm(schema, { second: '10', ratio: '1.5', enabled: 'true' })).toEqual({ second: 10, ratio: 1.5, enabled: true });
    expect(coerceForm(schema, { second: '1e3', enabled: '0' })).toEqual({ second: '1e3', enabled: false });
    expect(coerceForm(schema, { second: ' 10', ratio: '', enabled: 'yes' })).toEqual({ second: ' 10', ratio: '', enabled: 'yes' });
  });

  it('reads "" as null only where no string is allowed', () => {
    expect(coerceForm(schema, { description: '', expiry: '' })).toEqual({ description: '', expiry: null });
    expect(coerceForm(schema, { expiry: '1700000000' })).toEqual({ expiry: 1700000000 });
  });

  it('turns indexed hashes into arrays in index order, and a[]= into the empty array of non-strings', () => {
    expect(coerceForm(schema, { chapters: { 10: { position: '2' }, 2: { position: '1' } } })).toEqual({ chapters: [{ position: 1 }, { position: 2 }] });
    expect(coerceForm(schema, { ids: [''], tags: [''] })).toEqual({ ids: [], tags: [''] });
    expect(coerceForm(schema, { ids: ['1', '2'], tags: ['1'] })).toEqual({ ids: [1, 2], tags: ['1'] });
  });
});
