import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

/**
 * Two validators: JSON bodies are checked as sent (a string is not a number), while query strings and
 * path parameters, which are always text, are coerced to the schema's types.
 */
function makeAjv(coerce: boolean) {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
  });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

export function registerValidation(app: FastifyInstance) {
  const strict = makeAjv(false);
  const coercing = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(schema);
  });
}
