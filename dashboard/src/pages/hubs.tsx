import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, problemOf } from '../api.ts';
import { Field, FormError } from '../components/field.tsx';
import { useReorder } from '../components/reorder.ts';
import type { paths } from '../openapi.d.ts';
import { mayWrite, session } from '../session.ts';

type Hub = paths['/dashboard/v1/hubs/{id}']['get']['responses'][200]['content']['application/json'];
type Category = Extract<paths['/dashboard/v1/hubs/{id}/categories']['get']['responses'][200]['content']['application/json'], unknown[]>[number];
type PlayerItem = { id: number; name: string };

/** The organization's hubs: public galleries of players in categories. */
export function Hubs() {
  const [, navigate] = useLocation();
  const [hubs, setHubs] = useState<Hub[] | null>(null);
  const [name, setName] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const writable = mayWrite(session.value);

  useEffect(() => {
    void api
      .GET('/dashboard/v1/hubs')
      .then(({ data, error }) => (data ? setHubs(Array.isArray(data) ? data : data.hubs) : setProblem(problemOf(error).message)));
  }, []);

  async function create(event: Event) {
    event.preventDefault();
    setFields({});
    const { data, error } = await api.POST('/dashboard/v1/hubs', { body: { name } });
    if (data) return navigate(`/hubs/${data.id}`);
    const p = problemOf(error);
    setFields(p.fields);
    setProblem(p.message);
  }

  return (
    <section class="page">
      <header class="page__header">
        <h1>Hubs</h1>
      </header>
      {writable ? (
        <form class="inline-form" onSubmit={(e) => void create(e)}>
          <label for="new-hub">New hub</label>
          <input
            id="new-hub"
            required
            maxLength={255}
            placeholder="Name"
            value={name}
            aria-invalid={fields.name ? true : undefined}
            onInput={(e) => setName(e.currentTarget.value)}
          />
          <button class="button button--primary" type="submit">
            Create
          </button>
        </form>
      ) : null}
      <FormError message={problem} />
      {hubs === null ? (
        <p aria-busy="true">Loading…</p>
      ) : hubs.length === 0 ? (
        <p class="empty">No hubs yet.</p>
      ) : (
        <table class="table">
          <caption class="visually-hidden">Hubs</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Categories</th>
              <th scope="col">Public page</th>
            </tr>
          </thead>
          <tbody>
            {hubs.map((h) => (
              <tr key={h.id}>
                <td>
                  <Link href={`/hubs/${h.id}`}>{h.name}</Link>
                </td>
                <td>{h.category_count}</td>
                <td>{h.public ? <a href={h.url}>{new URL(h.url).pathname}</a> : <span class="muted">not public</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** A hub: its settings, its categories in order, and which players each shows. */
export function HubPage({ id }: { id: number }) {
  const [hub, setHub] = useState<Hub | null | undefined>(undefined);
  const [categories, setCategories] = useState<Category[]>([]);
  const [players, setPlayers] = useState<PlayerItem[]>([]);
  const [newCategory, setNewCategory] = useState('');
  const [adding, setAdding] = useState<Record<number, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const writable = mayWrite(session.value);

  const load = useCallback(async () => {
    const [h, c] = await Promise.all([
      api.GET('/dashboard/v1/hubs/{id}', { params: { path: { id } } }),
      api.GET('/dashboard/v1/hubs/{id}/categories', { params: { path: { id } } }),
    ]);
    setHub(h.data ?? null);
    if (c.data) setCategories(Array.isArray(c.data) ? c.data : c.data.categories);
  }, [id]);
  useEffect(() => void load(), [load]);
  useEffect(() => {
    void api.GET('/dashboard/v1/players', { params: { query: { per_page: 200 } } }).then(({ data }) => {
      if (data && 'players' in data) setPlayers(data.players.map((p) => ({ id: p.id, name: p.name })));
    });
  }, []);

  async function write(result: Promise<{ error?: unknown }>) {
    setProblem(null);
    const { error } = await result;
    if (error) setProblem(problemOf(error).message);
    await load();
  }

  /** Puts a category at another place (its button, or dropped on another category). */
  function placeCategory(categoryId: number, position: number) {
    void write(api.PATCH('/dashboard/v1/hubs/{id}/categories/{category_id}', { params: { path: { id, category_id: categoryId } }, body: { position } }));
  }
  const reorder = useReorder(writable, placeCategory);

  if (hub === undefined) return <section class="page" aria-busy="true" />;
  if (hub === null) {
    return (
      <section class="page">
        <h1>No such hub</h1>
        <Link href="/hubs">Back to the hubs</Link>
      </section>
    );
  }
  const nameOf = (pid: number) => players.find((p) => p.id === pid)?.name ?? `Player ${pid}`;
  return (
    <section class="page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <Link href="/hubs">Hubs</Link> / <span aria-current="page">{hub.name}</span>
      </nav>
      <header class="page__header">
        <h1>{hub.name}</h1>
        <span class="actions">
          {writable ? (
            <label class="check">
              <input
                type="checkbox"
                checked={hub.public}
                onChange={(e) => void write(api.PATCH('/dashboard/v1/hubs/{id}', { params: { path: { id } }, body: { public: e.currentTarget.checked } }))}
              />{' '}
              Public
            </label>
          ) : null}
          <a class="button" href={hub.url} target="_blank" rel="noopener">
            Open the public page
          </a>
        </span>
      </header>
      <FormError message={problem} />
      <p class="muted small">The public page shows the players whose videos are ready and that are released.</p>
      {categories.map((c, i) => (
        <section
          class={`card${reorder.dragged === c.id ? ' card--dragged' : ''}`}
          key={c.id}
          aria-labelledby={`category-${c.id}`}
          data-category-id={c.id}
          {...reorder.target(c.id, i)}
        >
          <div class={`card__header${writable ? ' card__header--handle' : ''}`} {...reorder.handle(c.id)}>
            <h2 id={`category-${c.id}`}>{c.name}</h2>
            {writable ? (
              <span class="actions">
                <button
                  class="button button--small"
                  type="button"
                  disabled={i === 0}
                  aria-label={`Move ${c.name} up`}
                  onClick={() => placeCategory(c.id, i - 1)}
                >
                  ↑
                </button>
                <button
                  class="button button--small button--quiet"
                  type="button"
                  aria-label={`Delete category ${c.name}`}
                  onClick={() => void write(api.DELETE('/dashboard/v1/hubs/{id}/categories/{category_id}', { params: { path: { id, category_id: c.id } } }))}
                >
                  Delete
                </button>
              </span>
            ) : null}
          </div>
          {c.player_ids.length === 0 ? <p class="muted">No players in this category.</p> : null}
          <ul class="tags">
            {c.player_ids.map((pid) => (
              <li key={pid} class="tag">
                {nameOf(pid)}
                {writable ? (
                  <button
                    type="button"
                    class="tag__remove"
                    aria-label={`Take ${nameOf(pid)} out of ${c.name}`}
                    onClick={() =>
                      void write(
                        api.PATCH('/dashboard/v1/hubs/{id}/categories/{category_id}', {
                          params: { path: { id, category_id: c.id } },
                          body: { player_ids: c.player_ids.filter((x) => x !== pid) },
                        }),
                      )
                    }
                  >
                    ×
                  </button>
                ) : null}
              </li>
            ))}
          </ul>
          {writable ? (
            <form
              class="inline-form"
              onSubmit={(e) => {
                e.preventDefault();
                const pid = Number(adding[c.id]);
                if (!pid) return;
                setAdding({ ...adding, [c.id]: '' });
                void write(
                  api.PATCH('/dashboard/v1/hubs/{id}/categories/{category_id}', {
                    params: { path: { id, category_id: c.id } },
                    body: { player_ids: [...c.player_ids, pid] },
                  }),
                );
              }}
            >
              <label for={`assign-${c.id}`}>Add a player</label>
              <select id={`assign-${c.id}`} value={adding[c.id] ?? ''} onChange={(e) => setAdding({ ...adding, [c.id]: e.currentTarget.value })}>
                <option value="">Choose…</option>
                {players
                  .filter((p) => !c.player_ids.includes(p.id))
                  .map((p) => (
                    <option key={p.id} value={String(p.id)}>
                      {p.name}
                    </option>
                  ))}
              </select>
              <button class="button" type="submit" disabled={!adding[c.id]}>
                Add
              </button>
            </form>
          ) : null}
        </section>
      ))}
      {writable ? (
        <form
          class="card inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            const name = newCategory;
            setNewCategory('');
            void write(api.POST('/dashboard/v1/hubs/{id}/categories', { params: { path: { id } }, body: { name } }));
          }}
        >
          <label for="new-category">New category</label>
          <input id="new-category" required maxLength={255} value={newCategory} onInput={(e) => setNewCategory(e.currentTarget.value)} />
          <button class="button button--primary" type="submit">
            Add category
          </button>
        </form>
      ) : null}
      <Field label="Slug" value={hub.slug} readOnly hint="The public page's address." />
    </section>
  );
}
