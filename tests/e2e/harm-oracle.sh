#!/usr/bin/env bash
# The harm oracle's runner (crates/loopguard/tests/harm_oracle.rs). Runs every allowed fixture
# row for real, exactly as the hook answered it (wrapped in `loopguard exec`), and records what
# it changed. The caller starts it under `unshare -Urmn`: its own user, mount and (loopback-only)
# network namespaces. Before running anything it makes every mount read-only except ROOT, so a
# row that escaped the sandbox under test still cannot change the real file system.
#
# usage: harm-oracle.sh ROOT ROWSDIR OUTDIR
#   ROOT/pristine/{home,ws}: the template; each row runs in a fresh copy at ROOT/home, ROOT/ws
#   ROWSDIR/N: the command of row N, as the hook answered it
# Leaves OUTDIR/N.out, N.err (the row's output) and N.sums (sha256 of the protected files,
# then every file outside the workspace that holds a canary).
set -uo pipefail
root=$1 rows=$2 outdir=$3

ip link set lo up 2>/dev/null || true
# ROOT stays writable: bind it onto itself first, so remounting its parents leaves it alone.
mount --bind "$root" "$root" || { echo "harm-oracle: cannot bind $root" >&2; exit 3; }
mount --bind "$outdir" "$outdir" || { echo "harm-oracle: cannot bind $outdir" >&2; exit 3; }
awk '{print $5}' /proc/self/mountinfo | sort -u | while read -r m; do
  case "$m" in
    "$root"|"$root"/*|"$outdir"|"$outdir"/*|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;;
  esac
  mount -o remount,bind,ro "$m" 2>/dev/null || true
done
# Prove it: the real file system must refuse a write now.
if touch /usr/.harm-oracle-probe 2>/dev/null || touch /.harm-oracle-probe 2>/dev/null; then
  echo "harm-oracle: the real file system is still writable; refusing to run rows" >&2
  exit 3
fi

protected=(home/.bashrc home/.ssh/authorized_keys home/.ssh/id_rsa home/.aws/credentials
  ws/.git/config ws/.git/hooks/pre-commit ws/.claude/settings.json ws/.loopguard/policy.toml ws/.env)

for rowfile in "$rows"/*; do
  i=$(basename "$rowfile")
  cmd=$(cat "$rowfile")
  rm -rf "$root/home" "$root/ws" "$root/outside" "$root/tmp"
  cp -a "$root/pristine/home" "$root/home"
  cp -a "$root/pristine/ws" "$root/ws"
  mkdir -p "$root/outside" "$root/tmp"
  (
    cd "$root/ws" || exit 1
    env -i PATH="$PATH" HOME="$root/home" LOOPGUARD_HOME="$root/state" TMPDIR="$root/tmp" \
      GITHUB_TOKEN="$(cat "$root/env-canary")" LOOPGUARD_EFFECTS=manual \
      timeout -k 1 8 bash -c "$cmd" </dev/null >"$outdir/$i.out" 2>"$outdir/$i.err"
  )
  {
    for f in "${protected[@]}"; do
      if [ -e "$root/$f" ]; then sha256sum "$root/$f" | cut -d' ' -f1; else echo "missing"; fi
    done
    # A canary anywhere but where it was planted (the workspace's .env holds one by design).
    grep -rlF -f "$root/canaries" "$root/ws" "$root/outside" "$root/tmp" "$root/home" 2>/dev/null \
      | grep -v -e "^$root/home/.ssh/id_rsa$" -e "^$root/home/.aws/credentials$" -e "^$root/home/.netrc$" \
        -e "^$root/ws/.env$" | sed "s|^|leak |"
  } >"$outdir/$i.sums"
done
exit 0
