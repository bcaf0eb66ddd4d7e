#!/usr/bin/env bash
# The cost of `crds` in a build (issue 33): the `app!` macro alone (`dsl/benches/expand.rs`) on four apps —
# no CRD; the HTTPRoute CRD (343 kB) and one HTTPRoute; four vendored CRDs of tests/crds (483 kB) and an
# HTTPRoute and a ServiceMonitor; the HTTPRoute CRD and 200 HTTPRoutes — with the macro built as `cargo
# build` builds it (`--profile dev`) and optimized (`bench`). CARGO_MANIFEST_DIR is dsl/ when the bench
# runs, so the apps name `../tests/crds/`.
# Usage: bash benches/scripts/crd-parse.sh [RUNS]
set -euo pipefail
runs=${1:-10}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" <<'PY'
import sys
out = sys.argv[1]
img = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d"
base = f'    app shop;\n    deployment api {{ image: "{img}", ports: {{ http: 8080 }} }}\n    service api -> api {{ port: 80 => http }}\n'
route = ('    resource gateway.networking.k8s.io/v1/HTTPRoute web{0} {{ spec: {{ parentRefs: [{{ name: "public", namespace: "infra" }}], '
         'hostnames: ["s{0}.example.com"], rules: [{{ matches: [{{ path: {{ type: "PathPrefix", value: "/" }} }}], '
         'backendRefs: [{{ name: "api", port: 80 }}] }}] }} }}\n')
one_file = '    crds "../tests/crds/gateway.networking.k8s.io_httproutes.yaml";\n'
apps = {
    "none": base,
    "route_one": base + one_file + route.format(0),
    # The four CRDs the figures were first taken with (tests/crds/ has more since), named one by one.
    "all4_one": base + "".join(f'    crds "../tests/crds/{f}.yaml";\n' for f in (
            "cert-manager.io_certificates", "gateway.networking.k8s.io_gatewayclasses",
            "gateway.networking.k8s.io_httproutes", "monitoring.coreos.com_servicemonitors")) + route.format(0)
        + '    resource ServiceMonitor api { spec: { selector: {}, endpoints: [{ port: "http" }] } }\n',
    "route_200": base + one_file + "".join(route.format(i) for i in range(200)),
}
for name, body in apps.items():
    open(f"{out}/{name}.rs", "w").write("piceli::app! {\n" + body + "}\n")
PY
for profile in dev bench; do
  for app in none route_one all4_one route_200; do
    printf '%s ' "$profile"
    cargo bench -q --profile "$profile" -p piceli-dsl --bench expand -- "$dir/$app.rs" "$runs" 2>&1 | grep runs
  done
done
