import { AppError, invalidField } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import { type PromptsRepository, type PromptRow } from './prompts.repository.ts';
import type { GeneratedScript, GenerateScriptQuery, Prompt, PutPromptBody } from './prompts.schemas.ts';
import { buildOutline } from './script-outline.ts';

export const DEFAULT_PROMPT_TYPE = 'global';

/** Id answered for a built-in prompt (organization prompts have ids ≥ 1). */
export const BUILT_IN_PROMPT_ID = 0;

/** Built-in prompts, available to every organization until it sets its own of the same type. */
export const BUILT_IN_PROMPTS: Readonly<Record<string, { content: string; ctaLink: string }>> = {
  global: {
    content: [
      'Write a {{length}} ({{duration}}) {{video_type}} script about {{topic}}.',
      'Speak directly to the viewer, keep sentences short and end with one clear next step.',
      '- Hook',
      '- Introduction',
      '- Key points',
      '- Call to action',
    ].join('\n'),
    ctaLink: defaultCtaLink('global'),
  },
};

function defaultCtaLink(type: string): string {
  return `/v1/generate_script?type=${encodeURIComponent(type)}`;
}

/** Lone UTF-16 surrogates become U+FFFD, as both databases would store them. */
const wellFormed = (s: string) => s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

const normalizeType = (type: string | undefined) => (type ?? DEFAULT_PROMPT_TYPE).toLowerCase();

const toWire = (row: PromptRow): Prompt => ({ id: row.id, type: row.type, content: row.content, ctaLink: row.cta_link });

export class PromptsService {
  constructor(private readonly repo: PromptsRepository) {}

  /** The organization's prompt of that type, else the built-in one; 404 when neither exists. */
  async get(organizationId: number, requestedType?: string): Promise<Prompt> {
    const type = normalizeType(requestedType);
    const row = await this.repo.find(organizationId, type);
    if (row) return toWire(row);
    const builtIn = Object.prototype.hasOwnProperty.call(BUILT_IN_PROMPTS, type) ? BUILT_IN_PROMPTS[type] : undefined;
    if (builtIn) return { id: BUILT_IN_PROMPT_ID, type, content: builtIn.content, ctaLink: builtIn.ctaLink };
    throw new AppError('not_found', `404: No prompt exists of type ${type}`);
  }

  /** Sets (creates or replaces) the organization's prompt of a type; `created` tells which. */
  async put(organizationId: number, body: PutPromptBody): Promise<{ prompt: Prompt; created: boolean }> {
    const type = normalizeType(body.type);
    const content = wellFormed(body.content).trim();
    if (!content) throw invalidField('content', 'must not be blank');
    const ctaLink = body.ctaLink ?? body.cta_link ?? defaultCtaLink(type);
    const now = nowSeconds();
    const inserted = await this.repo.insertIfAbsent({ organization_id: organizationId, type, content, cta_link: ctaLink, created_at: now, updated_at: now });
    if (inserted) return { prompt: toWire(inserted), created: true };
    const updated = await this.repo.update(organizationId, type, { content, cta_link: ctaLink, updated_at: now });
    // Deleted between the two statements: insert again (no conflict can remain for long).
    if (!updated) return this.put(organizationId, body);
    return { prompt: toWire(updated), created: false };
  }

  /** Removes the organization's prompt of a type (the built-in one, if any, applies again). */
  async delete(organizationId: number, requestedType?: string): Promise<Prompt> {
    const type = normalizeType(requestedType);
    const row = await this.repo.delete(organizationId, type);
    if (!row) throw new AppError('not_found', `404: No prompt exists of type ${type}`);
    return toWire(row);
  }

  /** Fills the prompt (stored, built-in or the ad-hoc `prompt`) into a deterministic outline. */
  async generateScript(organizationId: number, query: GenerateScriptQuery): Promise<GeneratedScript> {
    const topic = wellFormed(query.topic).trim().replace(/\s+/g, ' ');
    if (!topic) throw invalidField('topic', 'must not be blank');
    const videoType = wellFormed(query.video_type ?? 'video')
      .trim()
      .replace(/\s+/g, ' ');
    if (!videoType) throw invalidField('video_type', 'must not be blank');
    const type = normalizeType(query.type);
    const length = query.length ?? 'medium';

    let template: string;
    let promptId: number | null;
    if (query.prompt !== undefined) {
      if (!query.prompt.trim()) throw invalidField('prompt', 'must not be blank');
      template = wellFormed(query.prompt);
      promptId = null;
    } else {
      const prompt = await this.get(organizationId, type);
      template = prompt.content;
      promptId = prompt.id;
    }

    const outline = buildOutline({ template, type, topic, videoType, length });
    return {
      prompt_id: promptId,
      type,
      topic,
      video_type: videoType,
      length,
      seconds: outline.seconds,
      title: outline.title,
      prompt: outline.prompt,
      sections: outline.sections,
      script: outline.script,
    };
  }
}
