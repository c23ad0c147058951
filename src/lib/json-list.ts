/** A string list stored as JSON text; anything unreadable reads as empty. */
export function parseStringList(text: string): string[] {
  try {
    const value = JSON.parse(text);
    return Array.isArray(value) ? value.map(String) : [];
  } catch {
    return [];
  }
}
