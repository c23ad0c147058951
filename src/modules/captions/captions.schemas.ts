import { Type, type Static } from 'typebox';
import { PagingQuery, Summary } from '../../lib/schemas.ts';
import { HttpUrl, IdExample, Nullable, Timestamps, idParams } from '../../lib/schemas.ts';
import { LANGUAGE_MAX_LENGTH } from './languages.ts';

export const CaptionStatuses = ['in_progress', 'complete', 'error', 'draft', 'published'] as const;
export type CaptionStatus = (typeof CaptionStatuses)[number];

const StatusSchema = Type.Union([
  Type.Literal('in_progress'),
  Type.Literal('complete'),
  Type.Literal('error'),
  Type.Literal('draft'),
  Type.Literal('published'),
]);

const nullableUrl = (description: string) => Nullable(Type.String({ description }));

export const Caption = Type.Object({
  id: Type.Integer(),
  video_id: Type.Integer(),
  language: Type.String({ description: 'BCP 47 language tag, canonical form (en, en-US, zh-Hant)' }),
  status: StatusSchema,
  is_default: Type.Boolean(),
  notes: Nullable(Type.String()),
  srt_url: nullableUrl('Signed, expiring URL of the caption as SubRip; null until there is content'),
  vtt_url: nullableUrl('Signed, expiring URL of the caption as WebVTT; null until there is content'),
  txt_url: nullableUrl('Signed, expiring URL of the plain transcript; null until there is content'),
  srt_download_url: nullableUrl('As srt_url, served as an attachment'),
  vtt_download_url: nullableUrl('As vtt_url, served as an attachment'),
  txt_download_url: nullableUrl('As txt_url, served as an attachment'),
  formatted_text: Nullable(Type.String({ description: 'Cue texts with their markup, one paragraph per cue' })),
  plain_text: Nullable(Type.String({ description: 'The transcript: one line per cue, markup removed' })),
  formatted_language_name: Type.String({ description: 'English name of the language, e.g. "French (Canada)"' }),
  localized_language_name: Type.String({ description: 'Name of the language in itself, e.g. "Français (Canada)"' }),
  ...Timestamps,
});
export type Caption = Static<typeof Caption>;

export const CaptionArray = Type.Array(Caption);
export const CaptionList = Type.Union([CaptionArray, Type.Object({ captions: CaptionArray, summary: Summary })]);

const Language = Type.String({ minLength: 1, maxLength: LANGUAGE_MAX_LENGTH, description: 'BCP 47 language tag (en, en-US, pt-BR, zh-Hant)' });
/** Inline file text; the body limit bounds it. */
const Content = Type.String({ minLength: 1, description: 'The SRT or WebVTT file text' });
const Format = Type.Union([Type.Literal('srt'), Type.Literal('vtt')], { description: 'Format of `content`; detected (WEBVTT signature) when omitted' });

const Sources = {
  content: Type.Optional(Content),
  format: Type.Optional(Format),
  srt_url: Type.Optional(HttpUrl),
  vtt_url: Type.Optional(HttpUrl),
};

export const CreateCaptionBody = Type.Object(
  {
    language: Language,
    is_default: Type.Optional(Type.Boolean()),
    notes: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    ...Sources,
  },
  {
    // Caption 1 on a fresh server (inline, so that it is ready at once; srt_url / vtt_url fetch a file instead).
    examples: [
      {
        language: 'en',
        is_default: true,
        format: 'srt',
        content: '1\n00:00:00,000 --> 00:00:03,000\nWelcome to Reelbase.\n\n2\n00:00:03,000 --> 00:00:06,500\nLet us take a look around.\n',
      },
    ],
  },
);
export type CreateCaptionBody = Static<typeof CreateCaptionBody>;

export const UpdateCaptionBody = Type.Object(
  {
    language: Type.Optional(Language),
    is_default: Type.Optional(Type.Boolean()),
    notes: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    ...Sources,
  },
  { examples: [{ language: 'en-US', notes: 'Reviewed by the localisation team' }] },
);
export type UpdateCaptionBody = Static<typeof UpdateCaptionBody>;

export const CaptionListQuery = Type.Object({
  ...PagingQuery,
  language: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: LANGUAGE_MAX_LENGTH }), { maxItems: 50, description: 'Language tags; `en` also matches `en-US`' }),
  ),
  status: Type.Optional(Type.Array(StatusSchema, { maxItems: 5 })),
  sort_by: Type.Optional(Type.Union([Type.Literal('created_at'), Type.Literal('updated_at'), Type.Literal('language')], { description: 'Default: id' })),
  direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Default: asc' })),
});
export type CaptionListQuery = Static<typeof CaptionListQuery>;

/** Video 1 and caption 1 on a fresh server: what the create examples make. */
export const VideoCaptionsParams = Type.Object({ video_id: IdExample(1) });
export const CaptionParams = idParams(1);

export const ContentFormat = Type.Union([Type.Literal('vtt'), Type.Literal('srt'), Type.Literal('txt')]);
export type ContentFormat = Static<typeof ContentFormat>;

export const ContentQuery = Type.Object({
  format: Type.Optional(ContentFormat),
  download: Type.Optional(Type.Boolean({ description: 'Serve as an attachment (Content-Disposition)' })),
});

export const ContentStatus = Type.Object({
  id: Type.Integer(),
  video_id: Type.Integer(),
  status: StatusSchema,
  content_status: Type.Union([Type.Literal('in_progress'), Type.Literal('complete'), Type.Literal('error')], {
    description: 'in_progress while the file is fetched, error when it could not be used, else complete',
  }),
  error_message: Nullable(Type.String({ description: 'Why the file could not be used; names the line for a malformed file' })),
  error_line: Nullable(Type.Integer({ description: 'The line of the file that failed to parse' })),
  cue_count: Type.Integer(),
  updated_at: Type.Integer(),
});
export type ContentStatus = Static<typeof ContentStatus>;

export const FileParams = Type.Object({
  id: IdExample(1),
  file: Type.String({ pattern: '^[A-Za-z0-9-]{1,40}\\.(vtt|srt|txt)$', examples: ['en.vtt'] }),
});

/** Missing or malformed signature parts answer 403 like a wrong signature (checked by the service). */
export const FileQuery = Type.Object({
  expires: Type.Optional(Type.String({ maxLength: 20 })),
  signature: Type.Optional(Type.String({ maxLength: 128 })),
  download: Type.Optional(Type.Boolean()),
});
