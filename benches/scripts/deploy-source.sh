#!/usr/bin/env bash
# Deploy from source, whole process (hyperfine), against a local cluster (`piceli sim`) and a real registry
# (Debian's docker-registry) on 127.0.0.1, with one of two apps:
#  - from-source (hello-sized): one Deployment whose image is `build(package: "tiny-app")`, the fixture of
#    image/tests/fixture;
#  - shop-source (shop-sized): 19 objects, five workloads running four images built from the packages of
#    benches/shop-source/fixture (the one-line change is in one of them, `shop-api`, whose image two
#    workloads run).
#  1. first: `deploy` (inputs, build into the cache, plan: exit 3) then `deploy --approve HASH` (push,
#     apply, ready) on a fresh cluster, state directory and repository; cargo's target dir stays warm, so
#     cargo's part is its no-op check (its cold build is timed once, apart);
#  2. no-change: `deploy` with nothing to build, push, approve or apply (goal ≤ 300 ms);
#  3. one-line change: a string of the fixture changed, then `deploy` + `deploy --approve HASH`, side by
#     side with cargo's own incremental `cargo build --release --locked` of the same change (goal: cargo's
#     time + ≤ 1 s).
# Usage: benches/scripts/deploy-source.sh BIN_DIR [runs] [from-source|shop-source]
#   BIN_DIR holds the app's binary and `piceli` (cargo build --release -p APP -p piceli-bin).
#   Needs hyperfine and /usr/bin/docker-registry.
set -euo pipefail
bin=$(cd "$1" && pwd) runs=${2:-10} app=${3:-from-source}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
unset KUBECONFIG
export work bin app
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export REG=127.0.0.1:$port
cat > "$work/registry.yml" <<YML
version: 0.1
log: { level: error, accesslog: { disabled: true } }
storage: { filesystem: { rootdirectory: $work/registry } }
http: { addr: $REG }
YML
/usr/bin/docker-registry serve "$work/registry.yml" >/dev/null 2>&1 &
registry_pid=$!
trap 'kill $registry_pid 2>/dev/null || true; "$bin/piceli" sim stop --dir "$work/app/.piceli/local" >/dev/null 2>&1 || true' EXIT
case $app in
  from-source)
    mkdir -p "$work/src/src"
    cp "$here/image/tests/fixture/tiny-app/"{Cargo.toml,Cargo.lock} "$work/src/"
    cp "$here/image/tests/fixture/tiny-app/src/main.rs" "$work/src/src/"
    export changed=src/main.rs says="says hello" ;;
  shop-source)
    mkdir -p "$work/src"
    cp -r "$here/benches/shop-source/fixture/." "$work/src/"
    export changed=api/src/main.rs says="serves orders" ;;
  *) echo "unknown app $app (from-source or shop-source)" >&2; exit 2 ;;
esac
export CARGO_TARGET_DIR=$work/cargo-target
echo "cargo's cold release build of the fixture:"
( cd "$work/src" && /usr/bin/time -f '%e s' cargo build --release --locked -q )

fresh() {  # a fresh cluster, state directory and repository
  "$bin/piceli" sim stop --dir "$work/app/.piceli/local" >/dev/null 2>&1 || true
  rm -rf "$work/app" && mkdir -p "$work/app"
  (cd "$work/app" && "$bin/piceli" sim start --dir .piceli/local >/dev/null)
  echo "run$RANDOM$RANDOM" > "$work/repo"
}
deploy() {  # deploy ARGS… in the app dir, against this run's repository
  (cd "$work/app" && "$bin/$app" deploy --workspace "$work/src" --registry "$REG/$(cat "$work/repo")" "$@")
}
approve() {  # deploy (exit 3 with the hash), then deploy --approve HASH
  local hash
  hash=$(deploy -o json | python3 -c 'import json,sys; print([json.loads(l) for l in sys.stdin][-1]["hash"])') || true
  deploy --approve "$hash" >/dev/null
}
change() { sed -i "s/$says[^\"]*/$says $RANDOM$RANDOM/" "$work/src/$changed"; }
export -f fresh deploy approve change

hyperfine --shell=bash -w 0 -r "$runs" --export-markdown "$work/first.md" \
  -n first --prepare fresh approve
fresh && approve
hyperfine --shell=bash -w 3 -r "$runs" --export-markdown "$work/noop.md" -n no-change "deploy >/dev/null"
hyperfine --shell=bash -w 1 -r "$runs" --export-markdown "$work/change.md" \
  -n cargo --prepare change "cd $work/src && cargo build --release --locked -q" \
  -n deploy --prepare change approve
cat "$work/first.md" "$work/noop.md" "$work/change.md"
