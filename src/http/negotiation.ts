import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addRouteHook, addRouteStep } from './route-hooks.ts';
import { AppError } from '../lib/errors.ts';
import type { ResponseFormat } from './context.ts';
import { toCsv, toXlsx } from './tabular.ts';

export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const formats: Array<[string, ResponseFormat]> = [
  ['application/json', 'json'],
  ['text/csv', 'csv'],
  [XLSX_TYPE, 'xlsx'],
];

/** Picks the response format from Accept (q-values honoured); null when nothing offered is acceptable. */
export function chooseFormat(accept: string | undefined, isList: boolean): ResponseFormat | null {
  if (!accept || accept === '*/*' || accept === 'application/json' || !accept.trim()) return 'json';
  const ranges = accept
    .split(',')
    .map((part, index) => {
      const [type, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const quality = q ? Number.parseFloat(q.slice(2)) : 1;
      return { type: type.trim(), q: Number.isFinite(quality) ? quality : 0, index };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const range of ranges) {
    if (range.type === '*/*' || range.type === 'application/*' || range.type === 'application/json') return 'json';
    const hit = formats.find(([mime]) => mime === range.type);
    if (hit && (hit[1] === 'json' || isList)) return hit[1];
    if (range.type === 'text/*' && isList) return 'csv';
  }
  return null;
}

function rowsOf(payload: unknown, key: string): unknown[] {
  if (Array.isArray(payload)) return payload;
  const value = (payload as Record<string, unknown> | null)?.[key];
  return Array.isArray(value) ? value : [];
}

export function registerNegotiation(app: FastifyInstance) {
  app.decorateRequest('responseFormat', 'json');
  addRouteStep(app, (route) => {
    // Media files (and the docs pages) are served whatever the Accept header asks.
    if (route.config?.media) return undefined;
    const list = route.config?.list;
    const isList = list !== undefined;
    // Only list operations can answer CSV or XLSX.
    if (isList) addRouteHook(route, 'preSerialization', tabularPayload(list));
    return (request) => {
      const format = chooseFormat(request.headers.accept, isList);
      if (!format) throw new AppError('not_acceptable');
      request.responseFormat = format;
    };
  });
}

/** For a list route whose rows are `payload[key]`: the rows as CSV or XLSX, when Accept asked for one of them. */
function tabularPayload(key: string) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (request.responseFormat === 'json' || reply.statusCode >= 300) return payload;
    const rows = rowsOf(payload, key);
    if (request.responseFormat === 'csv') {
      const csv = toCsv(rows);
      reply.type('text/csv; charset=utf-8').serializer(() => csv);
    } else {
      const xlsx = await toXlsx(rows, key || 'items');
      reply.type(XLSX_TYPE).serializer(() => xlsx as unknown as string);
    }
    return payload;
  };
}
