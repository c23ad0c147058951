/**
 * Caption languages: BCP 47 tags of the common shape language[-Script][-REGION][-variant…]
 * (`en`, `en-US`, `pt-BR`, `zh-Hant-TW`, `es-419`), canonicalised (case, `_` → `-`, deprecated codes
 * such as `iw` → `he`). The primary language must be one the ICU data knows.
 */
const SHAPE = /^[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|\d{3}))?(?:-(?:[A-Za-z\d]{5,8}|\d[A-Za-z\d]{3}))*$/;

export const LANGUAGE_MAX_LENGTH = 35;

const englishNames = new Intl.DisplayNames(['en'], { type: 'language', languageDisplay: 'standard', fallback: 'none' });

/** The canonical tag, or null when `input` is not an acceptable language tag. */
export function normalizeLanguage(input: string): string | null {
  const raw = input.trim().replace(/_/g, '-');
  if (raw.length === 0 || raw.length > LANGUAGE_MAX_LENGTH || !SHAPE.test(raw)) return null;
  let tag: string;
  try {
    tag = Intl.getCanonicalLocales(raw)[0];
  } catch {
    return null;
  }
  const primary = tag.split('-')[0];
  if (englishNames.of(primary) === undefined) return null;
  return tag;
}

/** "English (United States)", "French (Canada)". */
export function formattedLanguageName(tag: string): string {
  return englishNames.of(tag) ?? tag;
}

/** The name in the language itself, first letter upper-cased for menus: "Français (Canada)", "Deutsch". */
export function localizedLanguageName(tag: string): string {
  try {
    const name = new Intl.DisplayNames([tag], { type: 'language', languageDisplay: 'standard', fallback: 'code' }).of(tag) ?? tag;
    return name.charAt(0).toLocaleUpperCase(tag) + name.slice(1);
  } catch {
    return formattedLanguageName(tag);
  }
}
