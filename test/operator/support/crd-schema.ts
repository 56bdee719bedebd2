// Validates objects against a CRD's openAPIV3Schema the way the API server does, as far as this
// machine allows: defaults applied first, then the JSON-schema checks (Ajv), then every
// x-kubernetes-validations CEL rule (cel-js) on the defaulted object, with oldSelf for transition
// rules on updates. Not modelled: CEL cost limits, the Kubernetes CEL library extensions the
// rules here do not use (quantity(), url(), ...), and format checks beyond Ajv's.
import fs from 'node:fs';
import path from 'node:path';
import { evaluate } from '@marcbachmann/cel-js';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import YAML from 'yaml';

export const ROOT = path.resolve(import.meta.dirname, '../../..');
export const CRD_DIR = path.join(ROOT, 'crds');

export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  anyOf?: Schema[];
  default?: unknown;
  'x-kubernetes-validations'?: { rule: string; message?: string }[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  [key: string]: unknown;
}

export interface Crd {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { kind: string; plural: string; shortNames?: string[] };
    versions: { name: string; schema: { openAPIV3Schema: Schema }; additionalPrinterColumns?: { name: string; jsonPath: string }[]; subresources?: { status?: object } }[];
  };
}

export function loadCrd(file: string): Crd {
  return YAML.parse(fs.readFileSync(path.join(CRD_DIR, file), 'utf8')) as Crd;
}

export function loadYaml(file: string): Record<string, unknown> {
  return YAML.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** One compiled validator per CRD: compiling takes milliseconds, and every write is validated. */
const compiled = new WeakMap<Crd, ReturnType<Ajv['compile']>>();

/** Errors as "path: message"; empty when the API server would accept the object. */
export function validate(crd: Crd, object: unknown, oldObject?: unknown): string[] {
  const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
  // Ajv's useDefaults mutates, like the API server's defaulting; work on a copy.
  const obj = structuredClone(object);
  let check = compiled.get(crd);
  if (!check) compiled.set(crd, (check = addFormats(new Ajv({ strict: false, allErrors: true, useDefaults: true })).compile(schema)));
  const errors: string[] = [];
  if (!check(obj)) {
    for (const e of check.errors ?? []) errors.push(`${e.instancePath || '/'}: ${e.message ?? 'invalid'}`);
    return errors;
  }
  runCel(schema, obj, oldObject, '', errors);
  return errors;
}

function runCel(schema: Schema, value: unknown, old: unknown, at: string, errors: string[]): void {
  if (value === undefined) return;
  for (const v of schema['x-kubernetes-validations'] ?? []) {
    const transition = /\boldSelf\b/.test(v.rule);
    if (transition && old === undefined) continue;
    let ok: unknown;
    try {
      ok = evaluate(v.rule, { self: toCel(value), oldSelf: toCel(old) });
    } catch (err) {
      errors.push(`${at || '/'}: rule ${v.rule} failed to evaluate: ${(err as Error).message}`);
      continue;
    }
    if (ok !== true) errors.push(`${at || '/'}: ${v.message ?? v.rule}`);
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const rec = value as Record<string, unknown>;
    const oldRec = old && typeof old === 'object' ? (old as Record<string, unknown>) : undefined;
    for (const [key, child] of Object.entries(rec)) {
      const sub = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (sub) runCel(sub, child, oldRec?.[key], `${at}/${key}`, errors);
    }
  } else if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => runCel(schema.items!, item, undefined, `${at}/${i}`, errors));
  }
}

/** CEL integers are int64: JSON integers become bigints so `self.a <= self.b` compares ints. */
function toCel(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return value.map(toCel);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  return value;
}

/**
 * The structural-schema rules the API server enforces on CRDs (apiextensions "structural
 * schema"): every node has a type unless it is int-or-string or preserves unknown fields, and no
 * $ref. Returns the paths that break them.
 */
export function structuralProblems(schema: Schema, at = ''): string[] {
  const problems: string[] = [];
  if ('$ref' in schema) problems.push(`${at}: $ref is not allowed`);
  const typed = schema.type !== undefined || schema['x-kubernetes-int-or-string'] === true || schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (!typed) problems.push(`${at || '/'}: no type`);
  for (const [k, s] of Object.entries(schema.properties ?? {})) problems.push(...structuralProblems(s, `${at}/${k}`));
  if (typeof schema.additionalProperties === 'object') problems.push(...structuralProblems(schema.additionalProperties, `${at}/*`));
  if (schema.items) problems.push(...structuralProblems(schema.items, `${at}[]`));
  return problems;
}
