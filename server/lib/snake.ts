// Answers name their fields in snake_case (DESIGN.md §3, "snake_case, as everywhere in the public
// API"); the analytics modules return camelCase TypeScript objects. snakeKeys renames an object's
// own field names, deeply, at the tool boundary, with the renamed type, so the output schema
// (written in snake_case) type-checks against it.

type SnakeName<S extends string> = S extends `${infer H}${infer T}` ? `${H extends Uppercase<H> ? (H extends Lowercase<H> ? H : `_${Lowercase<H>}`) : H}${SnakeName<T>}` : S;

export type SnakeKeys<T> = T extends readonly (infer U)[]
  ? SnakeKeys<U>[]
  : T extends object
    ? { [K in keyof T as K extends string ? SnakeName<K> : K]: SnakeKeys<T[K]> }
    : T;

export function snakeName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The value with every object's field names in snake_case (arrays and nested objects too). */
export function snakeKeys<T>(value: T): SnakeKeys<T> {
  if (Array.isArray(value)) return value.map((v: unknown) => snakeKeys(v)) as SnakeKeys<T>;
  if (value === null || typeof value !== 'object') return value as SnakeKeys<T>;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snakeName(k), snakeKeys(v)])) as SnakeKeys<T>;
}
