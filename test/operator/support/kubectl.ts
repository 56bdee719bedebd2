// Runs the real kubectl 1.35 (.tools/kubectl) against a stand-in API server through a kubeconfig
// pointing at http://127.0.0.1:<port>, the way an SRE would drive a cluster.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './crd-schema.ts';

const run = promisify(execFile);
export const KUBECTL = path.join(ROOT, '.tools/kubectl');

/** With a token: requests as that ServiceAccount (StandInApiServer.tokenFor), RBAC enforced. */
export function writeKubeconfig(serverUrl: string, namespace = 'default', token?: string): { file: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cryptomcp-kube-'));
  const file = path.join(dir, 'config');
  fs.writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: standin`,
      '  cluster:',
      `    server: ${serverUrl}`,
      // @kubernetes/client-node refuses plain HTTP unless TLS verification is off explicitly.
      '    insecure-skip-tls-verify: true',
      'users:',
      '- name: sre',
      token ? `  user: { token: ${token} }` : '  user: {}',
      'contexts:',
      '- name: standin',
      '  context:',
      '    cluster: standin',
      '    user: sre',
      `    namespace: ${namespace}`,
      'current-context: standin',
      '',
    ].join('\n'),
  );
  return { file, dir };
}

export function kubectl(kubeconfig: string) {
  const cacheDir = path.join(path.dirname(kubeconfig), 'cache');
  return async (...args: string[]): Promise<{ stdout: string; stderr: string }> => {
    try {
      return await run(KUBECTL, ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, '--request-timeout=20s', ...args], { timeout: 60_000 });
    } catch (err) {
      const e = err as Error & { stdout?: string; stderr?: string };
      throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr ?? ''}${e.stdout ?? ''}${e.message}`, { cause: err });
    }
  };
}
