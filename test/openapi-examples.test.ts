/**
 * The API reference can be tried (issue 18): every operation of /dashboard/openapi.json, sent the way
 * Swagger UI's "Try it out" (/dashboard/docs) sends it by default — path parameters and the query
 * parameters that have an example filled from their examples, the body from the body example — succeeds
 * on a fresh server: organization 1 "Default" with an owner token and nothing else, as the first start
 * makes it (src/runtime.ts bootstrapOwner).
 *
 * Order: creates (POST), then reads (GET), then updates (PUT, PATCH), then deletes; document order
 * within a phase, deletes in reverse document order (an area registered later may hold records of an
 * earlier one: a hub category lists players, a caption belongs to a video). PHASE_OF moves the few
 * operations that must run elsewhere. The path examples in the schemas are the ids the create examples
 * make in this order.
 *
 * EXEMPT lists the operations whose example cannot name a record of a fresh server (a random UUID, a
 * signed URL). Each must answer the status given there; then, in a second pass, with the unknowable
 * value filled in from records the test made through the document's own examples, it must succeed too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

interface MediaType {
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

interface OperationObject {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

interface Document {
  info: { title: string };
  paths: Record<string, Record<string, OperationObject>>;
}

interface Operation {
  /** `POST /dashboard/v1/players` */
  id: string;
  method: string;
  path: string;
  op: OperationObject;
  /** Position in the document. */
  index: number;
}

interface Sent {
  method: string;
  url: string;
  body?: unknown;
  accept: string;
  headers?: Record<string, string>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const PHASE: Record<string, number> = { POST: 0, GET: 1, PUT: 2, PATCH: 2, DELETE: 3 };

/** Operations run in another phase than their method's. */
const PHASE_OF: Record<string, number> = {
  // Sets video 1's thumbnail (thumbnail 1): the reads of a thumbnail and of the selected one need it.
  'PATCH /dashboard/v1/videos/{video_id}/selected_thumbnail': 0.5,
};

const PLAYER_UUID = 'a player UUID is random: no example names a player of every server';

/**
 * Operations whose example cannot succeed on a fresh server, the status they answer instead, and what a
 * client fills in to make them work (`fill`, from records made through the document's own examples).
 */
const EXEMPT: Record<string, { status: number; reason: string; fill: (known: Known) => Fill }> = {
  'GET /dashboard/v1/players/uuid={uuid}': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'GET /dashboard/v1/analytics/players/uuid={uuid}': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'GET /dashboard/v1/analytics/players/uuid={uuid}/timeseries': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'GET /dashboard/v1/analytics/players/uuid={uuid}/breakdown': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'DELETE /dashboard/v1/players/uuid={uuid}': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'GET /dashboard/v1/players/uuid={uuid}/ctas': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'GET /dashboard/v1/players/uuid={uuid}/cta_meta': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'GET /dashboard/v1/players/uuid={uuid}/event_meta': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'POST /dashboard/v1/players/uuid={uuid}/events': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'GET /dashboard/v1/players/uuid={uuid}/embed': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'POST /dashboard/v1/players/uuid={uuid}/embed': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'DELETE /dashboard/v1/players/uuid={uuid}/embed': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'GET /dashboard/v1/players/uuid={uuid}/selected_thumbnails': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'PATCH /dashboard/v1/players/uuid={uuid}/selected_thumbnails': { status: 404, reason: PLAYER_UUID, fill: (k) => ({ params: { uuid: k.uuid } }) },
  'PATCH /dashboard/v1.1/players/uuid={player_uuid}/selected_thumbnails': {
    status: 404,
    reason: PLAYER_UUID,
    fill: (k) => ({ params: { player_uuid: k.uuid } }),
  },
  'GET /dashboard/v1/oembed': {
    status: 404,
    reason: `the URL names a player by its UUID (${PLAYER_UUID}) on the host of the server's PUBLIC_URL`,
    fill: (k) => ({ query: { url: k.watchUrl } }),
  },
  'GET /dashboard/v1.1/oembed': {
    status: 404,
    reason: `the URL names a player by its UUID (${PLAYER_UUID}) on the host of the server's PUBLIC_URL`,
    fill: (k) => ({ query: { url: k.watchUrl } }),
  },
  'GET /dashboard/v1/gdpr_requests/{receipt_id}': {
    status: 404,
    reason: 'a receipt is a random UUID, answered by POST /v1/gdpr_requests',
    fill: (k) => ({ params: { receipt_id: k.receipt } }),
  },
  'POST /dashboard/v1/session': {
    status: 401,
    reason: 'signing in needs a person who has chosen a password (docs/sign-in.md)',
    fill: (k) => ({ body: k.signIn }),
  },
  'GET /dashboard/v1/session': { status: 401, reason: 'a session is a cookie, not a token', fill: (k) => ({ headers: { cookie: k.sessionCookie } }) },
  'POST /dashboard/v1/account_links/inspect': {
    status: 404,
    reason: 'a link token is random, mailed with an invitation',
    fill: (k) => ({ body: { token: k.linkToken } }),
  },
  'POST /dashboard/v1/account_links/use': {
    status: 404,
    reason: 'a link token is random, mailed with an invitation',
    fill: (k) => ({ body: { token: k.linkToken, password: 'a docs reader password' } }),
  },
  'GET /dashboard/v1/captions/{id}/files/{file}': {
    status: 403,
    reason: "a caption file's URL is signed and expires: a caption's *_url fields give one",
    fill: (k) => k.captionFile,
  },
};

interface Known {
  uuid: string;
  watchUrl: string;
  receipt: string;
  captionFile: Fill;
  linkToken: string;
  signIn: { email: string; password: string };
  sessionCookie: string;
}

interface Fill {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
}

function operationsOf(doc: Document): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      ops.push({ id: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, op, index: ops.length });
    }
  }
  return ops;
}

const phaseOf = (op: Operation) => PHASE_OF[op.id] ?? PHASE[op.method];

/** Creates, reads, updates, deletes; document order within a phase, deletes in reverse. */
function inOrder(ops: Operation[]): Operation[] {
  return [...ops].sort((a, b) => phaseOf(a) - phaseOf(b) || (a.method === 'DELETE' && b.method === 'DELETE' ? b.index - a.index : a.index - b.index));
}

/** A parameter's example as Swagger UI takes it: `example`, else the first of `examples`. */
function parameterExample(p: Parameter): unknown {
  if (p.example !== undefined) return p.example;
  const first = Object.values(p.examples ?? {})[0];
  return first?.value;
}

function bodyExample(op: OperationObject): { has: boolean; value?: unknown } {
  const media = op.requestBody?.content?.['application/json'];
  if (!media) return { has: false };
  if (media.example !== undefined) return { has: true, value: media.example };
  const first = Object.values(media.examples ?? {})[0];
  return first ? { has: true, value: first.value } : { has: false };
}

/** The request "Try it out" sends by default, with `fill` replacing what the example cannot know. */
function requestOf(operation: Operation, fill: Fill = {}): Sent {
  const params = operation.op.parameters ?? [];
  let url = operation.path;
  for (const p of params.filter((x) => x.in === 'path')) {
    const value = fill.params?.[p.name] ?? parameterExample(p);
    url = url.replace(`{${p.name}}`, encodeURIComponent(String(value)));
  }
  const query = new URLSearchParams();
  for (const p of params.filter((x) => x.in === 'query')) {
    const value = fill.query?.[p.name] ?? parameterExample(p);
    if (value === undefined) continue;
    // Form style, exploded: an array is the name repeated.
    for (const item of Array.isArray(value) ? value : [value]) query.append(p.name, String(item));
  }
  for (const [name, value] of Object.entries(fill.query ?? {})) if (!query.has(name)) query.set(name, value);
  const qs = query.toString();
  // Swagger UI asks for the first media type of the success answer.
  const success = Object.entries(operation.op.responses ?? {}).find(([status]) => status.startsWith('2'))?.[1];
  const accept = Object.keys(success?.content ?? {})[0] ?? 'application/json';
  const body = fill.body === undefined ? bodyExample(operation.op) : { has: true, value: fill.body };
  return { method: operation.method, url: qs ? `${url}?${qs}` : url, accept, headers: fill.headers, ...(body.has ? { body: body.value } : {}) };
}

/** Keys of an example at any depth. */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysOf(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      into.add(key);
      keysOf(inner, into);
    }
  }
  return into;
}

describe.each(dialects)('the OpenAPI examples on a fresh server (%s)', (dialect) => {
  let t: TestApp;
  let token: string;
  let doc: Document;
  let ops: Operation[];

  async function send(req: Sent) {
    const res = await t.app.inject({
      method: req.method as 'GET',
      url: req.url,
      headers: {
        authorization: `Bearer ${token}`,
        accept: req.accept,
        ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...req.headers,
      },
      ...(req.body === undefined ? {} : { payload: JSON.stringify(req.body) }),
    });
    return { status: res.statusCode, raw: res.body, json: () => res.json<Record<string, unknown>>() };
  }

  beforeAll(async () => {
    t = await createTestApp(dialect);
    // What the first start of a server does on an empty database.
    const created = await t.services.organizations.bootstrapIfEmpty();
    if (!created) throw new Error('the database was not empty');
    expect(created.organizationId).toBe(1);
    token = created.token;
    const res = await t.app.inject({ method: 'GET', url: '/dashboard/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
    ops = operationsOf(doc);
  });
  afterAll(() => t.close());

  it('is titled Reelbase, in the document and on the docs page', async () => {
    expect(doc.info.title).toMatch(/^Reelbase\b/);
    const page = await t.app.inject({ method: 'GET', url: '/dashboard/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<title>Reelbase[^<]*<\/title>/);
  });

  it('has an example for every body, path parameter and required query parameter', () => {
    expect(ops.length).toBeGreaterThan(100);
    const missing: string[] = [];
    for (const operation of ops) {
      if (operation.op.requestBody && !bodyExample(operation.op).has) missing.push(`${operation.id}: body`);
      for (const p of operation.op.parameters ?? []) {
        if ((p.in === 'path' || (p.in === 'query' && p.required)) && parameterExample(p) === undefined) missing.push(`${operation.id}: ${p.in} ${p.name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('makes records without ids or _destroy in the create examples', () => {
    const offending = ops
      .filter((operation) => operation.method === 'POST')
      .filter((operation) => {
        const keys = keysOf(bodyExample(operation.op).value);
        return keys.has('id') || keys.has('_destroy');
      })
      .map((operation) => operation.id);
    expect(offending).toEqual([]);
  });

  it('lists as exempt only operations of the document', () => {
    const ids = new Set(ops.map((operation) => operation.id));
    expect(Object.keys(EXEMPT).filter((id) => !ids.has(id))).toEqual([]);
  });

  it('answers every default request with a 2xx, creates first, and the exempt ones as listed', { timeout: 60_000 }, async () => {
    const failures: string[] = [];
    let receipt = '';
    for (const operation of inOrder(ops)) {
      const req = requestOf(operation);
      const res = await send(req);
      const exempt = EXEMPT[operation.id];
      const ok = exempt ? res.status === exempt.status : res.status >= 200 && res.status < 300;
      if (!ok) failures.push(`${req.method} ${req.url} → ${res.status} (expected ${exempt ? exempt.status : '2xx'}) ${res.raw.slice(0, 300)}`);
      if (operation.id === 'POST /dashboard/v1/gdpr_requests' && ok) receipt = String(res.json().receipt_id);
    }
    expect(failures).toEqual([]);

    // The exempt operations work once the client fills in what it learnt from earlier answers: a player
    // made with the document's own create example (its UUID), a caption of its video, the receipt.
    const byId = new Map(ops.map((operation) => [operation.id, operation]));
    const made = await send(requestOf(byId.get('POST /dashboard/v1/players')!));
    expect(made.status).toBe(201);
    const player = made.json() as { uuid: string; chapters_attributes: Array<{ video_id: number }> };
    const caption = await send(
      requestOf(byId.get('POST /dashboard/v1/videos/{video_id}/captions')!, { params: { video_id: String(player.chapters_attributes[0].video_id) } }),
    );
    expect(caption.status).toBe(201);
    const fileUrl = new URL(String(caption.json().vtt_url));
    const [, id, file] = /\/captions\/(\d+)\/files\/([^/]+)$/.exec(fileUrl.pathname)!;
    // Two invited people: one to use a link, one who has chosen a password and signed in.
    const tokenOf = (url: string) => new URL(url).hash.replace('#token=', '');
    const invited = await t.services.users.inviteWithLink(1, 'docs.reader@example.com', 'viewer');
    const signedUp = await t.services.users.inviteWithLink(1, 'docs.writer@example.com', 'viewer');
    const session = await t.services.sessions.useLink(tokenOf(signedUp.url), 'a docs writer password');
    const known: Known = {
      linkToken: tokenOf(invited.url),
      signIn: { email: 'docs.writer@example.com', password: 'a docs writer password' },
      sessionCookie: `reelbase_session=${session.secret}`,
      uuid: player.uuid,
      watchUrl: `${t.config.publicUrl}/watch/${player.uuid}`,
      receipt,
      captionFile: { params: { id, file }, query: Object.fromEntries(fileUrl.searchParams) },
    };
    for (const operation of inOrder(ops.filter((x) => EXEMPT[x.id]))) {
      const req = requestOf(operation, EXEMPT[operation.id].fill(known));
      const res = await send(req);
      if (res.status < 200 || res.status >= 300) failures.push(`${req.method} ${req.url} → ${res.status} ${res.raw.slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
  });
});
