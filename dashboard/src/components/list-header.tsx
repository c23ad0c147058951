/** A list page's title and its search by name (a change of the search goes back to the first page). */
export function ListHeader({ title, what, query, onSearch }: { title: string; what: string; query: string; onSearch: (query: string) => void }) {
  return (
    <header class="page__header">
      <h1>{title}</h1>
      <input
        class="search"
        type="search"
        placeholder="Search by name"
        aria-label={`Search ${what} by name`}
        value={query}
        onInput={(e) => onSearch(e.currentTarget.value)}
      />
    </header>
  );
}
