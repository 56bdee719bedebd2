// The database schema as text, read from PostgreSQL's catalogs: what the migrations produce, in a
// stable order, so a reader sees every table, constraint, index and function in one checked file
// (server/db/schema.sql; test/db/schema.test.ts keeps it equal to a freshly migrated database).
import type pg from 'pg';

type Queryable = Pick<pg.Pool, 'query'>;

export async function dumpSchema(db: Queryable, schema = 'public'): Promise<string> {
  const out: string[] = ['-- Generated from a freshly migrated database; do not edit (see server/db/schema.ts).', ''];

  const tables = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
    [schema],
  );
  for (const { name } of tables.rows) {
    const columns = await db.query<{ name: string; type: string; notnull: boolean; def: string | null }>(
      `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
              pg_get_expr(d.adbin, d.adrelid) AS def
         FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = ($1 || '.' || quote_ident($2))::regclass AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attnum`,
      [schema, name],
    );
    // NOT NULL shows on the column (PostgreSQL 18 also lists it as a constraint of kind 'n').
    const constraints = await db.query<{ name: string; def: string }>(
      `SELECT conname AS name, pg_get_constraintdef(oid, true) AS def FROM pg_constraint
        WHERE conrelid = ($1 || '.' || quote_ident($2))::regclass AND contype <> 'n' ORDER BY contype, conname`,
      [schema, name],
    );
    const lines = [
      ...columns.rows.map((c) => `  ${c.name} ${c.type}${c.notnull ? ' NOT NULL' : ''}${c.def !== null ? ` DEFAULT ${c.def}` : ''}`),
      ...constraints.rows.map((c) => `  CONSTRAINT ${c.name} ${c.def}`),
    ];
    out.push(`CREATE TABLE ${name} (`, lines.join(',\n'), ');', '');
  }

  const indexes = await db.query<{ def: string }>(
    `SELECT indexdef AS def FROM pg_indexes i
      WHERE schemaname = $1
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.connamespace = $1::regnamespace)
      ORDER BY tablename, indexname`,
    [schema],
  );
  for (const { def } of indexes.rows) out.push(`${def};`);
  if (indexes.rows.length) out.push('');

  const views = await db.query<{ name: string; def: string }>(
    `SELECT viewname AS name, definition AS def FROM pg_views WHERE schemaname = $1 ORDER BY viewname`,
    [schema],
  );
  for (const v of views.rows) out.push(`CREATE VIEW ${v.name} AS\n${v.def.trim()}`, '');

  const functions = await db.query<{ def: string }>(
    `SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)`,
    [schema],
  );
  for (const { def } of functions.rows) out.push(`${def.trim()};`, '');

  const triggers = await db.query<{ def: string }>(
    `SELECT pg_get_triggerdef(t.oid) AS def FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY c.relname, t.tgname`,
    [schema],
  );
  for (const { def } of triggers.rows) out.push(`${def};`);

  return `${out.join('\n').trimEnd()}\n`;
}
