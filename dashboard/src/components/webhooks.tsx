import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, problemOf } from '../api.ts';
import type { paths } from '../openapi.d.ts';
import { CopyField } from './copy.tsx';
import { FormError } from './field.tsx';

type Kind = 'analytics' | 'players';

/** The API's operations on each kind of webhook. */
const PATHS = {
  analytics: {
    list: '/dashboard/v1/organizations/{organization_id}/webhooks/analytics',
    one: '/dashboard/v1/organizations/{organization_id}/webhooks/analytics/{id}',
    test: '/dashboard/v1/organizations/{organization_id}/webhooks/analytics/{id}/test',
    deliveries: '/dashboard/v1/organizations/{organization_id}/webhooks/analytics/{id}/deliveries',
  },
  players: {
    list: '/dashboard/v1/organizations/{organization_id}/webhooks/players',
    one: '/dashboard/v1/organizations/{organization_id}/webhooks/players/{id}',
    test: '/dashboard/v1/organizations/{organization_id}/webhooks/players/{id}/test',
    deliveries: '/dashboard/v1/organizations/{organization_id}/webhooks/players/{id}/deliveries',
  },
} as const;
type Webhook = paths['/dashboard/v1/organizations/{organization_id}/webhooks/analytics']['get']['responses'][200]['content']['application/json'][number];
type Delivery =
  paths['/dashboard/v1/organizations/{organization_id}/webhooks/analytics/{id}/deliveries']['get']['responses'][200]['content']['application/json'][number];

const KINDS: Array<{ kind: Kind; label: string }> = [
  { kind: 'analytics', label: 'Analytics (views, identified views, attention)' },
  { kind: 'players', label: 'Player changes' },
];

/** The organization's webhooks: register one, send it a test message, read its latest deliveries. */
export function Webhooks({ organizationId }: { organizationId: number }) {
  const [hooks, setHooks] = useState<Array<Webhook & { kind: Kind }>>([]);
  const [deliveries, setDeliveries] = useState<Record<number, Delivery[]>>({});
  const [form, setForm] = useState<{ kind: Kind; url: string }>({ kind: 'analytics', url: '' });
  const [secret, setSecret] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const path = { organization_id: organizationId };

  const load = useCallback(async () => {
    const [a, p] = await Promise.all([api.GET(PATHS.analytics.list, { params: { path } }), api.GET(PATHS.players.list, { params: { path } })]);
    setHooks([...(a.data ?? []).map((h) => ({ ...h, kind: 'analytics' as const })), ...(p.data ?? []).map((h) => ({ ...h, kind: 'players' as const }))]);
  }, [organizationId]);
  useEffect(() => void load(), [load]);

  async function showDeliveries(hook: Webhook & { kind: Kind }) {
    const { data } = await api.GET(PATHS[hook.kind].deliveries, { params: { path: { ...path, id: hook.id } } });
    setDeliveries((all) => ({ ...all, [hook.id]: data ?? [] }));
  }

  async function test(hook: Webhook & { kind: Kind }) {
    setProblem(null);
    const { error } = await api.POST(PATHS[hook.kind].test, { params: { path: { ...path, id: hook.id } } });
    if (error) return setProblem(problemOf(error).message);
    // The message goes out with the job queue: look again a little later.
    await showDeliveries(hook);
    setTimeout(() => void showDeliveries(hook), 1500);
  }

  async function remove(hook: Webhook & { kind: Kind }) {
    const { error } = await api.DELETE(PATHS[hook.kind].one, { params: { path: { ...path, id: hook.id } } });
    if (error) setProblem(problemOf(error).message);
    await load();
  }

  async function register(event: Event) {
    event.preventDefault();
    setFields({});
    setProblem(null);
    setSecret(null);
    const { data, error } = await api.POST(PATHS[form.kind].list, { params: { path }, body: { url: form.url } });
    if (!data) {
      const p = problemOf(error);
      setFields(p.fields);
      return setProblem(p.message);
    }
    setSecret(data.security_key);
    setForm({ ...form, url: '' });
    await load();
  }

  return (
    <section class="card stack" aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhooks</h2>
      <FormError message={problem} />
      {secret ? (
        <div class="notice" role="status">
          <CopyField label="Signing secret of the new webhook (Standard Webhooks)" value={secret} />
        </div>
      ) : null}
      {hooks.length === 0 ? <p class="muted">No webhooks.</p> : null}
      <ul class="captions">
        {hooks.map((h) => (
          <li class="caption caption--block" key={`${h.kind}-${h.id}`}>
            <div class="caption__row">
              <span>
                <strong>{h.url}</strong>{' '}
                <span class="muted small">
                  {h.kind === 'analytics' ? 'analytics' : 'player changes'}: {h.event_subscriptions.join(', ')}
                </span>
              </span>
              <span class="actions">
                <button class="button button--small" type="button" onClick={() => void test(h)} aria-label={`Send a test to ${h.url}`}>
                  Send a test
                </button>
                <button class="button button--small" type="button" onClick={() => void showDeliveries(h)} aria-label={`Deliveries of ${h.url}`}>
                  Deliveries
                </button>
                <button class="button button--small button--quiet" type="button" onClick={() => void remove(h)} aria-label={`Delete the webhook ${h.url}`}>
                  Delete
                </button>
              </span>
            </div>
            {deliveries[h.id] ? (
              deliveries[h.id].length === 0 ? (
                <p class="muted small">No deliveries kept.</p>
              ) : (
                <table class="table table--compact">
                  <caption class="visually-hidden">Latest deliveries to {h.url}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Event</th>
                      <th scope="col">Status</th>
                      <th scope="col">Attempts</th>
                      <th scope="col">Last error</th>
                      <th scope="col">Sent</th>
                    </tr>
                  </thead>
                  <tbody>
                    {deliveries[h.id].map((d) => (
                      <tr key={d.id}>
                        <td>{d.event}</td>
                        <td>
                          <span class={`badge badge--${d.status === 'delivered' ? 'ok' : d.status === 'failed' ? 'bad' : 'busy'}`}>{d.status}</span>
                        </td>
                        <td>
                          {d.attempts} of {d.max_attempts}
                        </td>
                        <td class="small">{d.last_error ?? '–'}</td>
                        <td>{new Date(d.created_at * 1000).toLocaleString()}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )
            ) : null}
          </li>
        ))}
      </ul>
      <form class="inline-form" onSubmit={(e) => void register(e)}>
        <label for="webhook-kind">New webhook</label>
        <select id="webhook-kind" value={form.kind} onChange={(e) => setForm({ ...form, kind: e.currentTarget.value as Kind })}>
          {KINDS.map((k) => (
            <option key={k.kind} value={k.kind}>
              {k.label}
            </option>
          ))}
        </select>
        <label for="webhook-url">URL</label>
        <input
          id="webhook-url"
          type="url"
          required
          placeholder="https://example.com/hooks/reelbase"
          value={form.url}
          aria-invalid={fields.url ? true : undefined}
          aria-describedby={fields.url ? 'webhook-url-error' : undefined}
          onInput={(e) => setForm({ ...form, url: e.currentTarget.value })}
        />
        <button class="button button--primary" type="submit">
          Register
        </button>
        {fields.url ? (
          <p class="field__error" id="webhook-url-error">
            {fields.url}
          </p>
        ) : null}
      </form>
    </section>
  );
}
