// Text from users and clients, on its way into PostgreSQL. A text column cannot hold U+0000, so a
// NUL that reached a query would fail it (a 500, or a whole batch of someone else's rows): input
// with one is refused at the boundary, and what is only logged is cleaned instead.
import { ApiError } from '../errors.ts';

/* eslint-disable no-control-regex -- control characters are what these patterns are for */
/** C0 controls, DEL and C1 controls. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
const CONTROLS = new RegExp(CONTROL.source, 'gu');
/** The same but tab, line feed and carriage return. */
const CONTROL_BUT_LAYOUT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;
/* eslint-enable no-control-regex */

/**
 * Where in a parsed JSON value (strings and object keys, at any depth) a U+0000 is, as a
 * dotted path ('' for the value itself), or undefined when there is none. Walked with an explicit
 * stack, so a deeply nested body cannot overflow the call stack; the path is only spelled out
 * for a NUL found.
 */
export function nulPath(value: unknown): string | undefined {
  type Frame = { value: unknown; key: string | number | undefined; parent: Frame | undefined };
  const pathOf = (frame: Frame | undefined, last?: string): string => {
    const keys: (string | number)[] = last === undefined ? [] : [last];
    for (let f = frame; f?.key !== undefined; f = f.parent) keys.unshift(f.key);
    return keys.join('.');
  };
  const stack: Frame[] = [{ value, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return pathOf(frame);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: frame });
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, child] of Object.entries(v)) {
        if (k.includes('\u0000')) return pathOf(frame, k);
        stack.push({ value: child, key: k, parent: frame });
      }
    }
  }
  return undefined;
}

/** 400 INVALID_PARAMS naming the field when a NUL is anywhere in the value. */
export function refuseNul(value: unknown): void {
  const path = nulPath(value);
  if (path === undefined) return;
  throw new ApiError('INVALID_PARAMS', 'Text may not contain the NUL character (U+0000).', {
    issues: [{ path, message: 'contains the NUL character (U+0000)' }],
  });
}

/**
 * True when the text has a control character: any at all for one line (a name), or any but tab,
 * line feed and carriage return for free text (a description, a note).
 */
export function hasControlCharacters(text: string, kind: 'line' | 'text'): boolean {
  return (kind === 'line' ? CONTROL : CONTROL_BUT_LAYOUT).test(text);
}

/**
 * 400 INVALID_PARAMS naming each of the given fields of a body that is a string with a control
 * character its kind does not allow (what is not a string is left to the body's schema).
 */
export function refuseControlCharacters(body: unknown, fields: Record<string, 'line' | 'text'>): void {
  if (typeof body !== 'object' || body === null) return;
  const issues = Object.entries(fields)
    .filter(([field, kind]) => {
      const value = (body as Record<string, unknown>)[field];
      return typeof value === 'string' && hasControlCharacters(value, kind);
    })
    .map(([field, kind]) => ({ path: field, message: kind === 'line' ? 'contains a control character' : 'contains a control character other than tab or a line break' }));
  if (issues.length > 0) throw new ApiError('INVALID_PARAMS', 'The request fields are invalid.', { issues });
}

/**
 * A value fit for a log column: each control character becomes U+FFFD (so none reaches a terminal
 * or a CSV, and the row still shows something was there), and text longer than `max` code points
 * (PostgreSQL's char_length) is cut to `max`, its last one an ellipsis.
 */
export function logText(text: string, max: number): string {
  const clean = text.replace(CONTROLS, '\ufffd');
  // Most values are short ASCII; count code points only when UTF-16 length could exceed max.
  if (clean.length <= max) return clean;
  const points = Array.from(clean);
  if (points.length <= max) return clean;
  return `${points.slice(0, max - 1).join('')}…`;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text or an attribute value in HTML the server writes. */
export const escapeHtml = (value: string | number): string => String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
