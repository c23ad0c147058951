import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorCodes, isDatabaseBusy, type ErrorCode, type ErrorDetail } from '../lib/errors.ts';
import { ErrorStatus } from './error-status.ts';

interface AjvError {
  instancePath?: string;
  keyword: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldOf(e: AjvError): string {
  const extra = (e.params?.missingProperty ?? e.params?.additionalProperty) as string | undefined;
  const path = (e.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  return [path, extra].filter(Boolean).join('.') || '(body)';
}

function detailsOf(errors: AjvError[]): ErrorDetail[] {
  const seen = new Set<string>();
  const out: ErrorDetail[] = [];
  for (const e of errors) {
    // anyOf/union noise: keep the first, most specific message per field.
    const field = fieldOf(e);
    if (seen.has(field)) continue;
    seen.add(field);
    const message = e.keyword === 'required' ? 'is required' : (e.message ?? 'is invalid');
    out.push({ field, message });
  }
  return out;
}

export function sendError(reply: FastifyReply, code: ErrorCode, message?: string, details: ErrorDetail[] = []) {
  // Errors raised before a route's steps ran (400/413/415 bodies, unknown paths) carry it too.
  return reply
    .header('x-request-id', reply.request.id)
    .header('x-content-type-options', 'nosniff')
    .code(ErrorStatus[code])
    .type('application/json; charset=utf-8')
    .serializer(JSON.stringify)
    .send({ error: message ?? ErrorCodes[code], code, details });
}

const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
};

/**
 * A PostgreSQL "data exception" (SQLSTATE class 22: numeric value out of range, NUL in text, …) is
 * always caused by a value the client sent that a schema let through: a 422, never a 5xx. Matched by
 * shape so that this file stays free of driver imports.
 */
function isDataException(error: unknown): boolean {
  const e = error as { code?: unknown; severity?: unknown } | null;
  return typeof e?.code === 'string' && /^22[0-9A-Z]{3}$/.test(e.code) && typeof e.severity === 'string';
}

/**
 * Errors Fastify raises before routing (a malformed percent-encoding in the path, a path parameter
 * longer than maxParamLength): answered in the same shape, with X-Request-Id, like every other error.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendError(reply, 'not_found');
  return sendError(reply, 'bad_request', error.code === 'FST_ERR_BAD_URL' ? 'The URL is not valid' : undefined);
}

export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) return sendError(reply, error.code, error.message, error.details);
    const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
    if (fe.validation) {
      // A malformed path parameter (e.g. a non-numeric id) names no record that could exist.
      if (fe.validationContext === 'params') return sendError(reply, 'not_found');
      const details = detailsOf(fe.validation);
      const message = details.map((d) => `${d.field} ${d.message}`).join('; ');
      return sendError(reply, 'validation_failed', message, details);
    }
    const mapped = fe.code ? fastifyCodes[fe.code] : undefined;
    if (mapped) return sendError(reply, mapped, mapped === 'invalid_json' ? ErrorCodes.invalid_json : fe.message);
    if (error instanceof SyntaxError) return sendError(reply, 'invalid_json');
    if (isDataException(error)) return sendError(reply, 'validation_failed', 'A value is out of the range the service can store');
    const status = fe.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code = (Object.entries(ErrorStatus).find(([, v]) => v === status)?.[0] ?? 'bad_request') as ErrorCode;
      return sendError(reply, code, fe.message);
    }
    if (isDatabaseBusy(error)) {
      request.log.warn({ err: error }, 'the database stayed busy');
      void reply.header('retry-after', '1');
      return sendError(reply, 'database_busy');
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 'internal_error');
  });

  app.setNotFoundHandler((request, reply) => sendError(reply, 'route_not_found', `No route matches ${request.method} ${request.url.split('?')[0]}`));
}
