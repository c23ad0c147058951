/**
 * A form body holds only strings (and null for a key without `=`): its values take the types of the
 * route's body schema, so that the same validation and answers apply as to the JSON request.
 * Strict on purpose (docs/api-decisions.md, "Form-encoded bodies"):
 * - integer `^-?\d+$`, number a plain decimal, boolean `true`/`false`/`1`/`0`;
 * - `""` (how Rails clients send nil) is null where the schema allows null and no string;
 * - a hash keyed by indices (`a[0][x]=…`) is an array where the schema wants one, in index order;
 *   `a[]=` (one empty item) is the empty array where the items are not strings;
 * - anything that does not convert is left as sent, for the schema to refuse with its usual 422.
 */

export interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  const?: unknown;
  enum?: unknown[];
}

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;
const INDEX = /^\d+$/;

/** The primitive types a schema node admits ("any" when it does not say). */
function typesOf(schema: SchemaNode): Set<string> {
  const out = new Set<string>();
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    for (const alt of alternatives) for (const t of typesOf(alt)) out.add(t);
    return out;
  }
  if (schema.type) for (const t of Array.isArray(schema.type) ? schema.type : [schema.type]) out.add(t);
  else if (schema.const !== undefined) out.add(schema.const === null ? 'null' : typeof schema.const);
  else if (schema.enum) for (const v of schema.enum) out.add(v === null ? 'null' : typeof v);
  else out.add('any');
  return out;
}

/** The alternative of a union to descend into for an object or an array value. */
function branchFor(schema: SchemaNode, type: 'object' | 'array'): SchemaNode | undefined {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (!alternatives) return typesOf(schema).has(type) ? schema : undefined;
  for (const alt of alternatives) {
    const found = branchFor(alt, type);
    if (found) return found;
  }
  return undefined;
}

function scalar(schema: SchemaNode, value: string | null): unknown {
  const types = typesOf(schema);
  if (types.has('any')) return value;
  if (value === null) return null;
  if (types.has('string')) return value;
  if (value === '' && types.has('null')) return null;
  if (types.has('integer') && INTEGER.test(value)) return Number(value);
  if (types.has('number') && DECIMAL.test(value)) return Number(value);
  if (types.has('boolean')) {
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
  }
  return value;
}

function indexedToArray(value: Record<string, unknown>): unknown[] | null {
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys.every((k) => INDEX.test(k))) return null;
  return keys.sort((a, b) => Number(a) - Number(b)).map((k) => value[k]);
}

export function coerceForm(schema: SchemaNode | undefined, value: unknown): unknown {
  if (!schema) return value;
  if (value === null || typeof value === 'string') return scalar(schema, value);
  if (Array.isArray(value)) {
    const arraySchema = branchFor(schema, 'array');
    if (!arraySchema) return value;
    const items = arraySchema.items;
    if (value.length === 1 && value[0] === '' && items && !typesOf(items).has('string')) return [];
    return value.map((item) => coerceForm(items, item));
  }
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const arraySchema = branchFor(schema, 'array');
    const asArray = arraySchema ? indexedToArray(record) : null;
    if (asArray) return coerceForm(arraySchema, asArray);
    const objectSchema = branchFor(schema, 'object');
    if (!objectSchema) return value;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(record)) {
      const extra = typeof objectSchema.additionalProperties === 'object' ? objectSchema.additionalProperties : undefined;
      out[key] = coerceForm(objectSchema.properties?.[key] ?? extra, record[key]);
    }
    return out;
  }
  return value;
}
