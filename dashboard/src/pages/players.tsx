import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, problemOf } from '../api.ts';
import { PlayerPoster } from '../components/poster.tsx';
import { ListHeader } from '../components/list-header.tsx';
import { Pager } from '../components/pager.tsx';
import { FormError } from '../components/field.tsx';
import { date } from '../format.ts';
import type { paths } from '../openapi.d.ts';
import { newestFirst, type Listed } from '../paging.ts';
import { mayWrite, session } from '../session.ts';

export type Player = paths['/dashboard/v1/players/{id}']['get']['responses'][200]['content']['application/json'];

const PER_PAGE = 50;

function newestPlayers(query: string, page: number): Promise<Listed<Player>> {
  const q = query.trim() || undefined;
  return newestFirst(PER_PAGE, page, async (per_page, p) => {
    const { data, error } = await api.GET('/dashboard/v1/players', { params: { query: { per_page, page: p, query: q } } });
    return data && 'players' in data ? { items: data.players, count: data.summary.count } : { error: problemOf(error).message };
  });
}

/** The organization's players, newest first; a new one by name. */
export function Players() {
  const [, navigate] = useLocation();
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(1);
  const [players, setPlayers] = useState<Player[] | null>(null);
  const [count, setCount] = useState(0);
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const writable = mayWrite(session.value);

  const load = useCallback(async () => {
    const result = await newestPlayers(query, page);
    if ('error' in result) return setProblem(result.error);
    setPlayers(result.items);
    setCount(result.count);
  }, [query, page]);
  useEffect(() => void load(), [load]);

  async function create(event: Event) {
    event.preventDefault();
    const { data, error } = await api.POST('/dashboard/v1/players', { body: { name } });
    if (data) navigate(`/players/${data.id}`);
    else setProblem(problemOf(error).message);
  }

  const pages = Math.max(1, Math.ceil(count / PER_PAGE));
  return (
    <section class="page">
      <ListHeader
        title="Players"
        what="players"
        query={query}
        onSearch={(q) => {
          setQuery(q);
          setPage(1);
        }}
      />
      {writable ? (
        <form class="inline-form" onSubmit={create}>
          <label for="new-player">New player</label>
          <input id="new-player" required maxLength={255} placeholder="Name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <button class="button button--primary" type="submit">
            Create
          </button>
        </form>
      ) : null}
      <p class="small">
        <Link href="/players/defaults">Default CTAs</Link> <span class="muted">are shown on every player.</span>
      </p>
      <FormError message={problem} />
      {players === null ? (
        <p aria-busy="true">Loading…</p>
      ) : players.length === 0 ? (
        <p class="empty">{query ? 'No player has a name starting with that.' : 'No players yet.'}</p>
      ) : (
        <table class="table">
          <caption class="visually-hidden">Players, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Chapters</th>
              <th scope="col">Added</th>
            </tr>
          </thead>
          <tbody>
            {players.map((p) => (
              <tr key={p.id}>
                <td class="named">
                  <PlayerPoster id={p.id} />
                  <Link href={`/players/${p.id}`}>{p.name}</Link>
                </td>
                <td>{p.chapters_attributes.length}</td>
                <td>{date(p.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager page={page} pages={pages} onPage={setPage} />
    </section>
  );
}
