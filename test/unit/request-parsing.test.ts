import { describe, expect, it } from 'vitest';
import { nulPath, parseQueryString, stripJsonSuffix } from '../../src/http/request-parsing.ts';

describe('parseQueryString', () => {
  it('reads the three array forms', () => {
    expect({ ...parseQueryString('a[]=x&a[]=y') }).toEqual({ a: ['x', 'y'] });
    expect({ ...parseQueryString('a=x&a=y') }).toEqual({ a: ['x', 'y'] });
    // The comma form stays a string here; it is split later, only where the route's schema wants an array.
    expect({ ...parseQueryString('a=x,y') }).toEqual({ a: 'x,y' });
  });

  it('makes a single `a[]` an array and a single `a` a string', () => {
    expect({ ...parseQueryString('a[]=x') }).toEqual({ a: ['x'] });
    expect({ ...parseQueryString('a=x') }).toEqual({ a: 'x' });
    expect({ ...parseQueryString('a%5B%5D=x&a%5B%5D=y') }).toEqual({ a: ['x', 'y'] });
  });

  it('merges the bracketed and plain forms of one key, keeping their order', () => {
    expect({ ...parseQueryString('a=1&a[]=2&a=3') }).toEqual({ a: ['1', '2', '3'] });
    expect({ ...parseQueryString('a[]=1&a=2') }).toEqual({ a: ['1', '2'] });
  });

  it('decodes like URLSearchParams: percent escapes, plus as space, lenient on malformed escapes', () => {
    expect({ ...parseQueryString('q=a%20b+c&e=%E2%82%AC') }).toEqual({ q: 'a b c', e: '€' });
    expect({ ...parseQueryString('q=%zz&r=%') }).toEqual({ q: '%zz', r: '%' });
    expect({ ...parseQueryString('flag&empty=') }).toEqual({ flag: '', empty: '' });
    expect({ ...parseQueryString('') }).toEqual({});
  });

  it('ignores keys that could reach an object prototype, and answers a null-prototype object', () => {
    const q = parseQueryString('__proto__=x&constructor=y&prototype=z&__proto__[]=w&ok=1');
    expect(Object.getPrototypeOf(q)).toBeNull();
    expect(Object.keys(q)).toEqual(['ok']);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('stripJsonSuffix', () => {
  it('strips .json from dashboard API paths, keeping the query', () => {
    expect(stripJsonSuffix('/dashboard/v1/players.json')).toBe('/dashboard/v1/players');
    expect(stripJsonSuffix('/dashboard/v1/players/3.json?per_page=2')).toBe('/dashboard/v1/players/3?per_page=2');
    expect(stripJsonSuffix('/dashboard/v1.1/players.json')).toBe('/dashboard/v1.1/players');
    expect(stripJsonSuffix('/dashboard/v1.json')).toBe('/dashboard/v1');
  });

  it('leaves other paths alone', () => {
    expect(stripJsonSuffix('/dashboard/openapi.json')).toBe('/dashboard/openapi.json');
    expect(stripJsonSuffix('/watch/abc.json')).toBe('/watch/abc.json');
    expect(stripJsonSuffix('/dashboard/v1/players?x=a.json')).toBe('/dashboard/v1/players?x=a.json');
  });
});

describe('nulPath', () => {
  it('names the first string or key holding a NUL', () => {
    expect(nulPath({ a: 'ok', b: { c: ['x', 'y\0'] } })).toBe('b.c.1');
    expect(nulPath({ 'k\0': 1 })).toBe('k\0');
    expect(nulPath('x\0')).toBe('(body)');
    expect(nulPath({ a: 'fine', n: 1, z: null, t: true })).toBeNull();
  });

  it('walks a value nested 20,000 deep without overflowing the stack', () => {
    let deep: unknown = 'x\0';
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(nulPath(deep)).toBe(`${Array.from({ length: 20_000 }, () => '0').join('.')}`);
  });
});
