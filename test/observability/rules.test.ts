// Prometheus rules (issue 6; the operator's, issue 22): for each rule file in dashboards/rules/,
// `promtool check rules` accepts it, and `promtool test rules` runs its unit tests (the
// .rules.test.yaml beside it), which must fire every alert at least once and keep every alert
// silent at least once. Every alert carries severity, summary, description and a runbook_url
// whose anchor exists in dashboards/runbook.md.
import path from 'node:path';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { PROMTOOL_BIN } from './prometheus.ts';
import { RULE_SETS, rules, RULES_FILE, RULES_TEST_FILE } from './queries.ts';

const run = promisify(execFile);

interface AlertTest {
  alertname: string;
  exp_alerts: unknown[];
}

describe.each(RULE_SETS.map((set) => ({ ...set, name: path.basename(set.rules) })))('dashboards/rules/$name', ({ rules: file, tests }) => {
  it('promtool check rules accepts the rule file', async () => {
    const { stdout } = await run(PROMTOOL_BIN, ['check', 'rules', file]);
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  // promtool evaluates every rule at each step of days of synthetic series: ~15 s here.
  it('promtool test rules passes the alert unit tests', { timeout: 180_000 }, async () => {
    const result = await run(PROMTOOL_BIN, ['test', 'rules', tests]).catch((err: { stdout?: string; stderr?: string }) => err);
    expect(`${result.stdout}${result.stderr}`).toMatch(/SUCCESS/);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/FAILED/);
  });

  it('every alert is tested firing and tested silent', () => {
    const doc = YAML.parse(fs.readFileSync(tests, 'utf8')) as { tests: { alert_rule_test?: AlertTest[] }[] };
    const cases = doc.tests.flatMap((t) => t.alert_rule_test ?? []);
    const alerts = new Set(rules(file).flatMap((r) => (r.alert ? [r.alert] : [])));
    expect(alerts.size).toBeGreaterThanOrEqual(7);
    for (const alert of alerts) {
      expect(cases.some((c) => c.alertname === alert && c.exp_alerts.length > 0), `${alert} fires in some test`).toBe(true);
      expect(cases.some((c) => c.alertname === alert && c.exp_alerts.length === 0), `${alert} stays silent in some test`).toBe(true);
    }
  });

  it('every alert has severity, summary, description and a runbook_url into runbook.md', () => {
    const runbook = fs.readFileSync(new URL('../../dashboards/runbook.md', import.meta.url), 'utf8');
    const anchors = new Set([...runbook.matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
    for (const rule of rules(file).filter((r) => r.alert)) {
      expect(['critical', 'warning'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description, rule.alert).toBeTruthy();
      const url = rule.annotations?.runbook_url ?? '';
      expect(url, rule.alert).toMatch(/^dashboards\/runbook\.md#[a-z0-9-]+$/);
      expect(anchors.has(url.split('#')[1]!), `${rule.alert}: anchor ${url} in runbook.md`).toBe(true);
    }
  });
});

describe('dashboards/rules', () => {
  it('promtool test rules fails when an expectation is wrong (the unit tests can fail)', { timeout: 60_000 }, async () => {
    const doc = YAML.parse(fs.readFileSync(RULES_TEST_FILE, 'utf8')) as { rule_files: string[]; tests: { alert_rule_test?: AlertTest[] }[] };
    // The first test (a page within minutes), expecting silence instead.
    const broken = { ...doc, rule_files: [RULES_FILE], tests: doc.tests.slice(0, 1) };
    const firing = broken.tests[0]!.alert_rule_test![0]!;
    expect(firing.exp_alerts.length).toBeGreaterThan(0);
    firing.exp_alerts = [];
    const file = `${fs.mkdtempSync('/tmp/cmcp-rules-')}/broken.test.yaml`;
    fs.writeFileSync(file, YAML.stringify(broken));
    const result = await run(PROMTOOL_BIN, ['test', 'rules', file]).then(
      (out) => ({ failed: false, output: `${out.stdout}${out.stderr}` }),
      (err: { stdout?: string; stderr?: string }) => ({ failed: true, output: `${err.stdout}${err.stderr}` }),
    );
    fs.rmSync(file.slice(0, file.lastIndexOf('/')), { recursive: true, force: true });
    expect(result.failed, result.output).toBe(true);
    expect(result.output).toMatch(/FAILED/);
  });
});
