/**
 * `application/x-www-form-urlencoded` bodies parsed the way the reference (a Rails service) parses
 * them: Rack's nested-query rules (Rack::QueryParser#normalize_params, Rack 2.2 and 3 alike for
 * bodies). `a[b]=1` nests, `a[]=1&a[]=2` appends, `a[][x]=1&a[][y]=2&a[][x]=3` builds
 * `[{x, y}, {x}]` (a key already present starts the next hash: how HTTParty sends arrays of hashes),
 * `a[0][x]=1` is a hash keyed "0" (the route's schema turns it into an array: src/http/form-coercion.ts).
 * Every value is a string, or null for a key without `=`. test/unit/form-body.test.ts compares this
 * with Rack itself.
 */

export class FormBodyError extends Error {}

/** Rack's default param_depth_limit. */
const DEPTH_LIMIT = 100;

type Params = Record<string, unknown>;

const isParams = (value: unknown): value is Params => value !== null && typeof value === 'object' && !Array.isArray(value);

function makeParams(): Params {
  // No prototype: keys such as __proto__ or constructor are plain data here.
  return Object.create(null) as Params;
}

function unescape(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new FormBodyError('invalid %-encoding');
  }
}

export function parseFormBody(text: string): Params {
  const params = makeParams();
  // Rack splits a body on "&" and drops the spaces after each one.
  for (const pair of text.split(/& */)) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = unescape(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? null : unescape(pair.slice(eq + 1));
    normalize(params, name, value, 0);
  }
  return params;
}

function normalize(params: Params, name: string, value: string | null, depth: number): Params | unknown[] | null {
  if (depth >= DEPTH_LIMIT) throw new FormBodyError('the keys are nested too deeply');
  const match = /^[[\]]*([^[\]]+)\]*/.exec(name);
  const key = match?.[1] ?? '';
  const after = match ? name.slice(match[0].length) : '';

  if (key === '') return value !== null && name === '[]' ? [value] : null;
  // Fastify refuses these keys in JSON bodies (prototype poisoning): the same for forms.
  if (key === '__proto__' || key === 'constructor' || key === 'prototype') throw new FormBodyError(`the key ${key} is not allowed`);

  if (after === '') params[key] = value;
  else if (after === '[') params[name] = value;
  else if (after === '[]') {
    params[key] ??= [];
    const list = params[key];
    if (!Array.isArray(list)) throw new FormBodyError(`expected an array for ${key}`);
    list.push(value);
  } else {
    const child = /^\[\]\[([^[\]]+)\]$/.exec(after)?.[1] ?? /^\[\](.+)$/.exec(after)?.[1];
    if (child !== undefined) {
      params[key] ??= [];
      const list = params[key];
      if (!Array.isArray(list)) throw new FormBodyError(`expected an array for ${key}`);
      const last: unknown = list[list.length - 1];
      if (isParams(last) && !hasKey(last, child)) normalize(last, child, value, depth + 1);
      else list.push(normalize(makeParams(), child, value, depth + 1));
    } else {
      params[key] ??= makeParams();
      const inner = params[key];
      if (!isParams(inner)) throw new FormBodyError(`expected an object for ${key}`);
      params[key] = normalize(inner, after, value, depth + 1);
    }
  }
  return params;
}

/** Whether the nested key (`x`, `x][y`) is already set in the hash: then the next `[]` item begins. */
function hasKey(hash: Params, key: string): boolean {
  if (key.includes('[]')) return false;
  let at: unknown = hash;
  for (const part of key.split(/[[\]]+/)) {
    if (part === '') continue;
    if (!isParams(at) || !(part in at)) return false;
    at = at[part];
  }
  return true;
}
