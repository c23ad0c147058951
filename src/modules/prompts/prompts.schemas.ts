import { Type, type Static } from 'typebox';
import { Nullable } from '../../lib/schemas.ts';

/** A prompt type: letters, digits, `_` and `-`, 1..64 characters; matched case-insensitively (stored lower-case). */
export const PromptType = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$',
  description: 'Prompt type (letters, digits, _ and -); default `global`',
});

/** Text without NUL and other control characters except tab, newline and carriage return. */
const TEXT_PATTERN = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$';

export const PROMPT_CONTENT_MAX = 10_000;
export const CTA_LINK_MAX = 2048;
/** Empty, a path (`/…`) or an http(s) URL, without whitespace. */
const CtaLink = Type.String({
  maxLength: CTA_LINK_MAX,
  pattern: '^(|/[^\\s]*|[hH][tT][tT][pP][sS]?://[^\\s]+)$',
  description: 'A link path (`/…`) or an http(s) URL; empty for none',
});

export const Prompt = Type.Object({
  id: Type.Integer({ description: 'Id of the organization prompt; 0 for a built-in default' }),
  type: Type.String(),
  content: Type.String(),
  ctaLink: Type.String({ description: 'A link path' }),
});
export type Prompt = Static<typeof Prompt>;

export const PromptQuery = Type.Object({
  type: Type.Optional(Type.Unsafe<string>({ ...PromptType, examples: ['global'] })),
});

export const PutPromptBody = Type.Object(
  {
    type: Type.Optional(PromptType),
    content: Type.String({
      minLength: 1,
      maxLength: PROMPT_CONTENT_MAX,
      pattern: TEXT_PATTERN,
      description: 'Template text; `{{topic}}`, `{{video_type}}`, `{{length}}`, `{{duration}}` and `{{type}}` are filled in',
    }),
    ctaLink: Type.Optional(CtaLink),
    cta_link: Type.Optional(CtaLink),
  },
  {
    examples: [
      {
        type: 'global',
        content:
          'Write a {{length}} ({{duration}}) {{video_type}} script about {{topic}}. Open with the problem, show the product solving it, end with one next step.',
        ctaLink: '/signup',
      },
    ],
  },
);
export type PutPromptBody = Static<typeof PutPromptBody>;

export const ScriptLength = Type.Union([Type.Literal('short'), Type.Literal('medium'), Type.Literal('long')], {
  description: 'short (about 1 minute), medium (about 3 minutes, default) or long (about 7 minutes)',
  examples: ['short'],
});
export type ScriptLength = Static<typeof ScriptLength>;

export const TOPIC_MAX = 500;

export const GenerateScriptQuery = Type.Object({
  topic: Type.String({ minLength: 1, maxLength: TOPIC_MAX, description: 'What the video is about (required)', examples: ['Onboarding new customers'] }),
  type: Type.Optional(PromptType),
  video_type: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: 'Kind of video, e.g. `product demo`; default `video`', examples: ['product demo'] }),
  ),
  length: Type.Optional(ScriptLength),
  prompt: Type.Optional(
    Type.String({ minLength: 1, maxLength: 4000, description: 'An ad-hoc template used instead of the stored prompt (preview); `prompt_id` is then null' }),
  ),
});
export type GenerateScriptQuery = Static<typeof GenerateScriptQuery>;

export const ScriptSection = Type.Object({
  title: Type.String(),
  content: Type.String(),
  seconds: Type.Integer({ description: 'Suggested duration of the section' }),
});

export const GeneratedScript = Type.Object({
  prompt_id: Nullable(Type.Integer({ description: 'Prompt used: an organization prompt id, 0 for a built-in, null for an ad-hoc `prompt`' })),
  type: Type.String(),
  topic: Type.String(),
  video_type: Type.String(),
  length: Type.String(),
  seconds: Type.Integer({ description: 'Suggested total duration' }),
  title: Type.String(),
  prompt: Type.String({ description: 'The prompt with its placeholders filled in' }),
  sections: Type.Array(ScriptSection),
  script: Type.String({ description: 'The outline as plain text' }),
});
export type GeneratedScript = Static<typeof GeneratedScript>;
