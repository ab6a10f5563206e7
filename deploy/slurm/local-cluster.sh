#!/usr/bin/env bash
# A real one-node Slurm cluster in a folder, without systemd: munge,
# slurmctld and slurmd, all of their state, logs and pid files under DIR.
# It is what passlab's test of sweeps runs on (repl/tests/slurm.rs), and a
# way to try deploy/slurm/passlab.sbatch on one machine before a real cluster.
#
#   bash deploy/slurm/local-cluster.sh up DIR     # start; prints the SLURM_CONF to export
#   bash deploy/slurm/local-cluster.sh down DIR   # stop the daemons by their pids
#
# Needs Debian's slurmctld, slurmd, slurm-client and munge (bash
# scripts/passlab.sh test installs them). Run as root (SlurmUser=root).
# Ports: SLURMCTLD_PORT and SLURMD_PORT (default 6817, 6818). The daemons
# talk over 127.0.0.1, so the machine's name need not resolve (it does not
# in a fresh chroot or in some containers).
set -euo pipefail

usage() { echo "usage: $0 up|down DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)

down() {
    local pids=()
    for f in "$dir"/run/slurmd.pid "$dir"/run/slurmctld.pid "$dir"/run/munged.pid; do
        [ -s "$f" ] || continue
        local pid
        pid=$(cat "$f")
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            pids+=("$pid")
        fi
    done
    # Each daemon takes a moment to exit; wait for all of them, then make sure.
    for _ in $(seq 1 100); do
        local alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    rm -f "$dir"/run/*.pid
}

up() {
    for tool in munged mungekey slurmctld slurmd sinfo; do
        command -v "$tool" >/dev/null || {
            echo "$0: $tool not found: install slurmctld slurmd slurm-client munge (bash scripts/passlab.sh test does)" >&2
            exit 1
        }
    done
    down
    # A fresh state each time: the simplest way to a known cluster.
    rm -rf "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
    mkdir -p "$dir/run" "$dir/state" "$dir/spool" "$dir/log" "$dir/munge/key" "$dir/munge/socket"
    chmod 700 "$dir/munge/key"
    chmod 755 "$dir/munge/socket"
    mungekey -c -k "$dir/munge/key/munge.key" >/dev/null 2>&1 || mungekey -c -f -k "$dir/munge/key/munge.key"
    local sock="$dir/munge/socket/munge.socket"
    munged -S "$sock" --key-file "$dir/munge/key/munge.key" --pid-file "$dir/run/munged.pid" \
        --log-file "$dir/log/munged.log" --seed-file "$dir/munge/seed" --force
    local node
    node=$(hostname -s)
    local hw
    hw=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
    mkdir -p "$dir/spool/$node"
    cat >"$dir/slurm.conf" <<EOF
ClusterName=passlab
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
SlurmctldPort=${SLURMCTLD_PORT:-6817}
SlurmdPort=${SLURMD_PORT:-6818}
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
MinJobAge=4
SchedulerParameters=batch_sched_delay=0
NodeName=$node NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=main Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -f "$SLURM_CONF"
    slurmd -f "$SLURM_CONF"
    # Up to 30 s, however long each sinfo takes.
    local deadline=$((SECONDS + 30))
    while [ $SECONDS -lt $deadline ]; do
        case "$(timeout 5 sinfo -h -o %T 2>/dev/null | head -1)" in
        idle | mixed | allocated) echo "SLURM_CONF=$SLURM_CONF"; return 0 ;;
        esac
        sleep 0.1
    done
    echo "$0: the cluster did not come up within 30 s; logs in $dir/log" >&2
    tail -5 "$dir"/log/*.log >&2 || true
    down
    exit 1
}

case "$cmd" in
up) up ;;
down) down ;;
*) usage ;;
esac
