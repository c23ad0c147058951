/** Current time as integer Unix seconds, the unit of every stored timestamp. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
