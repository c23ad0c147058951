/** Newer and older pages of a list read newest first. */
export function Pager({ page, pages, onPage }: { page: number; pages: number; onPage: (page: number) => void }) {
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button class="button" type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Newer
      </button>
      <span>
        Page {page} of {pages}
      </span>
      <button class="button" type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Older
      </button>
    </nav>
  );
}
