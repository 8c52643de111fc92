#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, everything under one directory, for testing the Slurm
# launcher against the real daemons (Debian 12's slurm-wlm 22.05 and munge; needs root):
#
#   slurm_test_cluster.sh check            # prints why it cannot run here (and exits 1), or nothing
#   slurm_test_cluster.sh up DIR           # munged, slurmctld, slurmd; prints `export SLURM_CONF=...`
#   SLURM_CONF=DIR/etc/slurm.conf sbatch job.sh
#   slurm_test_cluster.sh down DIR         # stops the daemons by their pid files
#
# DIR holds the munge key and socket, slurm.conf (naming this host, `hostname -s`, with its cores and
# memory; one partition "debug"), the state and spool directories, the pid files and the daemons' logs.
# No cgroups (proctrack/linuxproc, task/none), no accounting database; the ports are chosen per DIR so
# that two clusters (or a system Slurm) do not collide.
set -euo pipefail

SBIN=/usr/sbin

check() {
  local missing=()
  for p in "$SBIN/munged" "$SBIN/slurmctld" "$SBIN/slurmd" /usr/bin/sbatch /usr/bin/squeue /usr/bin/sinfo \
    /usr/bin/scancel; do
    [[ -x "$p" ]] || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "Slurm is not installed (missing: ${missing[*]}); install it with: apt-get install slurm-wlm munge"
    return 1
  fi
  if [[ "$(id -u)" != 0 ]]; then
    echo "slurmd must run as root to start jobs, and this runs as $(id -un)"
    return 1
  fi
}

# A free TCP port pair derived from DIR (so reruns are stable and parallel clusters differ).
ports() {
  local base=$((20000 + $(cksum <<<"$1" | cut -d' ' -f1) % 20000 * 2))
  while (echo >"/dev/tcp/127.0.0.1/$base") 2>/dev/null || (echo >"/dev/tcp/127.0.0.1/$((base + 1))") 2>/dev/null; do
    base=$((base + 2))
  done
  echo "$base"
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > deadline)); then
      echo "slurm_test_cluster: timed out waiting for $what" >&2
      return 1
    fi
    sleep 0.5
  done
}

up() {
  local d
  d="$(mkdir -p "$1" && cd "$1" && pwd)"
  mkdir -p "$d"/{etc,state,spool,log,run}
  install -d -m 700 "$d/munge"
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$d/munge/munge.key"
  # --force: munged refuses to run as root otherwise.
  "$SBIN/munged" --force --key-file="$d/munge/munge.key" --socket="$d/munge/munge.socket" \
    --pid-file="$d/run/munged.pid" --log-file="$d/log/munged.log" --seed-file="$d/munge/munged.seed"
  local host cpus mem port
  host="$(hostname -s)"
  cpus="$(nproc --all)"
  mem=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512))
  port="$(ports "$d")"
  cat >"$d/etc/slurm.conf" <<EOF
ClusterName=mimetic-test
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
InactiveLimit=0
KillWait=5
MinJobAge=600
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$d/etc/slurm.conf"
  "$SBIN/slurmctld" -f "$SLURM_CONF"
  "$SBIN/slurmd" -f "$SLURM_CONF"
  wait_for 30 "the node to be idle (logs: $d/log)" bash -c "sinfo --noheader --format=%t | grep -qx idle"
  echo "export SLURM_CONF=$SLURM_CONF"
}

down() {
  local d=$1 pid jobs
  # Jobs first (their processes are children of slurmstepd, not of the daemons).
  if [[ -f "$d/run/slurmctld.pid" ]]; then
    jobs="$(SLURM_CONF="$d/etc/slurm.conf" squeue --noheader --format=%A 2>/dev/null || true)"
    if [[ -n "$jobs" ]]; then
      SLURM_CONF="$d/etc/slurm.conf" scancel $jobs 2>/dev/null || true
      SLURM_CONF="$d/etc/slurm.conf" wait_for 30 "the jobs to end" bash -c '[[ -z "$(squeue --noheader)" ]]' || true
    fi
  fi
  for f in slurmd slurmctld munged; do
    [[ -f "$d/run/$f.pid" ]] || continue
    pid="$(cat "$d/run/$f.pid")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$d/run/$f.pid"
  done
}

case "${1:-}" in
  check) check ;;
  up) up "$2" ;;
  down) down "$2" ;;
  *)
    echo "usage: $0 check | up DIR | down DIR" >&2
    exit 2
    ;;
esac
