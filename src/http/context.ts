import type { FastifyInstance, FastifyBaseLogger, RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.ts';
import type { Services } from '../container.ts';
import type { Permission } from '../modules/roles/permissions.ts';
import type { AuthContext } from '../modules/tokens/auth-context.ts';

export type { AuthContext };

export type ResponseFormat = 'json' | 'csv' | 'xlsx';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No token needed (watch pages, docs, service assets). */
    public?: boolean;
    /** Permission the token's role must have; default content:read for GET, content:write otherwise. */
    permission?: Permission;
    /** This is a list operation: rows are `payload[list]`, or the payload itself when it is an array. */
    list?: string;
    /** Accept the Rails-style wrapped body `{"<wrap>": {...}}` as well as the flat one. */
    wrap?: string;
    /** Answer with a `Deprecation` header. */
    deprecated?: boolean;
    /** The answer carries a secret (a new API token): never stored for Idempotency-Key replays. */
    secretAnswer?: boolean;
    /** A media file (not JSON): served whatever the Accept header asks (no 406). */
    media?: boolean;
  }
  interface FastifyRequest {
    auth: AuthContext;
    responseFormat: ResponseFormat;
  }
}

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What every module's routes receive: the configuration and the services of the composition root. */
export interface Deps {
  config: Config;
  services: Services;
}
