import { Type, type Static } from 'typebox';

/** Any text: a malformed UUID is answered with the page's own 404, not a JSON validation error. */
export const PageParams = Type.Object({ uuid: Type.String({ maxLength: 200 }) });

export const AssetParams = Type.Object({ file: Type.String({ maxLength: 100 }) });

export const AccessCodeBody = Type.Object({ access_code: Type.Optional(Type.String({ maxLength: 255 })) });

export const OembedQuery = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'A watch (`/watch/<uuid>`) or embed (`/embed/<uuid>`) URL of this service' }),
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
