#!/usr/bin/env bash
# Packages the published crates and proves the packages work on their own (docs/publishing.md):
#   bash scripts/package.sh             package, then build a new app against the packages twice: with the
#                                       workspace's Cargo.lock, then after `cargo update` (the newest
#                                       semver-compatible dependencies); a warning fails either build
#   bash scripts/package.sh --lock-only the first build only
#   bash scripts/package.sh --no-build  package only (no app build)
#   bash scripts/package.sh --all       also the packages no new app links: the app with `--features
#                                       piceli/otlp`, and piceli-bin (with piceli-sim) built from its package
#
# 1. Metadata: no manifest may name example.invalid; a published crate without `repository` is a note (the
#    project's public URL must be set before a real publish).
# 2. The workspace-hack is a workspace-only device (workspace-hack/Cargo.toml): the published crates must not
#    depend on it. As `cargo hakari publish` does (cargo-hakari's "method A"), the crates are packaged from a
#    copy of the checkout whose published manifests have the `workspace-hack` line removed; the checkout
#    itself keeps it, so the workspace keeps its unified features.
# 3. `cargo package --no-verify` of every published crate in one run (cargo packages them in dependency order
#    and resolves each one's lock against the ones before it); a failure names the crate.
# 4. Verify: the .crate files unpacked, `piceli new` writes an app that depends on `piceli = "0.1"`, and a
#    `[patch.crates-io]` points every published crate at its unpacked package — not at the checkout. The app
#    builds with the tests' shared app directory and profile (piceli_test_support::apps: target/tmp/apps,
#    release with opt-level 0), its warnings are errors (the unpacked crates are path packages, so their
#    warnings are reported too), and `render` must print its objects.
#
# Env: CARGO_TARGET_DIR (default ./target); PICELI_BIN, a built `piceli` binary (default:
# `cargo run -p piceli-bin`).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

# The published crates, in dependency order.
PUBLISHED=(piceli-core piceli-net piceli-dsl piceli-macros piceli-image piceli-import piceli-runtime
  piceli-cli piceli-otlp piceli piceli-sim piceli-bin)

build=yes
update=yes
all=no
case "${1:-}" in
  --lock-only) update=no ;;
  --no-build) build=no ;;
  --all) all=yes ;;
  "") ;;
  *) echo "usage: scripts/package.sh [--lock-only | --no-build | --all]" >&2; exit 2 ;;
esac

log() { printf 'package.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
mkdir -p "$TARGET"
TARGET="$(cd "$TARGET" && pwd)"
STAGE="$TARGET/package-stage"
APPS="$TARGET/tmp/apps"

# --- 1. Metadata -------------------------------------------------------------------------------------
if bad=$(git ls-files -co --exclude-standard -- '*Cargo.toml' | xargs grep -ln 'example\.invalid'); then
  die "a manifest still names example.invalid: $bad"
fi
meta=$(cargo metadata --no-deps --format-version 1 --offline)
missing=$(python3 -c '
import json, sys
published = set(sys.argv[1].split())
meta = json.loads(sys.stdin.read())
for p in meta["packages"]:
    if p["name"] in published:
        for field in ("description", "license", "documentation", "readme", "keywords", "categories"):
            if not p.get(field):
                print("error", p["name"], field)
        if p.get("publish") == []:
            print("error", p["name"], "publish = false")
        if not p.get("repository"):
            print("note", p["name"], "repository")
' "${PUBLISHED[*]}" <<<"$meta")
if grep -q '^error' <<<"$missing"; then
  die "metadata missing: $(grep '^error' <<<"$missing" | cut -d' ' -f2- | tr '\n' ';')"
fi
if grep -q '^note' <<<"$missing"; then
  log "NOTE: \`repository\` is not set for: $(grep '^note' <<<"$missing" | cut -d' ' -f2 | tr '\n' ' ')"
  log "NOTE: set it in the root Cargo.toml's [workspace.package] (and \`repository.workspace = true\` in each"
  log "NOTE: published crate) before a real \`cargo publish\`: the project's public URL is not known here."
fi

# --- 2. The copy without the workspace-hack ----------------------------------------------------------
rm -rf "$STAGE"
mkdir -p "$STAGE/src"
git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$STAGE/src"
manifests=$(python3 -c '
import json, sys, os
published = set(sys.argv[1].split())
for p in json.loads(sys.stdin.read())["packages"]:
    if p["name"] in published:
        print(os.path.relpath(p["manifest_path"], sys.argv[2]))
' "${PUBLISHED[*]}" "$ROOT" <<<"$meta")
for m in $manifests; do
  sed -i -E '/^workspace-hack\.workspace *= *true *$/d' "$STAGE/src/$m"
done
still=$(cd "$STAGE/src" && cargo metadata --no-deps --format-version 1 --offline | python3 -c '
import json, sys
published = set(sys.argv[1].split())
for p in json.loads(sys.stdin.read())["packages"]:
    if p["name"] in published and any(d["name"] == "workspace-hack" for d in p["dependencies"]):
        print(p["name"])
' "${PUBLISHED[*]}")
[ -z "$still" ] || die "still depending on the workspace-hack in the copy: $still"

# --- 3. cargo package ---------------------------------------------------------------------------------
rm -f "$TARGET"/package/*.crate
args=()
for c in "${PUBLISHED[@]}"; do args+=(-p "$c"); done
log "cargo package --no-verify ${PUBLISHED[*]}"
started=$(date +%s)
set +e
(cd "$STAGE/src" && CARGO_TARGET_DIR="$TARGET" cargo package --no-verify --allow-dirty "${args[@]}") \
  2> >(grep -v -e '^warning: manifest has no repository' -e '^  |' -e '^  = note' -e '^$' >&2)
status=$?
set -e
failed=()
for c in "${PUBLISHED[@]}"; do
  crate=$(ls "$TARGET"/package/"$c"-[0-9]*.crate 2>/dev/null | head -1)
  if [ -n "$crate" ]; then
    printf 'package.sh: packaged %-16s %8s bytes, %s files\n' "$c" "$(stat -c %s "$crate")" \
      "$(tar -tzf "$crate" | grep -vc '/$')" >&2
  else
    failed+=("$c")
  fi
done
[ "$status" -eq 0 ] && [ "${#failed[@]}" -eq 0 ] || die "cargo package failed (exit $status); not packaged: ${failed[*]}"
log "packaged ${#PUBLISHED[@]} crates in $(($(date +%s) - started)) s"
for c in "${PUBLISHED[@]}"; do
  crate=$(ls "$TARGET"/package/"$c"-[0-9]*.crate | head -1)
  if tar -xzOf "$crate" --wildcards '*/Cargo.toml' | grep -q 'workspace-hack'; then
    die "the package of $c depends on the workspace-hack"
  fi
done
[ "$build" = yes ] || exit 0

# --- 4. A new app against the packages ---------------------------------------------------------------
mkdir -p "$STAGE/crates"
for c in "${PUBLISHED[@]}"; do
  tar -xzf "$(ls "$TARGET"/package/"$c"-[0-9]*.crate | head -1)" -C "$STAGE/crates"
done
APP="$STAGE/pkg-verify"
if [ -n "${PICELI_BIN:-}" ]; then
  "$PICELI_BIN" new "$APP"
else
  cargo run -q -p piceli-bin -- new "$APP"
fi
grep -q '^piceli = "[0-9]*\.[0-9]*"$' "$APP/Cargo.toml" || die "piceli new did not write a dependency by version"
{
  echo
  echo "# scripts/package.sh: the packaged crates, not the checkout."
  echo "[patch.crates-io]"
  for c in "${PUBLISHED[@]}"; do
    # Not in a new app's graph (cargo would warn of an unused patch): the optional OTLP export, the local
    # cluster and the command.
    case "$c" in piceli-otlp | piceli-sim | piceli-bin) continue ;; esac
    echo "$c = { path = \"$(ls -d "$STAGE"/crates/"$c"-[0-9]* | head -1)\" }"
  done
} >>"$APP/Cargo.toml"
cp Cargo.lock "$APP/Cargo.lock"

# The shared app build (piceli_test_support::apps::PROFILE, no rustflags).
app_build() {
  local what="$1" out="$STAGE/build-$1.log" t0
  shift
  t0=$(date +%s)
  set +e
  (cd "$APP" && env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS -u CARGO_BUILD_RUSTFLAGS -u CARGO_BUILD_TARGET \
    CARGO_TARGET_DIR="$APPS" CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
    CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_INCREMENTAL=0 CARGO_TERM_COLOR=never cargo build --release "$@" 2>"$out")
  local code=$?
  set -e
  local took=$(($(date +%s) - t0))
  [ "$code" -eq 0 ] || { cat "$out" >&2; die "the new app ($what) does not build against the packages"; }
  # -D warnings: any warning (the app's own, or one of the unpacked piceli crates) fails the run.
  # (With --all every package is patched in through --config; cargo names the ones a build does not use.)
  if grep -E '^warning' "$out" | grep -v -E '^warning: patch `piceli(-[a-z]+)? .*` was not used in the crate graph$' >&2; then
    die "the new app's build ($what) has warnings (above; the whole log: $out)"
  fi
  local rendered
  rendered=$("$APPS/release/pkg-verify" render) || die "render of the new app ($what) failed"
  local objects
  objects=$(grep -c '^kind: ' <<<"$rendered" || true)
  [ "$objects" -gt 0 ] || die "render of the new app ($what) printed no objects"
  log "new app ($what): built in ${took} s without warnings, render printed $objects objects"
}
app_build workspace-lock
if [ "$update" = yes ]; then
  (cd "$APP" && cargo update 2>&1 | grep -E 'Updating|Adding|Removing|Locking' | head -40 >&2 || true)
  app_build cargo-update
fi
if [ "$all" = yes ]; then
  # Every package patched in through cargo's --config (the app's Cargo.toml patches only what it links).
  patches=()
  for c in "${PUBLISHED[@]}"; do
    patches+=(--config "patch.crates-io.$c.path=\"$(ls -d "$STAGE"/crates/"$c"-[0-9]* | head -1)\"")
  done
  sed -i '/^\[patch.crates-io\]/,$d' "$APP/Cargo.toml"
  app_build otlp --features piceli/otlp "${patches[@]}"
  (cd "$APP" && cargo tree -q -e normal --features piceli/otlp "${patches[@]}" -i piceli-otlp 2>/dev/null) |
    head -1 | grep -q "($STAGE/crates/piceli-otlp-" || die "the otlp build does not use piceli-otlp's package"
  t0=$(date +%s)
  bin_dir=$(ls -d "$STAGE"/crates/piceli-bin-[0-9]* | head -1)
  # Its own workspace: the stage may lie inside the checkout's directory (target/), whose workspace would
  # otherwise claim it.
  printf '\n[workspace]\n' >>"$bin_dir/Cargo.toml"
  (cd "$bin_dir" && env -u RUSTFLAGS CARGO_TARGET_DIR="$APPS" CARGO_PROFILE_RELEASE_OPT_LEVEL=0 \
    CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true CARGO_INCREMENTAL=0 \
    CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 cargo build --release "${patches[@]}" 2>"$STAGE/build-piceli-bin.log") ||
    { tail -40 "$STAGE/build-piceli-bin.log" >&2; die "piceli-bin does not build from its package"; }
  if grep -E '^warning' "$STAGE/build-piceli-bin.log" |
    grep -v -E '^warning: patch `piceli(-[a-z]+)? .*` was not used in the crate graph$' >&2; then die "piceli-bin's build from its package warns"; fi
  "$APPS/release/piceli" new "$STAGE/from-packaged-bin" --operator >/dev/null 2>&1 ||
    die "the packaged piceli-bin's \`piceli new --operator\` failed"
  log "piceli-bin (with piceli-sim) built from its package in $(($(date +%s) - t0)) s; its \`piceli new\` works"
fi
log "ok: the packages build a new app on their own"
