import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, problemOf } from '../api.ts';
import { CopyField } from '../components/copy.tsx';
import { FormError } from '../components/field.tsx';
import { Webhooks } from '../components/webhooks.tsx';
import type { paths } from '../openapi.d.ts';
import { mayManage, session } from '../session.ts';

type Team = paths['/dashboard/v1/teams/{id}']['get']['responses'][200]['content']['application/json'];
type IpRange = Extract<paths['/dashboard/v1/blacklisted_ip_ranges']['get']['responses'][200]['content']['application/json'], unknown[]>[number];
type Usage = paths['/dashboard/v1/organizations/{organization_id}/allotments']['get']['responses'][200]['content']['application/json'];
type User = { id: number; email: string };
type ApiToken = paths['/dashboard/v1/api_tokens']['get']['responses'][200]['content']['application/json'][number];

const ALLOTMENT_LABELS: Record<string, string> = { govideo_users: 'Users', teams: 'Teams', embeds: 'Embedded players' };

/** Allotment usage, teams and blocked IP ranges of the organization (docs/accounts.md, docs/security.md). */
export function Organization() {
  const me = session.value!;
  const manage = mayManage(me);
  const orgId = me.organization.id;
  const [usage, setUsage] = useState<Usage | null>(null);
  const [teams, setTeams] = useState<Team[]>([]);
  const [ranges, setRanges] = useState<IpRange[]>([]);
  const [users, setUsers] = useState<User[]>([]);
  const [teamName, setTeamName] = useState('');
  const [members, setMembers] = useState<number[]>([]);
  const [range, setRange] = useState({ name: '', ip_range: '' });
  const [tokens, setTokens] = useState<ApiToken[]>([]);
  const [tokenForm, setTokenForm] = useState({ name: '', role: 'editor' });
  const [newToken, setNewToken] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);

  const load = useCallback(async () => {
    const [a, t, r, u] = await Promise.all([
      api.GET('/dashboard/v1/organizations/{organization_id}/allotments', {
        params: { path: { organization_id: orgId }, query: { types: ['govideo_users', 'teams', 'embeds'] } },
      }),
      api.GET('/dashboard/v1/teams', { params: { query: { enable_query_team_members: true, per_page: 200 } } }),
      api.GET('/dashboard/v1/blacklisted_ip_ranges', { params: { query: { per_page: 200 } } }),
      api.GET('/dashboard/v1/users', { params: { query: { per_page: 200 } } }),
    ]);
    setUsage(a.data ?? null);
    if (t.data) setTeams(Array.isArray(t.data) ? t.data : t.data.teams);
    if (r.data) setRanges(Array.isArray(r.data) ? r.data : r.data.blacklisted_ip_ranges);
    if (u.data && 'users' in u.data) setUsers(u.data.users);
    if (manage) {
      const k = await api.GET('/dashboard/v1/api_tokens');
      setTokens(k.data ?? []);
    }
  }, [orgId, manage]);
  useEffect(() => void load(), [load]);

  async function write(result: Promise<{ error?: unknown }>) {
    setProblem(null);
    setFields({});
    const { error } = await result;
    if (error) {
      const p = problemOf(error);
      setFields(p.fields);
      setProblem(p.message);
      return false;
    }
    await load();
    return true;
  }

  return (
    <section class="page">
      <header class="page__header">
        <h1>{me.organization.name}</h1>
      </header>
      <FormError message={problem} />
      <section class="card" aria-labelledby="usage-title">
        <h2 id="usage-title">Usage</h2>
        <dl class="figures figures--small">
          {usage
            ? Object.entries(usage).map(([type, u]) =>
                u ? (
                  <div class="figure" key={type}>
                    <dt>{ALLOTMENT_LABELS[type] ?? type}</dt>
                    <dd>
                      {u.current_usage}
                      <span class="muted small"> {u.limit ? `of ${u.limit}${u.enforced ? '' : ' (not enforced)'}` : 'no limit'}</span>
                    </dd>
                  </div>
                ) : null,
              )
            : null}
        </dl>
      </section>

      <section class="card stack" aria-labelledby="teams-title">
        <h2 id="teams-title">Teams</h2>
        <table class="table">
          <caption class="visually-hidden">Teams</caption>
          <thead>
            <tr>
              <th scope="col">Team</th>
              <th scope="col">Members</th>
              {manage ? (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {teams.map((t) => (
              <tr key={t.id}>
                <td>
                  {t.name} {t.is_admin ? <span class="badge badge--idle">admins</span> : null}
                </td>
                <td>{(t.members ?? []).map((m) => m.email).join(', ') || <span class="muted">none</span>}</td>
                {manage ? (
                  <td class="table__actions">
                    {t.is_admin ? null : (
                      <button
                        class="button button--quiet"
                        type="button"
                        aria-label={`Delete team ${t.name}`}
                        onClick={() => void write(api.DELETE('/dashboard/v1/teams/{id}', { params: { path: { id: t.id } } }))}
                      >
                        Delete
                      </button>
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
        {manage ? (
          <form
            class="stack"
            onSubmit={(e) => {
              e.preventDefault();
              void write(api.POST('/dashboard/v1/teams', { body: { name: teamName, user_ids: members } })).then((ok) => {
                if (ok) {
                  setTeamName('');
                  setMembers([]);
                }
              });
            }}
          >
            <div class="inline-form">
              <label for="team-name">New team</label>
              <input
                id="team-name"
                required
                maxLength={255}
                value={teamName}
                aria-invalid={fields.name ? true : undefined}
                onInput={(e) => setTeamName(e.currentTarget.value)}
              />
              <button class="button button--primary" type="submit">
                Create team
              </button>
            </div>
            {fields.name ? <p class="field__error">{fields.name}</p> : null}
            <fieldset class="members">
              <legend>Members</legend>
              {users.map((u) => (
                <label class="check" key={u.id}>
                  <input
                    type="checkbox"
                    checked={members.includes(u.id)}
                    onChange={(e) => setMembers(e.currentTarget.checked ? [...members, u.id] : members.filter((x) => x !== u.id))}
                  />{' '}
                  {u.email}
                </label>
              ))}
            </fieldset>
          </form>
        ) : null}
      </section>

      {manage ? (
        <section class="card stack" aria-labelledby="tokens-title">
          <h2 id="tokens-title">API tokens</h2>
          <p class="muted small">For scripts and integrations. A token acts with its role; its secret is shown once, when it is made.</p>
          {newToken ? (
            <div class="notice" role="status">
              <CopyField label="New token (copy it now: it will not be shown again)" value={newToken} />
            </div>
          ) : null}
          <table class="table">
            <caption class="visually-hidden">API tokens</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((k) => (
                <tr key={k.id}>
                  <td>
                    {k.name ?? <span class="muted">unnamed</span>}
                    {k.user_email ? <span class="muted small"> (acts as {k.user_email})</span> : null}
                  </td>
                  <td>{k.role}</td>
                  <td>{new Date(k.created_at * 1000).toLocaleDateString()}</td>
                  <td class="table__actions">
                    <button
                      class="button button--quiet"
                      type="button"
                      aria-label={`Revoke token ${k.name ?? k.id}`}
                      onClick={() => {
                        if (confirm(`Revoke ${k.name ?? 'this token'}? Whatever uses it stops working at once.`)) {
                          void write(api.DELETE('/dashboard/v1/api_tokens/{id}', { params: { path: { id: k.id } } }));
                        }
                      }}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <form
            class="inline-form"
            onSubmit={async (e) => {
              e.preventDefault();
              setNewToken(null);
              setProblem(null);
              const { data, error } = await api.POST('/dashboard/v1/api_tokens', { body: tokenForm });
              if (!data) return setProblem(problemOf(error).message);
              setNewToken(data.token);
              setTokenForm({ ...tokenForm, name: '' });
              await load();
            }}
          >
            <label for="token-name">New token</label>
            <input
              id="token-name"
              required
              maxLength={255}
              placeholder="What it is for"
              value={tokenForm.name}
              onInput={(e) => setTokenForm({ ...tokenForm, name: e.currentTarget.value })}
            />
            <label for="token-role">Role</label>
            <select id="token-role" value={tokenForm.role} onChange={(e) => setTokenForm({ ...tokenForm, role: e.currentTarget.value })}>
              {(me.user.role === 'owner' ? ['owner', 'admin', 'editor', 'viewer'] : ['admin', 'editor', 'viewer']).map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
            <button class="button button--primary" type="submit">
              Create token
            </button>
          </form>
        </section>
      ) : null}

      {manage ? <Webhooks organizationId={orgId} /> : null}

      <section class="card stack" aria-labelledby="ranges-title">
        <h2 id="ranges-title">Blocked IP ranges</h2>
        <p class="muted small">Viewers from these addresses cannot open the organization's players or media.</p>
        {ranges.length === 0 ? <p class="muted">None.</p> : null}
        <ul class="tags">
          {ranges.map((r) => (
            <li class="tag" key={r.id}>
              {r.name === r.ip_range ? r.ip_range : `${r.name}: ${r.ip_range}`}
              {manage ? (
                <button
                  class="tag__remove"
                  type="button"
                  aria-label={`Unblock ${r.ip_range}`}
                  onClick={() => void write(api.DELETE('/dashboard/v1/blacklisted_ip_ranges/{id}', { params: { path: { id: r.id } } }))}
                >
                  ×
                </button>
              ) : null}
            </li>
          ))}
        </ul>
        {manage ? (
          <form
            class="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              void write(
                api.POST('/dashboard/v1/blacklisted_ip_ranges', { body: { ip_range: range.ip_range, ...(range.name ? { name: range.name } : {}) } }),
              ).then((ok) => ok && setRange({ name: '', ip_range: '' }));
            }}
          >
            <label for="range">Block</label>
            <input
              id="range"
              required
              placeholder="203.0.113.0/24"
              value={range.ip_range}
              aria-invalid={fields.ip_range ? true : undefined}
              aria-describedby={fields.ip_range ? 'range-error' : undefined}
              onInput={(e) => setRange({ ...range, ip_range: e.currentTarget.value })}
            />
            <label for="range-name">Label</label>
            <input id="range-name" placeholder="optional" value={range.name} onInput={(e) => setRange({ ...range, name: e.currentTarget.value })} />
            <button class="button button--primary" type="submit">
              Block range
            </button>
            {fields.ip_range ? (
              <p class="field__error" id="range-error">
                {fields.ip_range}
              </p>
            ) : null}
          </form>
        ) : null}
      </section>
    </section>
  );
}
