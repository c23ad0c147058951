import { Type, type Static, type TSchema } from 'typebox';

/** Shared schema pieces used by several areas: validation, types and OpenAPI from one definition. */

// Keywords that only constrain a value of the schema's own type, so they let `null` through unchanged.
const TYPE_SCOPED = new Set([
  'type',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'description',
  'default',
  'examples',
]);

/**
 * The schema, or null. A plain scalar becomes `{"type": [<type>, "null"]}` rather than an anyOf:
 * fast-json-stringify serializes an anyOf by running a validator per branch on every value of every
 * response, a type array with one typeof check. Anything else stays an anyOf.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const type = (schema as { type?: unknown }).type;
  const scalar = typeof type === 'string' && type !== 'object' && type !== 'array' && Object.keys(schema).every((k) => TYPE_SCOPED.has(k));
  return scalar ? Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] }) : Type.Union([schema, Type.Null()]);
}

/*
 * Examples: the API reference's "Try it out" (/dashboard/docs) sends them as they are, so each one is a
 * request that succeeds on a fresh server (organization 1 with nothing in it) once the document's own
 * create examples have run, creates first (test/openapi-examples.test.ts sends them all in that order).
 * Path ids are the ids those creates make.
 */

/** A record id (1..2^31-1) whose example is `example`. */
export const IdExample = (example: number) => Type.Integer({ minimum: 1, maximum: 2147483647, examples: [example] });

/** `{id}` in a path, naming the record `example` on a fresh server. */
export const idParams = (example: number) => Type.Object({ id: IdExample(example) });

/**
 * Player UUIDs are random, so no example can name a player of every server: this one shows the form
 * (the operations taking it are listed in test/openapi-examples.test.ts).
 */
export const PLAYER_UUID_EXAMPLE = '6f1c2b8e-4d3a-4e5f-9a7b-0c1d2e3f4a5b';
export const UuidParams = Type.Object({ uuid: Type.String({ minLength: 1, maxLength: 64, examples: [PLAYER_UUID_EXAMPLE] }) });

export const HttpUrl = Type.String({ minLength: 1, maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://[^\\s]+$' });

export const Timestamps = {
  created_at: Type.Integer({ description: 'Unix seconds' }),
  updated_at: Type.Integer({ description: 'Unix seconds' }),
};

/** `per_page` 1..200 (more is a 422); `page` ≥ 1, meaningful only with per_page. */
export const PagingQuery = {
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Items per page (1..200)' })),
  // Bounded so that (page - 1) * per_page stays a safe integer and fits a SQL OFFSET.
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Page number, default 1; applies only with per_page' })),
};

export const Summary = Type.Object({
  page: Type.Integer(),
  per_page: Type.Integer(),
  count: Type.Integer({ description: 'Total number of matching records' }),
});
export type Summary = Static<typeof Summary>;

export const NAME_MAX = 255;
export const EMAIL_MAX = 254;
/** A person's first or last name: no control characters. */
export const PersonName = Type.String({ maxLength: NAME_MAX, pattern: '^[^\\u0000-\\u001F\\u007F]*$' });
/** A user's address (users, signing in). */
export const Email = Type.String({ minLength: 3, maxLength: EMAIL_MAX, format: 'email', description: 'Stored lower-case; unique in the organization' });
