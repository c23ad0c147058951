import { Field } from './field.tsx';
import type { paths } from '../openapi.d.ts';

export type Cta = paths['/dashboard/v1/ctas/{id}']['get']['responses'][200]['content']['application/json'];
export type CtaDraft = { second: string; duration: string; width: string; html: string; postRoll: boolean };
export type CtaChange = { second: number; duration: number | null; auto_close: boolean; width?: number; html: string };

export const NEW_CTA_HTML = '<p><a href="https://www.example.com" target="_blank">Learn more</a></p>';

/** What the editor shows of a CTA or of any event placed like one. */
export type Placed = Pick<Cta, 'id' | 'second' | 'duration' | 'width' | 'html'>;

export const draftOf = (c: Placed): CtaDraft => ({
  second: String(Math.max(0, c.second)),
  duration: c.duration === null ? '' : String(c.duration),
  width: c.width === null ? '' : String(c.width),
  html: c.html,
  postRoll: c.second === -1,
});

/**
 * The draft once a save's answer arrives: each field the viewer has edited since the save was sent
 * (`base`) stays as typed; the others take the saved CTA's value. Replacing the whole draft lost
 * what was typed while a drag's save was on its way.
 */
export function rebase(base: CtaDraft, mine: CtaDraft, saved: CtaDraft): CtaDraft {
  const keep = <K extends keyof CtaDraft>(key: K): CtaDraft[K] => (mine[key] !== base[key] ? mine[key] : saved[key]);
  return { second: keep('second'), duration: keep('duration'), width: keep('width'), html: keep('html'), postRoll: keep('postRoll') };
}

/** The change a draft asks for, in the API's terms (an empty duration: shown until closed). */
export function changeOf(draft: CtaDraft): CtaChange {
  const number = (v: string) => (v.trim() === '' ? null : Number(v));
  const duration = number(draft.duration);
  return {
    second: draft.postRoll ? -1 : (number(draft.second) ?? 0),
    duration,
    auto_close: duration !== null,
    width: number(draft.width) ?? undefined,
    html: draft.html,
  };
}

/**
 * One CTA's second, duration, width, post-roll and HTML with a live preview of the HTML (a sandboxed
 * frame: nothing in it runs); the API's refusals are shown next to their field.
 */
export function CtaEditor(props: {
  title: string;
  draft: CtaDraft;
  fields: Record<string, string>;
  writable: boolean;
  onChange: (draft: CtaDraft) => void;
  onSave: () => void;
  onDelete: () => void;
}) {
  const { draft, fields, onChange } = props;
  return (
    <form
      class="card stack"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSave();
      }}
      aria-labelledby="cta-title"
    >
      <h2 id="cta-title">{props.title}</h2>
      <fieldset class="plain" disabled={!props.writable}>
        <div class="field-row field-row--4">
          <Field
            label="Second"
            type="number"
            min={0}
            value={draft.second}
            disabled={draft.postRoll}
            error={fields.second}
            onInput={(e) => onChange({ ...draft, second: e.currentTarget.value })}
          />
          <Field
            label="Duration (seconds)"
            type="number"
            min={0}
            value={draft.duration}
            error={fields.duration}
            hint="Empty: until the viewer closes it."
            onInput={(e) => onChange({ ...draft, duration: e.currentTarget.value })}
          />
          <Field
            label="Width (px)"
            type="number"
            value={draft.width}
            error={fields.width}
            hint="100 to 500."
            onInput={(e) => onChange({ ...draft, width: e.currentTarget.value })}
          />
          <label class="check check--field">
            <input type="checkbox" checked={draft.postRoll} onChange={(e) => onChange({ ...draft, postRoll: e.currentTarget.checked })} /> After the video
            (post-roll)
          </label>
        </div>
        <div class="columns">
          <div class="field">
            <label for="cta-html">HTML</label>
            <textarea
              id="cta-html"
              rows={8}
              value={draft.html}
              aria-invalid={fields.html ? true : undefined}
              onInput={(e) => onChange({ ...draft, html: e.currentTarget.value })}
            />
            {fields.html ? <p class="field__error">{fields.html}</p> : null}
          </div>
          <div class="field">
            <span class="label">Live preview</span>
            <iframe
              class="cta-preview"
              title="Live preview of the CTA"
              sandbox=""
              srcdoc={draft.html}
              style={{ width: `${Math.min(500, Math.max(100, Number(draft.width) || 300))}px` }}
            />
          </div>
        </div>
        {props.writable ? (
          <div class="form-actions">
            <button class="button button--primary" type="submit">
              Save CTA
            </button>
            <button class="button button--quiet" type="button" onClick={props.onDelete}>
              Delete CTA
            </button>
          </div>
        ) : null}
      </fieldset>
    </form>
  );
}
