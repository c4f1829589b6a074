#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this machine (munged, slurmctld, slurmd) for the distributed
# tests, with its configuration and state under a private folder. Prints the SLURM_CONF to export.
# Idempotent: a cluster already answering is left running. Needs root (slurmd runs jobs as users).
set -euo pipefail
dir="${KFORGE_SLURM_DIR:-/tmp/kforge-slurm}"
conf="$dir/slurm.conf"
host="$(hostname -s)"
if [ -f "$conf" ] && SLURM_CONF="$conf" timeout 5 sinfo -h -o %T 2>/dev/null | grep -qE "idle|mix|alloc"; then
  # Already up: cancel whatever an earlier, interrupted test run left, so the node is free.
  SLURM_CONF="$conf" scancel --quiet -u "$(id -un)" 2>/dev/null || true
  echo "$conf"; exit 0
fi
mkdir -p "$dir/state" "$dir/spool" "$dir/log"

# munge: one key, one daemon.
if [ ! -s /etc/munge/munge.key ]; then
  mungekey -c -f -k /etc/munge/munge.key >/dev/null 2>&1 || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
fi
chown munge:munge /etc/munge/munge.key 2>/dev/null || true
chmod 400 /etc/munge/munge.key
mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged 2>/dev/null || /usr/sbin/munged --force
  sleep 1
fi

cat > "$conf" <<CONF
ClusterName=kforge-test
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF

pkill -f "slurmctld -f $conf" 2>/dev/null || true
pkill -f "slurmd -f $conf" 2>/dev/null || true
slurmctld -f "$conf" -i
slurmd -f "$conf"
for _ in $(seq 1 30); do
  if SLURM_CONF="$conf" sinfo -h -o %T 2>/dev/null | grep -qE "idle|mix|alloc"; then
    echo "$conf"; exit 0
  fi
  sleep 1
done
echo "start-local-slurm: the node did not come up; see $dir/log" >&2
tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
exit 1
