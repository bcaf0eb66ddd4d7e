#!/usr/bin/env bash
# The compile time of an app crate with 200 custom resources (issue 33's 2× goal): the same Deployment,
# Service and 200 HTTPRoutes written as `resource gateway.networking.k8s.io/v1/HTTPRoute` items over the
# vendored HTTPRoute CRD (`crds "crds/";`, the file copied into the crate), against the same objects
# `include yaml("k8s/routes.yaml");`d. Each crate is built once (the dependencies: piceli's crates as path
# dependencies of a crate outside the workspace compile once for both), its two `render -o json` are
# compared (the same objects), then RUNS rebuilds of each, alternating: `touch src/main.rs; cargo build`
# (the dev profile, the workspace's dev settings), incremental and with CARGO_INCREMENTAL=0, wall time of
# each, after one untimed build per series. Prints every run and the medians.
#
#   bash benches/scripts/crd-compile.sh [RUNS]        RUNS defaults to 5
#
# The crates sit under $CARGO_TARGET_DIR/tmp/crd-compile/ (inside the tree, so .cargo/config.toml
# applies) and build in $CARGO_TARGET_DIR (default: target/), rewritten each run.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
RUNS="${1:-5}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_TARGET_DIR="$TARGET"
BASE="$TARGET/tmp/crd-compile"
rm -rf "$BASE"
mkdir -p "$BASE"
python3 - "$BASE" "$ROOT" <<'PY'
import os, sys
base, root = sys.argv[1], sys.argv[2]
img = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d"
head = (f'    app shop;\n    target local = local(namespace: "shop");\n'
        f'    deployment api {{ image: "{img}", ports: {{ http: 8080 }} }}\n'
        f'    service api -> api {{ port: 80 => http }}\n')
route = ('    resource gateway.networking.k8s.io/v1/HTTPRoute web{0} {{ spec: {{ parentRefs: [{{ name: "public", namespace: "infra" }}], '
         'hostnames: ["s{0}.example.com"], rules: [{{ matches: [{{ path: {{ type: "PathPrefix", value: "/" }} }}], '
         'backendRefs: [{{ name: "api", port: 80 }}] }}] }} }}\n')
yaml = ('---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: web{0}\nspec:\n'
        '  parentRefs:\n  - name: public\n    namespace: infra\n  hostnames:\n  - s{0}.example.com\n  rules:\n'
        '  - matches:\n    - path:\n        type: PathPrefix\n        value: /\n    backendRefs:\n    - name: api\n      port: 80\n')
toml = open(f"{root}/Cargo.toml").read()
profile = toml[toml.index("[profile.dev]"):toml.index("[lints]")]
main = lambda body: "piceli::app! {\n" + body + "}\n\nfn main() -> std::process::ExitCode {\n    shop::main()\n}\n"
for name, body in {
    "resource": head + '    crds "crds/";\n' + "".join(route.format(i) for i in range(200)),
    "include": head + '    include yaml("k8s/routes.yaml");\n',
}.items():
    d = f"{base}/{name}"
    os.makedirs(f"{d}/src"); os.makedirs(f"{d}/crds"); os.makedirs(f"{d}/k8s")
    open(f"{d}/Cargo.toml", "w").write(
        f'[package]\nname = "crd-compile-{name}"\nversion = "0.1.0"\nedition = "2024"\npublish = false\n\n'
        f'[dependencies]\npiceli = {{ path = "{root}" }}\n\n{profile}\n[workspace]\n')
    open(f"{d}/src/main.rs", "w").write(main(body))
    if name == "resource":
        open(f"{d}/crds/httproutes.yaml", "w").write(
            open(f"{root}/tests/crds/gateway.networking.k8s.io_httproutes.yaml").read())
    else:
        open(f"{d}/k8s/routes.yaml", "w").write("".join(yaml.format(i) for i in range(200)))
PY
for app in resource include; do
  cp "$ROOT/Cargo.lock" "$BASE/$app/Cargo.lock"
  echo "crd-compile: first build of $app" >&2
  (cd "$BASE/$app" && cargo build -q --offline)
done
# The same objects either way (the labels and annotation Piceli adds are the same too).
"$TARGET/debug/crd-compile-resource" render -o json >"$BASE/resource.json"
"$TARGET/debug/crd-compile-include" render -o json >"$BASE/include.json"
python3 - "$BASE" <<'PY'
import json, sys
base = sys.argv[1]
def objects(f):
    items = json.load(open(f"{base}/{f}.json"))["items"]
    return sorted((json.dumps(o, sort_keys=True) for o in items))
r, i = objects("resource"), objects("include")
routes = sum(1 for o in r if json.loads(o)["kind"] == "HTTPRoute")
assert routes == 200, routes
assert r == i, "the two apps render different objects"
print(f"crd-compile: both render the same {len(r)} objects ({routes} HTTPRoutes)", file=sys.stderr)
PY
# Two series: incremental (cargo's dev default: a touch reuses the codegen the query system can keep) and
# CARGO_INCREMENTAL=0 (the whole app crate compiled again, as after an edit that changes its code).
declare -A times
for mode in incremental full; do
  # One untimed build of each first: switching CARGO_INCREMENTAL rebuilds more than the app once.
  for app in resource include; do
    touch "$BASE/$app/src/main.rs"
    if [ "$mode" = full ]; then
      (cd "$BASE/$app" && CARGO_INCREMENTAL=0 cargo build -q --offline)
    else
      (cd "$BASE/$app" && cargo build -q --offline)
    fi
  done
  for run in $(seq 1 "$RUNS"); do
    for app in resource include; do
      touch "$BASE/$app/src/main.rs"
      start=$(date +%s.%N)
      if [ "$mode" = full ]; then
        (cd "$BASE/$app" && CARGO_INCREMENTAL=0 cargo build -q --offline)
      else
        (cd "$BASE/$app" && cargo build -q --offline)
      fi
      end=$(date +%s.%N)
      t=$(echo "$end - $start" | bc)
      times[$mode.$app]="${times[$mode.$app]:-} $t"
      printf '%s %s run %d: %.2f s\n' "$mode" "$app" "$run" "$t"
    done
  done
done
for key in incremental.resource incremental.include full.resource full.include; do
  printf '%s median: ' "$key"
  printf '%s\n' ${times[$key]} | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.2f s (of %d: %.2f to %.2f)\n", m, NR, a[1], a[NR]}'
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
