#!/usr/bin/env bash
# Starts an sshd on 127.0.0.1:2222 that accepts one generated key, for the tests of workers started
# over ssh. Prints the ssh command prefix to use. Idempotent; needs root.
set -euo pipefail
dir="${KFORGE_SSHD_DIR:-/tmp/kforge-sshd}"
port="${KFORGE_SSHD_PORT:-2222}"
mkdir -p "$dir" /run/sshd
chmod 700 "$dir"
[ -f "$dir/host_key" ] || ssh-keygen -q -t ed25519 -N "" -f "$dir/host_key"
[ -f "$dir/client_key" ] || ssh-keygen -q -t ed25519 -N "" -f "$dir/client_key"
cp "$dir/client_key.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"
cat > "$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $dir/sshd.pid
CONF
prefix="ssh -p $port -i $dir/client_key -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR $(id -un)@127.0.0.1"
if ! $prefix true 2>/dev/null; then
  [ -f "$dir/sshd.pid" ] && kill "$(cat "$dir/sshd.pid")" 2>/dev/null || true
  /usr/sbin/sshd -f "$dir/sshd_config"
  for _ in $(seq 1 20); do $prefix true 2>/dev/null && break; sleep 0.5; done
  $prefix true || { echo "start-local-sshd: cannot log in over ssh on port $port" >&2; exit 1; }
fi
echo "$prefix"
