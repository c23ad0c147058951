import { useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, problemOf } from '../api.ts';
import { Field, FormError } from '../components/field.tsx';
import { signedIn } from '../session.ts';

type LinkInfo = NonNullable<Awaited<ReturnType<typeof inspect>>['data']>;
const inspect = (token: string) => api.POST('/dashboard/v1/account_links/inspect', { body: { token } });

/** The token of a mailed link is in the fragment (#token=…): the browser never sends it anywhere. */
function tokenOfLocation(): string {
  return new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
}

/**
 * An invitation or a reset link: the person chooses a password (and, invited, their name) and is
 * signed in.
 */
export function UseLink({ purpose }: { purpose: 'invite' | 'reset' }) {
  const [, navigate] = useLocation();
  const [token] = useState(tokenOfLocation);
  const [info, setInfo] = useState<LinkInfo | null | undefined>(undefined);
  const [firstName, setFirstName] = useState('');
  const [lastName, setLastName] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!token) return setInfo(null);
    // Out of the address bar and the history once read.
    history.replaceState(null, '', location.pathname);
    void inspect(token).then(({ data }) => {
      setInfo(data ?? null);
      if (data) {
        setFirstName(data.first_name);
        setLastName(data.last_name);
      }
    });
  }, [token]);

  async function submit(event: Event) {
    event.preventDefault();
    if (password !== confirm) return setFields({ confirm: 'does not match the password' });
    setBusy(true);
    setFields({});
    setProblem(null);
    const names = purpose === 'invite' ? { first_name: firstName, last_name: lastName } : {};
    const { data, error } = await api.POST('/dashboard/v1/account_links/use', { body: { token, password, ...names } });
    setBusy(false);
    if (data) {
      signedIn(data);
      navigate('/', { replace: true });
      return;
    }
    const p = problemOf(error);
    setFields(p.fields);
    setProblem(Object.keys(p.fields).length ? null : p.message);
  }

  if (info === undefined) return <main class="auth" aria-busy="true" />;
  if (info === null) {
    return (
      <main class="auth">
        <div class="card auth__card">
          <h1>This link does not work</h1>
          <p>It was used already or it expired. Ask for a new {purpose === 'invite' ? 'invitation' : 'reset link'}.</p>
          <p>
            <Link href="/sign-in">Sign in</Link> · <Link href="/reset">Reset your password</Link>
          </p>
        </div>
      </main>
    );
  }
  return (
    <main class="auth">
      <form class="card auth__card" onSubmit={submit}>
        <h1>{purpose === 'invite' ? `Join ${info.organization.name}` : 'Choose a new password'}</h1>
        <p class="muted">{info.email}</p>
        <FormError message={problem} />
        {purpose === 'invite' ? (
          <div class="field-row">
            <Field
              label="First name"
              autocomplete="given-name"
              value={firstName}
              error={fields.first_name}
              onInput={(e) => setFirstName(e.currentTarget.value)}
            />
            <Field label="Last name" autocomplete="family-name" value={lastName} error={fields.last_name} onInput={(e) => setLastName(e.currentTarget.value)} />
          </div>
        ) : null}
        <Field
          label="Password"
          type="password"
          autocomplete="new-password"
          required
          hint="At least 10 characters."
          value={password}
          error={fields.password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <Field
          label="Password again"
          type="password"
          autocomplete="new-password"
          required
          value={confirm}
          error={fields.confirm}
          onInput={(e) => setConfirm(e.currentTarget.value)}
        />
        <button class="button button--primary" type="submit" disabled={busy}>
          {purpose === 'invite' ? 'Set password and sign in' : 'Save and sign in'}
        </button>
      </form>
    </main>
  );
}
