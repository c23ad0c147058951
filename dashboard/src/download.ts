/**
 * Downloads a report as CSV: the same operation with `Accept: text/csv` (every list and report of
 * the API answers CSV), fetched with the session and saved under `name`.
 */
export async function downloadCsv(url: string, name: string): Promise<string | null> {
  const res = await fetch(url, { headers: { accept: 'text/csv' }, credentials: 'same-origin' });
  if (!res.ok) return `The export failed (${res.status}).`;
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await res.blob());
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  return null;
}
