/** `text` (a script) with the characters beyond ASCII in its comments written as escapes. */
export function asciiComments(text: string): string;
