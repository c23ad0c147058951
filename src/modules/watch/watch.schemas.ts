import { Type, type Static } from 'typebox';
import { PLAYER_UUID_EXAMPLE } from '../../lib/schemas.ts';

/** Any text: a malformed UUID is answered with the page's own 404, not a JSON validation error. */
export const PageParams = Type.Object({ uuid: Type.String({ maxLength: 200 }) });

export const AssetParams = Type.Object({ file: Type.String({ maxLength: 100 }) });

export const AccessCodeBody = Type.Object({ access_code: Type.Optional(Type.String({ maxLength: 255 })) });

export const OembedQuery = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'A watch (`/watch/<uuid>`) or embed (`/embed/<uuid>`) URL of this service',
    // The form only: a player's UUID is random, and the host is the server's PUBLIC_URL.
    examples: [`http://127.0.0.1:3000/watch/${PLAYER_UUID_EXAMPLE}`],
  }),
  maxwidth: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
  maxheight: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
  format: Type.Optional(Type.String({ maxLength: 10, description: '`json` (the default); `xml` is answered with 501' })),
});
export type OembedQuery = Static<typeof OembedQuery>;

export const Oembed = Type.Object({
  version: Type.Literal('1.0'),
  type: Type.Literal('video'),
  provider_name: Type.String(),
  provider_url: Type.String(),
  title: Type.String(),
  author_name: Type.String(),
  html: Type.String(),
  width: Type.Integer(),
  height: Type.Integer(),
  thumbnail_url: Type.Optional(Type.String()),
  thumbnail_width: Type.Optional(Type.Integer()),
  thumbnail_height: Type.Optional(Type.Integer()),
});

const Token = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });
const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' });
const EmbedUrl = Type.String({ maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://[^\\s]+$' });

/** What the player script reports (docs/webhooks.md); each report goes to the analytics webhooks. */
export const AnalyticsBeacon = Type.Object({
  type: Type.Union([
    Type.Literal('load'),
    Type.Literal('view'),
    Type.Literal('identified_view'),
    Type.Literal('attention_span'),
    Type.Literal('cta_impression'),
    Type.Literal('cta_click'),
  ]),
  player_load_id: Token,
  visitor_uuid: Token,
  /** The chapter's index in play order. */
  chapter: Type.Integer({ minimum: 0, maximum: 9999 }),
  percent_watched: Type.Optional(Type.Union([0, 25, 50, 75, 100].map((p) => Type.Literal(p)))),
  email: Type.Optional(Email),
  buckets: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: 100_000 }), { minItems: 20, maxItems: 20 })),
  embed_url: Type.Optional(EmbedUrl),
  /** cta_impression, cta_click: the CTA (event) shown or clicked. */
  event_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
  /** attention_span: the stretches of the chapter actually played, [from, to] in seconds. */
  watched: Type.Optional(Type.Array(Type.Array(Type.Number({ minimum: 0, maximum: 86_400 }), { minItems: 2, maxItems: 2 }), { maxItems: 500 })),
  /** attention_span: seconds of playback (a stretch watched again counts again). */
  played_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 86_400 })),
  /** attention_span: the report's number in its load, so that watching a chapter again is a new report, not a replay. */
  seq: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
});
export type AnalyticsBeacon = Static<typeof AnalyticsBeacon>;

/** POST /watch|embed/:uuid/gate: the address a viewer gave at the email gate, with what a report carries. */
export const GateBody = Type.Object({
  email: Email,
  player_load_id: Token,
  visitor_uuid: Token,
  /** The chapter (index in play order) the gate was passed on. */
  chapter: Type.Integer({ minimum: 0, maximum: 9999 }),
  embed_url: Type.Optional(EmbedUrl),
});
