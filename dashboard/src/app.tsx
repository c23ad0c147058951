import { useEffect } from 'preact/hooks';
import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter-preact';
import { Analytics, PlayerAnalytics } from './pages/analytics.tsx';
import { Defaults } from './pages/defaults.tsx';
import { HubPage, Hubs } from './pages/hubs.tsx';
import { UseLink } from './pages/link.tsx';
import { LiveStreamPage, LiveStreams } from './pages/live.tsx';
import { Library } from './pages/library.tsx';
import { Organization } from './pages/organization.tsx';
import { PlayerPage } from './pages/player.tsx';
import { Players } from './pages/players.tsx';
import { Reset } from './pages/reset.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { Timeline } from './pages/timeline.tsx';
import { Users } from './pages/users.tsx';
import { loadSession, session, signOut } from './session.ts';

/** The pages of a signed-in person, under the bar that says who and where. */
function SignedIn() {
  const s = session.value!;
  const [location] = useLocation();
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="bar">
        <Link class="bar__brand" href="/">
          Reelbase
        </Link>
        <nav class="bar__nav" aria-label="Sections">
          <Link href="/" aria-current={location === '/' ? 'page' : undefined}>
            Library
          </Link>
          <Link href="/players" aria-current={location.startsWith('/players') ? 'page' : undefined}>
            Players
          </Link>
          <Link href="/live" aria-current={location.startsWith('/live') ? 'page' : undefined}>
            Live
          </Link>
          <Link href="/hubs" aria-current={location.startsWith('/hubs') ? 'page' : undefined}>
            Hubs
          </Link>
          <Link href="/analytics" aria-current={location === '/analytics' ? 'page' : undefined}>
            Analytics
          </Link>
          <Link href="/people" aria-current={location === '/people' ? 'page' : undefined}>
            People
          </Link>
          <Link href="/organization" aria-current={location === '/organization' ? 'page' : undefined}>
            Organization
          </Link>
        </nav>
        <div class="bar__who">
          <span>
            {s.user.first_name || s.user.email} · {s.organization.name} · <span class="muted">{s.user.role}</span>
          </span>
          <button class="button button--quiet" type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Switch>
          <Route path="/" component={Library} />
          <Route path="/players" component={Players} />
          <Route path="/people" component={Users} />
          <Route path="/organization" component={Organization} />
          <Route path="/analytics" component={Analytics} />
          <Route path="/live" component={LiveStreams} />
          <Route path="/hubs" component={Hubs} />
          <Route path="/hubs/:id">{(params: { id: string }) => <HubPage key={params.id} id={Number(params.id)} />}</Route>
          <Route path="/live/:id">{(params: { id: string }) => <LiveStreamPage key={params.id} id={Number(params.id)} />}</Route>
          <Route path="/players/defaults" component={Defaults} />
          <Route path="/players/:id/analytics">{(params: { id: string }) => <PlayerAnalytics key={params.id} id={Number(params.id)} />}</Route>
          <Route path="/players/:pid/chapters/:cid">
            {(params: { pid: string; cid: string }) => <Timeline key={params.cid} playerId={Number(params.pid)} chapterId={Number(params.cid)} />}
          </Route>
          <Route path="/players/:id">{(params: { id: string }) => <PlayerPage key={params.id} id={Number(params.id)} />}</Route>
          <Route>
            <section class="page">
              <h1>Not found</h1>
              <p>
                <Link href="/">Back to the library</Link>
              </p>
            </section>
          </Route>
        </Switch>
      </main>
    </div>
  );
}

export function App() {
  useEffect(() => {
    void loadSession();
  }, []);
  const s = session.value;
  return (
    <Router base="/app">
      <Switch>
        <Route path="/invitation">{() => <UseLink purpose="invite" />}</Route>
        <Route path="/reset" component={Reset} />
        <Route path="/sign-in">{() => (s ? <Redirect to="/" replace /> : <SignIn />)}</Route>
        <Route>{() => (s === undefined ? <div class="loading" aria-busy="true" /> : s === null ? <Redirect to="/sign-in" replace /> : <SignedIn />)}</Route>
      </Switch>
    </Router>
  );
}
