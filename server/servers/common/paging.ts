// Cursor paging for list results (DESIGN.md §4: limit default 20, max 100, and a cursor).
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import type { PageShare } from '../../mcp/tool.ts';

export const limitSchema = z.number().int().min(1).max(100).default(20).describe('Items per page.');
export const cursorSchema = z.string().max(200).optional().describe('next_cursor from the previous page.');

export function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o?: unknown };
    if (typeof parsed.o === 'number' && Number.isInteger(parsed.o) && parsed.o >= 0) return parsed.o;
  } catch {
    // fall through
  }
  throw new ApiError('INVALID_PARAMS', 'The cursor is not one this service issued.', {
    issues: [{ path: 'cursor', message: 'invalid cursor' }],
  });
}

/** Characters of list items one answer carries, below the gateway's cap of about 40,000 for the whole result. */
export const ANSWER_ITEM_CHARS = 30_000;

export interface Page<T> {
  items: T[];
  next_cursor?: string;
  /** True when the page stopped before `limit` items to fit the answer's size. */
  truncated: boolean;
  /** What the page holds of what was asked: the tool returns it as its output's `page`, which prices the answer. */
  share: PageShare;
}

/**
 * A page of at most `limit` items that also fits ANSWER_ITEM_CHARS (at least one item), with a
 * cursor to the first item left out: the gateway then never has to cut a page, which would drop
 * the items between its cut and the cursor.
 */
export function page<T>(items: readonly T[], limit: number, cursor: string | undefined, maxChars = ANSWER_ITEM_CHARS): Page<T> {
  const offset = decodeCursor(cursor);
  const out: T[] = [];
  let chars = 0;
  for (const item of items.slice(offset, offset + limit)) {
    chars += JSON.stringify(item).length + 1;
    if (out.length > 0 && chars > maxChars) break;
    out.push(item);
  }
  const next = offset + out.length;
  const truncated = out.length < Math.min(limit, Math.max(0, items.length - offset));
  const share = { offset, held: out.length, limit, cut: truncated };
  return next < items.length ? { items: out, next_cursor: encodeCursor(next), truncated, share } : { items: out, truncated, share };
}
