// Runs a command inside an unpacked image the way a Kubernetes pod of the chart runs it: as uid
// and gid 1000, on a read-only root filesystem, with an empty writable /tmp (the chart's emptyDir),
// in its own mount and PID namespaces (the command is PID 1 there), sharing the host's network so
// the test reaches it on loopback. No container runtime is installed on these machines; this is
// unshare(1) and chroot(1) from util-linux and coreutils, as root.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

const SETUP = `set -e
R=$1; shift
mount --make-rprivate /
mount --bind "$R" "$R"
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/tmp"
while [ "$1" != "--" ]; do mount --bind "\${1%%=*}" "$R\${1#*=}"; mount -o remount,bind,ro "$R\${1#*=}"; shift; done
shift
mount -o remount,bind,ro "$R"
exec chroot --userspec=1000:1000 "$R" "$@"`;

export interface InImage {
  child: ChildProcess;
  /** The host PID of the command (PID 1 of its namespace), once it is running. */
  pid(): number | undefined;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `argv` runs in `workdir` with exactly `env` (nothing inherited from the test). `binds` maps host
 * folders to paths inside the image, mounted read-only (a kubeconfig, say).
 */
export function runInImage(rootfs: string, argv: string[], opts: { env: Record<string, string>; workdir: string; binds?: Record<string, string> }): InImage {
  const binds = Object.entries(opts.binds ?? {}).map(([host, inside]) => `${host}=${inside}`);
  const env = Object.entries(opts.env).map(([k, v]) => `${k}=${v}`);
  const child = spawn('unshare', ['--mount', '--pid', '--fork', '--kill-child=SIGKILL', '--', 'sh', '-c', SETUP, 'sh', rootfs, ...binds, '--', '/usr/bin/env', '-i', '-C', opts.workdir, ...env, ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = () => {
    if (child.pid === undefined) return undefined;
    const out = spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).stdout.trim();
    return out ? Number(out.split('\n')[0]) : undefined;
  };
  return {
    child,
    pid,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const inner = pid();
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      if (inner) process.kill(inner, signal);
      else child.kill('SIGKILL');
      return exited;
    },
  };
}

/** Runs to completion; stdout, stderr and the exit code. */
export async function execInImage(rootfs: string, argv: string[], opts: Parameters<typeof runInImage>[2]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { child } = runInImage(rootfs, argv, opts);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, stdout, stderr };
}
