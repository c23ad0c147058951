import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

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
    // Compiled at the route's first request rather than at start-up: compiling every route's schemas
    // was a third of the cold start (docs/performance.md, "Cold start"). Fastify reads `errors` off
    // the function it was given.
    let compiled: ValidateFunction | undefined;
    const validate = (data: unknown) => {
      compiled ??= ajv.compile(schema);
      const valid = compiled(data);
      validate.errors = compiled.errors;
      return valid;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  });
}

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled at its first response
 * rather than at start-up, for the same reason as the validators.
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => (serialize ??= compile(route) as (data: unknown) => string)(data);
  };
};
