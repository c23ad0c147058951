import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, problemOf } from '../api.ts';
import { Field, FormError } from '../components/field.tsx';
import type { paths } from '../openapi.d.ts';
import { mayManage, session } from '../session.ts';

type User = paths['/dashboard/v1/users/{id}']['get']['responses'][200]['content']['application/json'];

const ROLES = [
  { id: 1, name: 'owner', label: 'Owner' },
  { id: 2, name: 'admin', label: 'Admin' },
  { id: 3, name: 'editor', label: 'Editor' },
  { id: 4, name: 'viewer', label: 'Viewer' },
];

/** The organization's people: invite (by mail), change a role, remove. Admins and owners. */
export function Users() {
  const me = session.value!;
  const manage = mayManage(me);
  const [users, setUsers] = useState<User[] | null>(null);
  const [email, setEmail] = useState('');
  const [firstName, setFirstName] = useState('');
  const [lastName, setLastName] = useState('');
  const [roleId, setRoleId] = useState(4);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const load = useCallback(async () => {
    const { data, error } = await api.GET('/dashboard/v1/users', { params: { query: { per_page: 200 } } });
    if (data && 'users' in data) setUsers(data.users);
    else setProblem(problemOf(error).message);
  }, []);
  useEffect(() => void load(), [load]);

  async function invite(event: Event) {
    event.preventDefault();
    setFields({});
    setProblem(null);
    setNotice(null);
    const { data, error } = await api.POST('/dashboard/v1/users', { body: { email, first_name: firstName, last_name: lastName, role_id: roleId } });
    if (!data) {
      const p = problemOf(error);
      setFields(p.fields);
      return setProblem(p.message);
    }
    setNotice(`Invitation mailed to ${data.email}.`);
    setEmail('');
    setFirstName('');
    setLastName('');
    await load();
  }

  async function changeRole(user: User, role_id: number) {
    setProblem(null);
    const { error } = await api.PATCH('/dashboard/v1/users', { body: { id: user.id, role_id } });
    if (error) setProblem(problemOf(error).message);
    await load();
  }

  async function remove(user: User) {
    if (!confirm(`Remove ${user.email}? Their sessions and API tokens stop working.`)) return;
    const { error } = await api.DELETE('/dashboard/v1/users/{id}', { params: { path: { id: user.id } } });
    if (error) setProblem(problemOf(error).message);
    await load();
  }

  return (
    <section class="page">
      <header class="page__header">
        <h1>People</h1>
      </header>
      {manage ? (
        <form class="card stack" onSubmit={(e) => void invite(e)} aria-labelledby="invite-title">
          <h2 id="invite-title">Invite someone</h2>
          <div class="field-row field-row--4">
            <Field label="Email" type="email" required value={email} error={fields.email} onInput={(e) => setEmail(e.currentTarget.value)} />
            <Field label="First name" value={firstName} error={fields.first_name} onInput={(e) => setFirstName(e.currentTarget.value)} />
            <Field label="Last name" value={lastName} error={fields.last_name} onInput={(e) => setLastName(e.currentTarget.value)} />
            <div class="field">
              <label for="invite-role">Role</label>
              <select id="invite-role" value={String(roleId)} onChange={(e) => setRoleId(Number(e.currentTarget.value))}>
                {ROLES.map((r) => (
                  <option key={r.id} value={String(r.id)}>
                    {r.label}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <div class="form-actions">
            <button class="button button--primary" type="submit">
              Send invitation
            </button>
            {notice ? (
              <span role="status" class="muted">
                {notice}
              </span>
            ) : null}
          </div>
        </form>
      ) : null}
      <FormError message={problem} />
      {users === null ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <table class="table">
          <caption class="visually-hidden">People of the organization</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              {manage ? (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id}>
                <td>{`${u.first_name} ${u.last_name}`.trim() || <span class="muted">–</span>}</td>
                <td>{u.email}</td>
                <td>
                  {manage && u.id !== me.user.id ? (
                    <select aria-label={`Role of ${u.email}`} value={String(u.role_id)} onChange={(e) => void changeRole(u, Number(e.currentTarget.value))}>
                      {ROLES.map((r) => (
                        <option key={r.id} value={String(r.id)}>
                          {r.label}
                        </option>
                      ))}
                    </select>
                  ) : (
                    ROLES.find((r) => r.id === u.role_id)?.label
                  )}
                </td>
                {manage ? (
                  <td class="table__actions">
                    {u.id !== me.user.id ? (
                      <button class="button button--quiet" type="button" onClick={() => void remove(u)} aria-label={`Remove ${u.email}`}>
                        Remove
                      </button>
                    ) : (
                      <span class="muted small">you</span>
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
