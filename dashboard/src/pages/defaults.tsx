import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, problemOf } from '../api.ts';
import { changeOf, CtaEditor, draftOf, NEW_CTA_HTML, rebase, type CtaDraft, type Placed } from '../components/cta-editor.tsx';
import { FormError } from '../components/field.tsx';
import { duration as clock } from '../format.ts';
import { mayWrite, session } from '../session.ts';

/** Where a CTA shows, in words. */
const placement = (c: Placed) =>
  c.second === -1 ? 'after the video' : `at ${clock(c.second)}${c.duration === null ? ', until closed' : ` for ${c.duration} s`}`;

/**
 * The organization's default CTAs: shown on every player of the organization, beside each chapter's
 * own (the API's organization default events, `chapter_id: null`). Added, edited and deleted through
 * the CTA operations, whose refusals are shown next to their field.
 */
export function Defaults() {
  const organizationId = session.value!.organization.id;
  const [ctas, setCtas] = useState<Placed[] | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [draft, setDraft] = useState<CtaDraft | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const writable = mayWrite(session.value);
  // Which CTA the editor shows now, for a save's answer not to land in another one's draft.
  const shown = useRef(selected);
  shown.current = selected;

  const load = useCallback(async () => {
    const { data, error } = await api.GET('/dashboard/v1/organizations/{id}/events', { params: { path: { id: organizationId }, query: { per_page: 200 } } });
    if (!data) {
      setCtas([]);
      return setProblem(problemOf(error).message);
    }
    // The CTAs among the default events (other kinds, such as email gates, are not edited here).
    setCtas(data.map((d) => d.event).filter((e) => e.event_type === 'simple_overlay'));
  }, [organizationId]);
  useEffect(() => void load(), [load]);

  function select(cta: Placed | null) {
    setSelected(cta?.id ?? null);
    setDraft(cta ? draftOf(cta) : null);
    setFields({});
  }

  async function add() {
    setProblem(null);
    const { data, error } = await api.POST('/dashboard/v1/ctas', { body: { second: 0, duration: 5, auto_close: true, width: 300, html: NEW_CTA_HTML } });
    if (!data) return setProblem(problemOf(error).message);
    setCtas((all) => [...(all ?? []), data]);
    select(data);
  }

  async function save(id: number, change: CtaDraft) {
    setProblem(null);
    setFields({});
    const { data, error } = await api.PATCH('/dashboard/v1/ctas/{id}', { params: { path: { id } }, body: changeOf(change) });
    if (data) {
      setCtas((all) => (all ?? []).map((c) => (c.id === id ? data : c)));
      if (shown.current === id) setDraft((mine) => (mine ? rebase(change, mine, draftOf(data)) : draftOf(data)));
      return;
    }
    const p = problemOf(error);
    setFields(p.fields);
    setProblem(p.message);
  }

  async function remove(id: number) {
    const { error } = await api.DELETE('/dashboard/v1/ctas/{id}', { params: { path: { id } } });
    if (error) return setProblem(problemOf(error).message);
    setCtas((all) => (all ?? []).filter((c) => c.id !== id));
    select(null);
  }

  return (
    <section class="page">
      <header class="page__header">
        <h1>Default CTAs</h1>
        {writable ? (
          <button class="button button--primary" type="button" onClick={() => void add()}>
            Add a default CTA
          </button>
        ) : null}
      </header>
      <p class="muted">Shown on every player of {session.value!.organization.name}, beside each chapter's own CTAs.</p>
      <FormError message={problem} />
      {ctas === null ? (
        <p aria-busy="true">Loading…</p>
      ) : ctas.length === 0 ? (
        <p class="empty">No default CTAs.</p>
      ) : (
        <ul class="captions" aria-label="Default CTAs">
          {ctas.map((c) => (
            <li class="caption" key={c.id} data-cta-id={c.id}>
              <span>
                CTA {c.id}, {placement(c)}
              </span>
              <button class="button button--small" type="button" aria-pressed={selected === c.id} onClick={() => select(c)}>
                {writable ? 'Edit' : 'Show'}
                <span class="visually-hidden"> CTA {c.id}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {draft && selected !== null ? (
        <CtaEditor
          title={`Default CTA ${selected}`}
          draft={draft}
          fields={fields}
          writable={writable}
          onChange={setDraft}
          onSave={() => void save(selected, draft)}
          onDelete={() => void remove(selected)}
        />
      ) : null}
    </section>
  );
}
