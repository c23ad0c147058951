/**
 * Requests for every operation of /dashboard/openapi.json, generated with fast-check from the
 * operation's own parameter and body schemas: values the schema allows (boundaries included), and
 * values it does not (wrong types, missing and extra fields, huge text, deep nesting, unicode, NUL),
 * real ids of the organization's records and of another organization's, `.json` suffixes, Accept
 * headers, tokens of other roles or none. Used by test/fuzz-openapi.test.ts (a short run in the suite)
 * and scripts/fuzz-openapi.mjs (a long one, `longFuzzRun` below).
 */
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { createOrg, createPlayer, createUser } from './factories.ts';
import { extremeValue, nastyString, nastyValue } from './arbitraries.ts';
import { createTestApp, type TestApp } from './harness.ts';

// ---- the document ----------------------------------------------------------------------------

export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minItems?: number;
  maxItems?: number;
  additionalProperties?: boolean | Schema;
  minProperties?: number;
  uniqueItems?: boolean;
}

export interface Parameter {
  name: string;
  required: boolean;
  schema: Schema;
}

export interface Operation {
  /** `GET /dashboard/v1/players/{id}` */
  id: string;
  method: string;
  /** The path template, `{name}` for each path parameter. */
  path: string;
  pathParams: Parameter[];
  query: Parameter[];
  body?: Schema;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: Array<Parameter & { in: string }>; requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
}

const METHOD_ORDER = ['post', 'get', 'put', 'patch', 'delete'];

/**
 * Every operation of the document, creating ones first and deleting ones last: records made by the
 * POSTs give the later operations real ids, and deletions take nothing away from the others.
 */
export function operationsOf(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHOD_ORDER.includes(method)) continue;
      const params = op.parameters ?? [];
      ops.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path'),
        query: params.filter((p) => p.in === 'query'),
        body: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  const rank = (op: Operation) => METHOD_ORDER.indexOf(op.method.toLowerCase());
  return ops.sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path));
}

// ---- the records the requests point at -------------------------------------------------------

/** Ids by collection (`players`, `videos`, …), for one organization. */
export class Records {
  readonly ids = new Map<string, Set<number>>();
  readonly uuids = new Set<string>();
  readonly strings = new Map<string, Set<string>>();

  add(collection: string, id: number) {
    if (!Number.isSafeInteger(id) || id <= 0) return;
    let set = this.ids.get(collection);
    if (!set) this.ids.set(collection, (set = new Set()));
    set.add(id);
  }

  /** An id of the collection (any collection's when it has none), chosen by `n`. */
  pick(collection: string, n: number): number {
    const own = this.ids.get(collection);
    const pool = own && own.size > 0 && n % 5 !== 0 ? [...own] : [...this.ids.values()].flatMap((s) => [...s]);
    return pool.length > 0 ? pool[n % pool.length] : 1;
  }

  pickUuid(n: number): string {
    const pool = [...this.uuids];
    return pool.length > 0 ? pool[n % pool.length] : '00000000-0000-4000-8000-000000000000';
  }

  pickString(kind: string, n: number): string | undefined {
    const pool = [...(this.strings.get(kind) ?? [])];
    return pool.length > 0 ? pool[n % pool.length] : undefined;
  }

  /**
   * Takes the ids out of an answer about `collection`: `id` of the top-level items, `id` of nested
   * items under the key that names them (`chapters_attributes` → chapters, `video_attributes` →
   * videos), `*_id` fields, `uuid`s and GDPR receipts.
   */
  harvest(collection: string, body: unknown) {
    const stack: Array<[unknown, string, number]> = [[body, collection, 0]];
    while (stack.length > 0) {
      const [value, into, depth] = stack.pop()!;
      if (depth > 6 || value === null || typeof value !== 'object') continue;
      if (Array.isArray(value)) {
        for (const item of value) stack.push([item, into, depth + 1]);
        continue;
      }
      for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
        if (key === 'id' && typeof inner === 'number') {
          this.add(into, inner);
        } else if (key.endsWith('_id') && typeof inner === 'number') {
          this.add(collectionOfName(key), inner);
        } else if (key.endsWith('_ids') && Array.isArray(inner)) {
          for (const x of inner) if (typeof x === 'number') this.add(collectionOfName(key), x);
        } else if (key === 'uuid' && typeof inner === 'string') {
          // Players and videos have UUIDs; only players are addressed by one.
          if (into === 'players') this.uuids.add(inner);
        } else if (key === 'receipt_id' && typeof inner === 'string') {
          this.addString('receipts', inner);
        } else if (inner !== null && typeof inner === 'object') {
          stack.push([inner, collectionOfKey(key, into), depth + 1]);
        }
      }
    }
  }

  addString(kind: string, value: string) {
    let set = this.strings.get(kind);
    if (!set) this.strings.set(kind, (set = new Set()));
    set.add(value);
  }
}

const NAME_ALIASES: Record<string, string> = {
  organization: 'organizations',
  current_organization: 'organizations',
  live_stream_instance: 'stream_instances',
  role: 'roles',
  receipt: 'receipts',
  player_uuid: 'players',
};

/** `chapter_id`, `user_ids` → the collection they point into. */
export function collectionOfName(name: string): string {
  const stem = name.replace(/_ids?$/, '');
  return NAME_ALIASES[stem] ?? (stem.endsWith('s') ? stem : `${stem}s`);
}

function collectionOfKey(key: string, parent: string): string {
  if (key === 'video_attributes' || key === 'video') return 'videos';
  if (key.endsWith('_attributes')) return key.slice(0, -'_attributes'.length);
  if (/^[a-z_]+s$/.test(key)) return key;
  return parent;
}

/** The collection an operation's answer is about: the last literal segment of its path. */
export function collectionOfPath(path: string): string {
  const segments = path.split('/').filter((s) => s && !s.includes('{') && s !== 'dashboard' && !/^v1(\.1)?$/.test(s));
  return segments.at(-1) ?? 'root';
}

export interface World {
  owner: string;
  viewer: string;
  /** Another organization's owner token, and that organization's records. */
  foreignOwner: string;
  organizationId: number;
  foreignOrganizationId: number;
  own: Records;
  foreign: Records;
}

async function made(records: Records, collection: string, response: Promise<{ status: number; body: unknown; raw: string }>) {
  const res = await response;
  if (res.status !== 201) throw new Error(`seeding ${collection} failed: ${res.status} ${res.raw}`);
  records.harvest(collection, res.body);
}

/** Two organizations with a few records of every common kind, made through the API. */
export async function seedWorld(t: TestApp): Promise<World> {
  const own = new Records();
  const foreign = new Records();
  const org = await createOrg(t);
  const other = await createOrg(t);
  own.add('organizations', org.organizationId);
  foreign.add('organizations', other.organizationId);
  for (const [ctx, records] of [
    [org, own],
    [other, foreign],
  ] as const) {
    for (let i = 0; i < 2; i++) {
      const player = await createPlayer(ctx.api, {}, 2);
      records.harvest('players', player);
      const chapterId = player.chapters_attributes[0].id;
      const cta = { second: 1, duration: 5, auto_close: true, width: 100, html: '<b>x</b>' };
      await made(records, 'ctas', ctx.api.post('/dashboard/v1/ctas', { ...cta, chapter_id: chapterId }));
      await made(records, 'ctas', ctx.api.post('/dashboard/v1/ctas', cta));
      await made(records, 'tags', ctx.api.post('/dashboard/v1/tags', { name: `tag ${i} ${Math.random()}` }));
    }
    records.harvest('users', await createUser(ctx.api));
    await made(records, 'teams', ctx.api.post('/dashboard/v1/teams', { name: `Team ${Math.random()}` }));
    const videoId = [...(records.ids.get('videos') ?? [])][0];
    const chapterId = [...(records.ids.get('chapters') ?? [])][0];
    const orgId = ctx.organizationId;
    await made(
      records,
      'captions',
      ctx.api.post(`/dashboard/v1/videos/${videoId}/captions`, { language: 'en', format: 'vtt', content: 'WEBVTT\n\n00:00.000 --> 00:01.000\nHi\n' }),
    );
    await made(records, 'events', ctx.api.post('/dashboard/v1/events', { event_type: 'annotation', html: '<b>x</b>', chapter_id: chapterId, second: 1 }));
    await made(records, 'blacklisted_ip_ranges', ctx.api.post('/dashboard/v1/blacklisted_ip_ranges', { ip_range: '10.0.0.0/8' }));
    const hook = { url: 'https://hooks.example.com/a', event_subscriptions: ['view'] };
    await made(records, 'webhooks', ctx.api.post(`/dashboard/v1/organizations/${orgId}/webhooks/analytics`, hook));
    const live = { name: 'Live', video_options: { video_name: 'Live', description: '', stream_tags: [] } };
    await made(records, 'live', ctx.api.post(`/dashboard/v1/organizations/${orgId}/live`, live));
  }
  for (let role = 1; role <= 6; role++) own.add('roles', role);
  return {
    owner: org.token,
    viewer: await t.services.tokens.issue(org.organizationId, 'viewer'),
    foreignOwner: other.token,
    organizationId: org.organizationId,
    foreignOrganizationId: other.organizationId,
    own,
    foreign,
  };
}

// ---- values from schemas ----------------------------------------------------------------------

/** Stand-ins replaced in the JSON text after it is written: nesting too deep to build as objects. */
const DEEP = '\u0001deep';
const deepText = (kind: 'array' | 'object', depth: number) =>
  kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '0' + '}'.repeat(depth);

const deepValue = fc
  .tuple(fc.constantFrom('array', 'object'), fc.constantFrom(100, 5_000, 20_000, 20_000, 100_000))
  .map(([kind, depth]) => `${DEEP}:${kind}:${depth}`);

const hugeString = fc.constantFrom(65_536, 300_000, 1_100_000).map((n) => 'é'.repeat(n / 2));

const unicodeString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('\uD83C', '\uDFFF', 'e\u0301', '\u202E', '\uFEFF', '\u0000', '👩‍👩‍👧', '\r\n', '\t'),
);

/** A value of the wrong kind for whatever the schema wants. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: nastyValue },
  { weight: 2, arbitrary: extremeValue },
  { weight: 2, arbitrary: unicodeString },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: fc.constantFrom<unknown>({ __proto__x: 1 }, { constructor: { prototype: { x: 1 } } }, [[[]]], { '': '' }) },
);

interface ValueOptions {
  /** Chance (0..1) that any one value is replaced by a wrong one. */
  mutation: number;
  world: World;
  /** The property name the value is for (ids are taken from the records it names). */
  name?: string;
}

function idValue(name: string, world: World): fc.Arbitrary<number> {
  const collection = name === 'id' ? 'any' : collectionOfName(name);
  return fc.nat().chain((n) => {
    const own = world.own.pick(collection, n);
    const foreign = world.foreign.pick(collection, n);
    return fc.constantFrom(own, own, own, foreign);
  });
}

function integerValue(s: Schema, name: string | undefined, world: World): fc.Arbitrary<number> {
  const min = s.minimum ?? -(2 ** 31);
  const max = s.maximum ?? 2 ** 31 - 1;
  const arbs: fc.Arbitrary<number>[] = [
    fc.integer({ min: Math.max(min, -(2 ** 53)), max: Math.min(max, 2 ** 53) }),
    fc.constantFrom(min, max, Math.min(min + 1, max), Math.max(0, min)),
  ];
  if (name && (name === 'id' || /_ids?$/.test(name))) arbs.push(idValue(name, world), idValue(name, world));
  return fc.oneof(...arbs);
}

function stringValue(s: Schema): fc.Arbitrary<string> {
  if (s.format === 'email') return fc.oneof(fc.emailAddress(), fc.constantFrom('a@b.co', 'x@example.com'));
  if (s.format === 'date-time') return fc.date({ min: new Date(0), max: new Date(253402300799000), noInvalidDate: true }).map((d) => d.toISOString());
  const minLength = s.minLength ?? 0;
  const maxLength = Math.min(s.maxLength ?? 40, 300);
  if (s.pattern) {
    let matching: fc.Arbitrary<string> | undefined;
    try {
      const re = new RegExp(s.pattern);
      matching = fc.stringMatching(re).filter((x) => x.length >= minLength && x.length <= (s.maxLength ?? Infinity));
    } catch {
      matching = undefined;
    }
    if (matching) return matching;
  }
  return fc.oneof(
    fc.string({ minLength, maxLength: Math.max(minLength, Math.min(maxLength, 40)) }),
    fc.string({ unit: 'grapheme', minLength, maxLength: Math.max(minLength, Math.min(maxLength, 20)) }),
    fc.constant('x'.repeat(Math.max(minLength, s.maxLength ?? 300))),
  );
}

/** Values for `schema`: mostly what it allows, boundaries included, and with `mutation` chance something else. */
export function valueOf(schema: Schema, options: ValueOptions, depth = 0): fc.Arbitrary<unknown> {
  const valid = validValueOf(schema, options, depth);
  if (options.mutation <= 0) return valid;
  const weight = Math.max(1, Math.round((1 - options.mutation) * 20));
  return fc.oneof({ weight, arbitrary: valid }, { weight: Math.max(1, 20 - weight), arbitrary: wrongValue });
}

function validValueOf(s: Schema, options: ValueOptions, depth: number): fc.Arbitrary<unknown> {
  if (s.enum && s.enum.length > 0) return fc.constantFrom(...s.enum);
  if (s.anyOf && s.anyOf.length > 0) return fc.oneof(...s.anyOf.map((branch) => validValueOf(branch, options, depth)));
  if (Array.isArray(s.type)) return fc.oneof(...s.type.map((type) => validValueOf({ ...s, type }, options, depth)));
  switch (s.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerValue(s, options.name, options.world);
    case 'number':
      return fc.oneof(fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true }), fc.constantFrom(s.minimum ?? 0, s.maximum ?? 0));
    case 'string':
      return stringValue(s);
    case 'array': {
      const items = s.items ? valueOf(s.items, { ...options, name: options.name }, depth + 1) : nastyValue;
      const minLength = s.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(s.maxItems ?? 5, 5));
      const list = fc.array(items, { minLength, maxLength });
      return s.uniqueItems ? list.map((xs) => [...new Set(xs)]) : list;
    }
    case 'object':
    default: {
      if (!s.properties || depth > 8) return fc.constant({});
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, inner] of Object.entries(s.properties)) model[key] = valueOf(inner, { ...options, name: key }, depth + 1);
      return fc.record(model, { requiredKeys: (s.required ?? []).filter((k) => k in model) });
    }
  }
}

/** A valid-ish object with one thing done to it: a required field dropped, fields added, or left alone. */
function bodyObject(schema: Schema, options: ValueOptions): fc.Arbitrary<unknown> {
  const base = valueOf(schema, options);
  const required = schema.required ?? [];
  return fc
    .tuple(base, fc.nat(), fc.dictionary(nastyString, wrongValue, { maxKeys: 3 }), fc.constantFrom('none', 'none', 'none', 'drop', 'extra'))
    .map(([value, n, extra, change]) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
      const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      if (change === 'drop' && required.length > 0) delete copy[required[n % required.length]];
      if (change === 'extra') Object.assign(copy, extra);
      return copy;
    });
}

// ---- requests ---------------------------------------------------------------------------------

/** A body as a value (written as JSON), as raw text, or none (neither). */
interface BodyChoice {
  value?: unknown;
  raw?: string;
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Mostly what a client sends (nothing, or JSON); now and then what the operation cannot answer. */
const accept = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(null, null, 'application/json', '*/*') },
  { weight: 1, arbitrary: fc.constantFrom('text/csv', XLSX, 'text/*', 'text/csv;q=0.5, application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('text/html', 'application/xml', 'application/json;q=0', 'text/csv;q=abc, */*;q=0.1', ',,;;', 'x'.repeat(2000)),
  },
);

const contentType = fc.oneof(
  { weight: 14, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'application/json; charset=latin1',
      'application/vnd.api+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'application/json; boundary=;;;',
      '',
    ),
  },
);

/** Bodies no schema would produce: broken, truncated, deep, huge, of the wrong JSON kind. */
const rawBody = fc.oneof(
  fc.constantFrom(
    '{',
    '{"a":',
    '[',
    'nul',
    '"',
    '{"a":1,}',
    "{'a':1}",
    '\uFEFF{}',
    '{"a":1}{"b":2}',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
  ),
  fc.constantFrom('null', '[]', '""', '0', 'true', '-1e999', '[{}]', '{"a":1,"a":2}', ' '),
  fc.constantFrom(deepText('array', 20_000), deepText('object', 20_000), deepText('array', 500_000)),
  fc.constantFrom(`{"x":"${'y'.repeat(1_100_000)}"}`, `[${'1,'.repeat(200_000)}1]`),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
);

/** Percent-encodes, also text with lone surrogates (written as U+FFFD, which is what a client could send). */
export function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));
  }
}

function bodyText(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  if (!text.includes('\\u0001deep')) return text;
  return text.replace(/"\\u0001deep:(array|object):(\d+)"/g, (_all, kind: 'array' | 'object', depth: string) => deepText(kind, Number(depth)));
}

function queryValue(value: unknown): string[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? '')));
  if (typeof value === 'string') return [value];
  return [typeof value === 'number' || typeof value === 'boolean' ? String(value) : (JSON.stringify(value) ?? '')];
}

/** What goes in a path parameter: real ids (own and foreign), boundaries, and text that is no id. */
function pathValue(param: Parameter, world: World, path: string): fc.Arbitrary<string> {
  const name = param.name;
  const garbage = fc.oneof(
    fc.constantFrom(
      '0',
      '-1',
      '2147483647',
      '2147483648',
      '9007199254740993',
      '1e3',
      '1.5',
      '0x10',
      ' 1',
      'abc',
      '%zz',
      '%00',
      '%2F',
      '..',
      'null',
      'uuid=',
      'x'.repeat(101),
    ),
    nastyString.map(encode),
  );
  if (param.schema.type === 'integer') {
    const before = path.split(`/{${name}}`)[0].split('/').at(-1) ?? '';
    const collection = name !== 'id' ? collectionOfName(name) : path.includes('/webhooks/') ? 'webhooks' : before;
    const real = fc.nat().chain((n) => fc.constantFrom(world.own.pick(collection, n), world.own.pick(collection, n), world.foreign.pick(collection, n)));
    const org = fc.constantFrom(world.organizationId, world.foreignOrganizationId);
    const id = /organization/.test(name) || collection === 'organizations' ? fc.oneof({ weight: 4, arbitrary: org }, real) : real;
    return fc.oneof(
      { weight: 6, arbitrary: id.map(String) },
      { weight: 1, arbitrary: integerValue(param.schema, name, world).map(String) },
      { weight: 2, arbitrary: garbage },
    );
  }
  if (/uuid/.test(name)) {
    const real = fc.nat().chain((n) => fc.constantFrom(world.own.pickUuid(n), world.own.pickUuid(n), world.foreign.pickUuid(n)));
    return fc.oneof({ weight: 6, arbitrary: real }, { weight: 1, arbitrary: fc.uuid() }, { weight: 2, arbitrary: garbage });
  }
  if (name === 'receipt_id') {
    const real = fc.nat().map((n) => world.own.pickString('receipts', n) ?? 'none');
    return fc.oneof({ weight: 3, arbitrary: real }, { weight: 1, arbitrary: garbage });
  }
  return fc.oneof(
    { weight: 3, arbitrary: valueOf(param.schema, { mutation: 0, world, name }).map((v) => encode(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))) },
    { weight: 1, arbitrary: garbage },
  );
}

function queryString(op: Operation, world: World): fc.Arbitrary<string> {
  const params = op.query.map((p) =>
    fc.tuple(
      fc.constant(p.name),
      fc.oneof(
        { weight: p.required ? 0 : 2, arbitrary: fc.constant(undefined) },
        { weight: 5, arbitrary: valueOf(p.schema, { mutation: 0.2, world, name: p.name }) },
      ),
      fc.constantFrom('repeat', 'brackets', 'comma'),
    ),
  );
  const junk = fc.oneof(
    { weight: 6, arbitrary: fc.constant([] as Array<[string, string]>) },
    { weight: 1, arbitrary: fc.array(fc.tuple(nastyString, nastyString), { minLength: 1, maxLength: 2 }) },
  );
  return fc.tuple(fc.tuple(...params), junk, fc.constantFrom('', '', '', '?', '&&', ';', '#')).map(([values, extra, lead]) => {
    const parts: string[] = [];
    for (const [name, value, style] of values) {
      const texts = queryValue(value);
      if (value === undefined) continue;
      if (Array.isArray(value) && style === 'comma') parts.push(`${name}=${texts.map(encode).join(',')}`);
      else for (const text of texts) parts.push(`${style === 'brackets' && Array.isArray(value) ? `${name}[]` : name}=${encode(text)}`);
    }
    for (const [k, v] of extra) parts.push(`${encode(k)}=${encode(v)}`);
    return parts.length > 0 ? `${lead}${parts.join('&')}` : '';
  });
}

/** `players` → `player`: the name a Rails-style client wraps the body in. */
const singular = (collection: string) => collection.replace(/ies$/, 'y').replace(/s$/, '');

/** Requests for one operation. */
export function requestsFor(op: Operation, world: World): fc.Arbitrary<FuzzRequest> {
  const path = fc.tuple(...op.pathParams.map((p) => pathValue(p, world, op.path).map((v) => [p.name, v] as const))).map((pairs) => {
    let url = op.path;
    for (const [name, value] of pairs) url = url.replace(`{${name}}`, value);
    return url;
  });
  type Auth = 'owner' | 'viewer' | 'foreign' | 'none' | 'query' | 'body' | 'garbage';
  const auth = fc.oneof(
    { weight: 16, arbitrary: fc.constant<Auth>('owner') },
    { weight: 2, arbitrary: fc.constantFrom<Auth>('query', 'body') },
    { weight: 2, arbitrary: fc.constantFrom<Auth>('viewer', 'foreign', 'none', 'garbage') },
  );
  const asBody = (value: unknown): BodyChoice => ({ value });
  const raw = rawBody.map((text): BodyChoice => ({ raw: text }));
  const none = fc.constant<BodyChoice>({});
  const body = op.body
    ? fc.oneof(
        { weight: 5, arbitrary: bodyObject(op.body, { mutation: 0, world }).map(asBody) },
        { weight: 3, arbitrary: bodyObject(op.body, { mutation: 0.15, world }).map(asBody) },
        { weight: 1, arbitrary: bodyObject(op.body, { mutation: 0, world }).map((v) => asBody({ [singular(collectionOfPath(op.path))]: v })) },
        // A valid body with one more field, nested deep or huge: it passes validation and reaches what comes after.
        {
          weight: 2,
          arbitrary: fc
            .tuple(
              bodyObject(op.body, { mutation: 0, world }),
              nastyString,
              fc.oneof({ weight: 3, arbitrary: deepValue }, { weight: 1, arbitrary: hugeString }),
            )
            .map(([v, key, extra]) => asBody(v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...v, [key || 'extra']: extra } : v)),
        },
        { weight: 1, arbitrary: raw },
        { weight: 1, arbitrary: none },
      )
    : fc.oneof({ weight: 8, arbitrary: none }, { weight: 1, arbitrary: raw });
  const idempotencyKey = fc.oneof(
    { weight: 6, arbitrary: fc.constant(null) },
    { weight: 3, arbitrary: fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 8, maxLength: 40 }) },
    { weight: 1, arbitrary: fc.constantFrom('', 'same-key', 'x'.repeat(255), 'x'.repeat(256)) },
  );
  const method = op.method === 'GET' ? fc.constantFrom('GET', 'GET', 'GET', 'GET', 'HEAD') : fc.constant(op.method);
  return fc
    .record({
      method,
      path,
      query: queryString(op, world),
      suffix: fc.oneof({ weight: 10, arbitrary: fc.constant('') }, { weight: 2, arbitrary: fc.constant('.json') }, { weight: 1, arbitrary: fc.constant('/') }),
      auth,
      accept,
      contentType,
      body,
      idempotencyKey,
    })
    .map((r) => {
      const headers: Record<string, string> = {};
      const tokenFor = {
        owner: world.owner,
        viewer: world.viewer,
        foreign: world.foreignOwner,
        none: '',
        query: world.owner,
        body: world.owner,
        garbage: 'rb_nope',
      };
      if (['owner', 'viewer', 'foreign'].includes(r.auth)) headers.authorization = `Bearer ${tokenFor[r.auth]}`;
      if (r.auth === 'garbage') headers.authorization = 'Basic Zm9vOmJhcg==';
      if (r.accept !== null) headers.accept = r.accept;
      if (r.idempotencyKey !== null && r.method === 'POST') headers['idempotency-key'] = r.idempotencyKey;
      let query = r.query;
      if (r.auth === 'query') query = `${query}${query ? '&' : '?'}auth_token=${encode(world.owner)}`.replace(/^&/, '?');
      if (query && !/^[?#;&]/.test(query)) query = `?${query}`;
      else if (query && !query.startsWith('?')) query = `?${query}`;
      let payload: string | undefined;
      if (r.body.raw !== undefined) payload = r.body.raw;
      else if (r.body.value !== undefined) {
        let value = r.body.value;
        if (r.auth === 'body' && value !== null && typeof value === 'object' && !Array.isArray(value)) value = { ...value, auth_token: world.owner };
        payload = bodyText(value);
      } else if (r.auth === 'body') payload = JSON.stringify({ auth_token: world.owner });
      if (payload !== undefined && r.contentType) headers['content-type'] = r.contentType;
      return { method: r.method, url: `${r.path}${r.suffix}${query}`, headers, ...(payload === undefined ? {} : { payload }) };
    });
}

// ---- running them -----------------------------------------------------------------------------

export interface FuzzFailure {
  operation: string;
  problem: string;
  request: { method: string; url: string; headers: Record<string, string>; payload?: string };
  status: number;
  response: string;
  /** The error the app logged for the request (with its stack), when it logged one. */
  logged?: string;
}

export interface FuzzStats {
  requests: number;
  byStatus: Record<number, number>;
  byOperation: Record<string, number>;
  failures: FuzzFailure[];
  seed: number;
}

const clip = (text: string, n = 600) => (text.length > n ? `${text.slice(0, n)}… (${text.length} characters)` : text);

/** What is wrong with an answer: a 5xx, or an error that is not `{error, code, details}` JSON. */
export function problemWith(method: string, status: number, contentTypeHeader: string, body: string): string | null {
  if (status >= 500) return `answered ${status}`;
  if (status < 400 || method === 'HEAD') return null;
  if (!contentTypeHeader.startsWith('application/json')) return `error ${status} with content-type ${contentTypeHeader || '(none)'}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `error ${status} whose body is not JSON`;
  }
  const e = parsed as { error?: unknown; code?: unknown; details?: unknown } | null;
  if (
    !e ||
    typeof e.error !== 'string' ||
    typeof e.code !== 'string' ||
    !Array.isArray(e.details) ||
    !e.details.every((d: { field?: unknown; message?: unknown }) => typeof d?.field === 'string' && typeof d?.message === 'string')
  ) {
    return `error ${status} not in the error shape`;
  }
  return null;
}

export interface FuzzOptions {
  /** Requests generated per operation. */
  runsPerOperation: number;
  seed?: number;
  /** Error log lines of the app by request id (a test app with LOG_LEVEL error and a log stream). */
  errorsByRequestId?: Map<string, string>;
  /** Called after each operation, e.g. to print progress. */
  onOperation?(op: Operation, stats: FuzzStats): void;
}

/** Sends `runsPerOperation` generated requests to every operation; answers what came back. */
export async function fuzzOperations(app: FastifyInstance, ops: Operation[], world: World, options: FuzzOptions): Promise<FuzzStats> {
  const seed = options.seed ?? Date.now() ^ (Math.random() * 0x7fffffff);
  const stats: FuzzStats = { requests: 0, byStatus: {}, byOperation: {}, failures: [], seed };
  for (const [index, op] of ops.entries()) {
    const requests = fc.sample(requestsFor(op, world), { numRuns: options.runsPerOperation, seed: seed + index });
    for (const request of requests) {
      const res = await app.inject({
        method: request.method as 'GET',
        url: request.url,
        headers: request.headers,
        ...(request.payload === undefined ? {} : { payload: request.payload }),
      });
      stats.requests++;
      stats.byStatus[res.statusCode] = (stats.byStatus[res.statusCode] ?? 0) + 1;
      stats.byOperation[op.id] = (stats.byOperation[op.id] ?? 0) + 1;
      const problem = problemWith(request.method, res.statusCode, String(res.headers['content-type'] ?? ''), res.body);
      if (problem) {
        const requestId = String(res.headers['x-request-id'] ?? '');
        stats.failures.push({
          operation: op.id,
          problem,
          request: { ...request, ...(request.payload === undefined ? {} : { payload: clip(request.payload) }) },
          status: res.statusCode,
          response: clip(res.body),
          logged: options.errorsByRequestId?.get(requestId),
        });
      }
      const own = request.headers.authorization === `Bearer ${world.owner}` || request.url.includes(encode(world.owner));
      if (own && res.statusCode < 300 && String(res.headers['content-type'] ?? '').startsWith('application/json')) {
        try {
          world.own.harvest(collectionOfPath(op.path), JSON.parse(res.body));
        } catch {
          // Not JSON after all: nothing to take from it.
        }
      }
    }
    options.onOperation?.(op, stats);
  }
  return stats;
}

/** A log stream that keeps, by request id, the error (and its stack) of every failed request. */
export function errorLog(): { stream: { write(line: string): void }; byRequestId: Map<string, string> } {
  const byRequestId = new Map<string, string>();
  return {
    byRequestId,
    stream: {
      write(line: string) {
        try {
          const entry = JSON.parse(line) as { reqId?: string; err?: { stack?: string; message?: string }; msg?: string };
          if (entry.reqId && (entry.err || entry.msg)) byRequestId.set(entry.reqId, entry.err?.stack ?? entry.err?.message ?? entry.msg ?? '');
        } catch {
          // Not a JSON line.
        }
      },
    },
  };
}

export interface LongRunOptions {
  /** Requests in all, spread evenly over the operations. */
  total: number;
  dialect: 'sqlite' | 'postgres';
  seed: number;
  print(line: string): void;
}

/**
 * The long run of scripts/fuzz-openapi.mjs: a fresh app and world, `total` requests, progress and
 * results printed. On PostgreSQL (TEST_DATABASE_URL) the schema it made is dropped at the end.
 */
export async function longFuzzRun({ total, dialect, seed, print }: LongRunOptions): Promise<FuzzStats> {
  if (dialect === 'postgres' && !process.env.TEST_DATABASE_URL) throw new Error('the postgres dialect needs TEST_DATABASE_URL');
  // The harness names PostgreSQL schemas after the test run; one named after this run's start looks
  // current to a test run starting meanwhile (which drops other runs' stale schemas), and stale later.
  process.env.REELBASE_TEST_RUN ??= Date.now().toString(36);
  const log = errorLog();
  const t = await createTestApp(dialect, { LOG_LEVEL: 'error' }, { logStream: log.stream });
  const schema = dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(t.database.db)).rows[0].schema : null;
  try {
    const world = await seedWorld(t);
    const ops = operationsOf((await t.app.inject({ method: 'GET', url: '/dashboard/openapi.json' })).json());
    const runsPerOperation = Math.ceil(total / ops.length);
    print(`fuzzing ${ops.length} operations × ${runsPerOperation} requests on ${dialect}, seed ${seed}`);
    const started = Date.now();
    let lastReport = started;
    const stats = await fuzzOperations(t.app, ops, world, {
      runsPerOperation,
      seed,
      errorsByRequestId: log.byRequestId,
      onOperation(_op, s) {
        if (Date.now() - lastReport < 10_000) return;
        lastReport = Date.now();
        print(`  ${s.requests} requests, ${s.failures.length} failures, ${Math.round((Date.now() - started) / 1000)} s`);
      },
    });
    const seconds = (Date.now() - started) / 1000;
    for (const failure of stats.failures) print(JSON.stringify(failure, null, 2));
    const fiveHundreds = Object.entries(stats.byStatus).reduce((n, [status, count]) => n + (Number(status) >= 500 ? count : 0), 0);
    print(`${stats.requests} requests in ${seconds.toFixed(1)} s (${Math.round(stats.requests / seconds)}/s) on ${dialect}, seed ${stats.seed}`);
    print(`answers by status: ${JSON.stringify(stats.byStatus)}`);
    print(`${fiveHundreds} answers >= 500, ${stats.failures.length} failures`);
    return stats;
  } finally {
    await t.close();
    if (schema) {
      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    }
  }
}
