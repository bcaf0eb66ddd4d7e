#!/usr/bin/env bash
# A user's first build (issue 32): a `piceli new` app (and `piceli new --operator`) built against the
# packaged crates — not the checkout — beside the anchor, a bare kube-rs controller app (kube with `runtime`
# and `derive`, k8s-openapi, tokio), in the same run, one after the other, each from an empty target
# directory with the crates already fetched (cargo's download is not counted). Then the binaries' sizes and
# the edit → build → render loop of a 20-object app.
#
#   bash benches/scripts/first-build.sh [OUT]        OUT defaults to a new temporary directory
#
# Env: PICELI_BIN, a built `piceli` (default: `cargo build -p piceli-bin` of this checkout);
# FIRST_BUILD_APPS, the apps to build (default: "new operator anchor"); FIRST_BUILD_EDITS (default 5);
# FIRST_BUILD_PROFILE=release builds with `--release` (the binaries' shipped size; no edit loop then).
# Prints one line per app (wall, CPU, units, binary size) and its 10 slowest units from `--timings`; each
# app's cargo-timing.html stays under OUT.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:-$(mktemp -d /tmp/first-build.XXXXXX)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
APPS="${FIRST_BUILD_APPS:-new operator anchor}"
EDITS="${FIRST_BUILD_EDITS:-5}"
PROFILE="${FIRST_BUILD_PROFILE:-dev}"
case "$PROFILE" in
  dev) PROFILE_DIR=debug PROFILE_ARGS=() ;;
  release) PROFILE_DIR=release PROFILE_ARGS=(--release) EDITS=0 ;;
  *) printf 'first-build: FIRST_BUILD_PROFILE is dev or release, not %s\n' "$PROFILE" >&2; exit 2 ;;
esac
log() { printf 'first-build: %s\n' "$*" >&2; }

cd "$ROOT"
if [ -z "${PICELI_BIN:-}" ]; then
  cargo build -q -p piceli-bin
  PICELI_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/piceli"
fi
# The packaged crates (scripts/package.sh, without its own app builds), unpacked.
CARGO_TARGET_DIR="$OUT/pkg-target" bash scripts/package.sh --no-build
STAGE="$OUT/pkg-target/package-stage"
mkdir -p "$STAGE/crates"
for c in "$OUT"/pkg-target/package/*.crate; do tar -xzf "$c" -C "$STAGE/crates"; done
patch_section() {
  echo
  echo "# benches/scripts/first-build.sh: the packaged crates, not the checkout."
  echo "[patch.crates-io]"
  for d in "$STAGE"/crates/piceli*-[0-9]*; do
    name=$(basename "$d" | sed -E 's/-[0-9]+\.[0-9]+\.[0-9]+$//')
    case "$name" in piceli-otlp | piceli-sim | piceli-bin) continue ;; esac
    echo "$name = { path = \"$d\" }"
  done
}

write_anchor() {
  local dir="$1"
  mkdir -p "$dir/src"
  cat >"$dir/Cargo.toml" <<'EOF'
[package]
name = "anchor"
version = "0.1.0"
edition = "2024"
publish = false

# What a kube-rs controller starts from (kube's README): kube with `runtime` and `derive`, k8s-openapi,
# tokio; the rest of its examples' usual set.
[dependencies]
kube = { version = "5", features = ["runtime", "derive"] }
k8s-openapi = { version = "0.29", features = ["v1_33"] }
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
futures = "0.3"
serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1"
thiserror = "2"
tracing = "0.1"
tracing-subscriber = "0.3"

[workspace]
EOF
  # kube's configmapgen_controller, written again: a custom resource owning ConfigMaps.
  cat >"$dir/src/main.rs" <<'EOF'
//! The anchor: kube-rs's configmapgen controller (a custom resource that owns a ConfigMap).
use std::{collections::BTreeMap, sync::Arc, time::Duration};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, Client, CustomResource, Resource,
    api::{ObjectMeta, Patch, PatchParams},
    runtime::{Controller, controller::Action, watcher},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[kube(group = "nullable.se", version = "v1", kind = "ConfigMapGenerator", namespaced)]
struct ConfigMapGeneratorSpec {
    content: String,
}

#[derive(Debug, thiserror::Error)]
enum Error {
    #[error("kube: {0}")]
    Kube(#[from] kube::Error),
    #[error("object has no namespace")]
    NoNamespace,
}

async fn reconcile(generator: Arc<ConfigMapGenerator>, client: Arc<Client>) -> Result<Action, Error> {
    let namespace = generator.metadata.namespace.as_deref().ok_or(Error::NoNamespace)?;
    let owner = generator.controller_owner_ref(&()).into_iter().collect();
    let map = ConfigMap {
        metadata: ObjectMeta {
            name: generator.metadata.name.clone(),
            owner_references: Some(owner),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("content".to_string(), generator.spec.content.clone())])),
        ..ConfigMap::default()
    };
    let maps: Api<ConfigMap> = Api::namespaced((*client).clone(), namespace);
    let name = map.metadata.name.clone().unwrap_or_default();
    maps.patch(&name, &PatchParams::apply("configmapgen").force(), &Patch::Apply(&map)).await?;
    Ok(Action::requeue(Duration::from_secs(300)))
}

fn error_policy(_: Arc<ConfigMapGenerator>, error: &Error, _: Arc<Client>) -> Action {
    tracing::warn!(%error, "reconcile failed");
    Action::requeue(Duration::from_secs(1))
}

#[tokio::main]
async fn main() -> Result<(), kube::Error> {
    tracing_subscriber::fmt::init();
    let client = Client::try_default().await?;
    let generators = Api::<ConfigMapGenerator>::all(client.clone());
    let maps = Api::<ConfigMap>::all(client.clone());
    Controller::new(generators, watcher::Config::default())
        .owns(maps, watcher::Config::default())
        .run(reconcile, error_policy, Arc::new(client))
        .for_each(|outcome| async move { tracing::info!(?outcome, "reconciled") })
        .await;
    Ok(())
}
EOF
}

# One cold build: wall, CPU, units, slowest units, binary size.
cold_build() {
  local name="$1" dir="$2" bin="$3"
  cp Cargo.lock "$dir/Cargo.lock"
  (cd "$dir" && cargo fetch -q)
  local target="$OUT/target-$name"
  rm -rf "$target"
  local times="$OUT/time-$name.txt"
  (cd "$dir" && CARGO_TARGET_DIR="$target" CARGO_TERM_COLOR=never /usr/bin/time -f '%e %U %S %M' -o "$times" \
    cargo build --timings "${PROFILE_ARGS[@]}" 2>"$OUT/build-$name.log") || { tail -30 "$OUT/build-$name.log" >&2; exit 1; }
  cp "$target"/cargo-timings/cargo-timing.html "$OUT/timing-$name.html"
  local units warnings
  units=$(grep -c -E '^ *Compiling ' "$OUT/build-$name.log" || true)
  warnings=$(grep -c -E '^warning' "$OUT/build-$name.log" || true)
  read -r wall user sys rss <"$times"
  printf 'first-build: %-9s %s wall %6.1f s  cpu %6.1f s  units %3d  warnings %d  binary %5.1f MB  peak rss %d MB\n' \
    "$name" "$PROFILE" "$wall" "$(echo "$user + $sys" | bc)" "$units" "$warnings" \
    "$(echo "scale=1; $(stat -c %s "$target/$PROFILE_DIR/$bin") / 1000000" | bc)" "$((rss / 1024))"
  python3 - "$OUT/timing-$name.html" <<'EOF'
import json, re, sys
html = open(sys.argv[1]).read()
m = re.search(r'const UNIT_DATA = (\[.*?\]);\n', html, re.S)
units = json.loads(m.group(1))
units.sort(key=lambda u: -u["duration"])
print("    slowest: " + ", ".join(
    f'{u["name"]}{" (build script)" if "build" in u.get("mode", "") else ""} {u["duration"]:.1f} s' for u in units[:10]))
EOF
}

for app in $APPS; do
  case "$app" in
    new | operator)
      dir="$OUT/app-$app"
      rm -rf "$dir"
      if [ "$app" = operator ]; then "$PICELI_BIN" new "$dir" --operator >/dev/null; else "$PICELI_BIN" new "$dir" >/dev/null; fi
      patch_section >>"$dir/Cargo.toml"
      cold_build "$app" "$dir" "app-$app"
      ;;
    anchor)
      dir="$OUT/app-anchor"
      rm -rf "$dir"
      write_anchor "$dir"
      cold_build anchor "$dir" anchor
      ;;
    *) log "unknown app $app"; exit 2 ;;
  esac
done

# The edit → build → render loop of a 20-object app (10 Deployments, 10 Services), in the new app's crate
# and target directory: one warm build, then EDITS edits of a replica count, each built and rendered.
case "$EDITS:  $APPS " in 0:*) ;; *" new "*)
  dir="$OUT/app-new"
  gen() {
    echo 'piceli::app! {'
    echo '    app app-new;'
    echo '    target local = local(namespace: "app-new");'
    for i in $(seq 1 10); do
      cat <<EOF
    deployment web$i {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        replicas: $1,
        ports: { http: 80 },
        resources: { cpu: "100m", memory: "64Mi" },
    }
    service web$i -> web$i { port: 80 => http }
EOF
    done
    echo '}'
    echo 'fn main() -> std::process::ExitCode { app_new::main() }'
  }
  gen 1 >"$dir/src/main.rs"
  (cd "$dir" && CARGO_TARGET_DIR="$OUT/target-new" cargo build -q 2>/dev/null)
  objects=$("$OUT/target-new/debug/app-new" render | grep -c '^kind: ')
  samples=()
  for i in $(seq 2 $((EDITS + 1))); do
    gen "$i" >"$dir/src/main.rs"
    t0=$(date +%s.%N)
    (cd "$dir" && CARGO_TARGET_DIR="$OUT/target-new" cargo build -q 2>/dev/null)
    "$OUT/target-new/debug/app-new" render >/dev/null
    samples+=("$(echo "$(date +%s.%N) - $t0" | bc)")
  done
  sorted=$(printf '%s\n' "${samples[@]}" | sort -n | tr '\n' ' ')
  log "edit→build→render of a $objects-object app, $EDITS edits: ${sorted}s (median $(printf '%s\n' "${samples[@]}" | sort -n | sed -n "$(((EDITS + 1) / 2))p") s)"
  ;;
esac
log "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); files under $OUT"
