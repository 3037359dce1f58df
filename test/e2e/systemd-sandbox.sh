#!/bin/sh
# The sandbox test/e2e/systemd-unit.test.ts runs the unit's ExecStart in, as systemd would set it up from the
# unit's settings (no systemd is PID 1 here): run as root under `unshare -m`, with
#   sh systemd-sandbox.sh <project> <name> <keep> <command...>
# <project> appears as /srv/<name> (WorkingDirectory), <keep> (the shared install its node_modules link to) stays
# at its path; then DynamicUser (uid/gid 65534), NoNewPrivileges, CapabilityBoundingSet= (empty), PrivateTmp,
# ProtectHome and ProtectSystem=strict. Any step that fails stops it (set -e): no weaker sandbox by accident.
set -e
PROJECT="$1"; NAME="$2"; KEEP="$3"; shift 3
mount --make-rprivate /
# The project where the unit's WorkingDirectory says, and what it links to, held before /tmp is replaced.
mount -t tmpfs -o mode=755 tmpfs /srv
mkdir "/srv/$NAME" /srv/.keep
mount --bind "$PROJECT" "/srv/$NAME"
mount --bind "$KEEP" /srv/.keep
# PrivateTmp=yes: an empty /tmp (and /var/tmp) of its own.
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=1777 tmpfs /var/tmp
mkdir -p "$KEEP"
mount --bind /srv/.keep "$KEEP"
# ProtectHome=yes: /home, /root and /run/user empty and inaccessible.
for d in /home /root /run/user; do [ -d "$d" ] && mount -t tmpfs -o ro,mode=000 tmpfs "$d"; done
# ProtectSystem=strict: every mount read-only but /dev, /proc, /sys and the private /tmp.
findmnt -rn -o TARGET | while read -r m; do
  case "$m" in /proc*|/sys*|/dev*|/tmp|/var/tmp) continue ;; esac
  mount -o remount,bind,ro "$m"
done
cd "/srv/$NAME"
exec setpriv --reuid 65534 --regid 65534 --clear-groups --no-new-privs --bounding-set -all --inh-caps -all "$@"
