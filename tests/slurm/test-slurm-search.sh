#!/usr/bin/env bash
# Runs tools/slurm/submit-search.sh on a real, throwaway single-node Slurm
# cluster and checks the merged result against an unsharded search.
#
# Usage: test-slurm-search.sh /path/to/scaleacross
#
# Needs root and slurm-wlm + munge (tools/install-deps.sh installs them). It
# starts its own slurmctld and slurmd (and munged, unless one is running) on a
# config in a temporary directory, on free ports, and stops them and removes
# the directory on exit; nothing under /etc is changed. Exit 0: passed,
# 1: failed, 77: skipped (prints "SKIP: why"), e.g. not root, Slurm not
# installed, or the daemons cannot start here (container limits).
# SCALEACROSS_TEST_KEEP=1 keeps the directory (config, logs, results).
set -euo pipefail

skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# The last lines of those logs that exist, on one line (for a SKIP message).
last_lines() {
  local f
  for f in "$@"; do
    if [[ -s $f ]]; then tail -n 3 "$f"; fi
  done | tr '\n' ' '
}

(($# >= 1)) || {
  echo "usage: $0 /path/to/scaleacross" >&2
  exit 2
}
[[ -x $1 ]] || fail "scaleacross binary '$1' is not executable"
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
scenario=$root/sample_clusters/scenarios/two-buildings-405b.json
# Small enough for a fraction of a second per shard on two cores, large enough
# that the staged search (enumerate, then descend) runs in every shard.
search_args=(--max-evaluations 2000 --no-baselines)

# The daemons live in sbin, which a non-login root shell may lack.
PATH=$PATH:/usr/sbin:/sbin
for tool in slurmctld slurmd munged munge unmunge sbatch sinfo squeue scontrol scancel python3; do
  command -v "$tool" >/dev/null ||
    skip "$tool not found (apt-get install slurm-wlm munge, or tools/install-deps.sh)"
done
((EUID == 0)) || skip "not root: slurmd must run as root to start jobs"

# Only this test's cluster: a submit host's SLURM_CONF or SBATCH_PARTITION (or
# running inside a Slurm job) must not steer the commands below elsewhere.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SALLOC|SRUN)_' || true)

tmp=$(mktemp -d /tmp/scaleacross-slurm.XXXXXX)
pids=()
child=""
slurm_started=0
ctld_pid=""
cleanup() {
  local rc=$?
  if [[ -n $child ]]; then
    kill "$child" 2>/dev/null || true # timeout passes the signal on
    wait "$child" 2>/dev/null || true
  fi
  # Jobs first: a killed slurmd leaves its slurmstepd and the job running.
  if ((slurm_started)) && kill -0 "$ctld_pid" 2>/dev/null; then
    timeout 10 scancel --quiet --full --user=root 2>/dev/null || true
    sleep 1
  fi
  local p
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    # slurmctld saves its state on SIGTERM; give it a moment, then insist.
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  if [[ -n ${SCALEACROSS_TEST_KEEP:-} ]]; then
    echo "kept $tmp (SCALEACROSS_TEST_KEEP)"
  else
    rm -rf "$tmp"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Runs COMMAND under a time limit in the background and waits for it: bash
# runs a trap only after a foreground command ends, but interrupts `wait`, so
# Ctrl-C or a TERM stops the test (and its daemons) at once.
run_limited() { # SECONDS COMMAND...
  local limit=$1 rc=0
  shift
  timeout "$limit" "$@" &
  child=$!
  wait "$child" || rc=$?
  child=""
  return "$rc"
}

# munged checks that every directory above its socket is searchable by all
# and that the key is private, hence 755 and 700.
chmod 755 "$tmp"
mkdir -m 755 "$tmp/munge-run"
mkdir -m 700 "$tmp/munge-lib" "$tmp/state" "$tmp/spool"
mkdir -m 755 "$tmp/log" "$tmp/out"

# munge: use a running munged (the default socket) if it answers; otherwise
# start one with its own key and socket and point Slurm at it (AuthInfo).
auth_info=""
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  echo "using the running munged"
else
  key=$tmp/munge-lib/munge.key
  if command -v mungekey >/dev/null; then
    mungekey --create --keyfile="$key"
  else
    dd if=/dev/urandom of="$key" bs=1 count=1024 status=none
  fi
  chmod 600 "$key"
  socket=$tmp/munge-run/munge.socket
  munged --foreground --socket="$socket" --key-file="$key" --pid-file="$tmp/munge-run/munged.pid" \
    --seed-file="$tmp/munge-lib/munged.seed" --log-file="$tmp/log/munged.log" \
    >"$tmp/log/munged.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do
    [[ -S $socket ]] && break
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  munge --socket="$socket" -n 2>/dev/null | unmunge --socket="$socket" >/dev/null 2>&1 ||
    skip "munged cannot start here: $(last_lines "$tmp/log/munged.out" "$tmp/log/munged.log")"
  auth_info="AuthInfo=socket=$socket"
fi

# Two free TCP ports: an installed Slurm may own the defaults 6817/6818.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')

node=$(hostname -s)
cat >"$tmp/slurm.conf" <<EOF
# Throwaway single-node cluster of test-slurm-search.sh.
ClusterName=scaleacross-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
$auth_info
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
PlugStackConfig=$tmp/plugstack.conf
# No cgroups: they are often read-only or absent in containers.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MailProg=/bin/true
SlurmdTimeout=30
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
: >"$tmp/plugstack.conf"
export SLURM_CONF=$tmp/slurm.conf
slurm_started=1

slurmctld -D -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
ctld_pid=$!
slurmd -D -f "$SLURM_CONF" -N "$node" >"$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
slurmd_pid=$!

started=$SECONDS
state=""
while ((SECONDS - started < 40)); do
  kill -0 "$ctld_pid" 2>/dev/null ||
    skip "slurmctld cannot start here: $(last_lines "$tmp/log/slurmctld.out" "$tmp/log/slurmctld.log")"
  kill -0 "$slurmd_pid" 2>/dev/null ||
    skip "slurmd cannot start here: $(last_lines "$tmp/log/slurmd.out" "$tmp/log/slurmd.log")"
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
  [[ $state == idle ]] && break
  sleep 0.5
done
[[ $state == idle ]] ||
  skip "the node did not come up idle in 40 s (state '${state:-unknown}'): $(last_lines "$tmp/log/slurmd.log")"
echo "slurm up in $((SECONDS - started)) s: node $node, $(nproc) CPUs, ports $ctld_port/$slurmd_port"

# From here on every problem is a failure of the scripts under test.
show_logs() {
  local f
  for f in "$tmp"/out*/logs/*.log "$tmp/log/slurmctld.log" "$tmp/log/slurmd.log"; do
    [[ -f $f ]] || continue
    echo "--- $f" >&2
    tail -n 20 "$f" >&2
  done
}
trap 'show_logs' ERR

test_started=$SECONDS
submit=$root/tools/slurm/submit-search.sh
out=$tmp/out
# -c 1: each shard gets --threads 1 from SLURM_CPUS_PER_TASK, so both run
# at once on a two-core node.
run_limited 60 "$submit" -n 2 -c 1 -o "$out" --binary "$bin" --wait -- "$scenario" "${search_args[@]}" ||
  {
    show_logs
    fail "submit-search.sh -n 2 --wait failed"
  }

"$bin" optimize "$scenario" "${search_args[@]}" --threads 1 --json -o "$tmp/unsharded.json"
grep -q -- "--threads 1 " "$out/logs/part-0.log" || fail "the shard did not get --threads from --cpus-per-task"

for f in part-0.json part-1.json merged.json merged.txt; do
  [[ -s $out/$f ]] || fail "$out/$f was not written"
done
python3 - "$out" "$tmp/unsharded.json" <<'EOF' || fail "the merged result does not match"
import json, sys
out, unsharded = sys.argv[1], json.load(open(sys.argv[2]))
parts = [json.load(open(f"{out}/part-{i}.json")) for i in range(2)]
merged = json.load(open(f"{out}/merged.json"))
ok = True
def check(cond, what):
    global ok
    print(("ok:   " if cond else "FAIL: ") + what)
    ok = ok and cond
check(sorted((p["shard"]["index"], p["shard"]["count"]) for p in parts) == [(0, 2), (1, 2)],
      "the parts are shards 0/2 and 1/2")
# The merge joined both shards: its counts are the sums of theirs.
for key in ("enumerated", "evaluated", "feasible"):
    total = sum(p["counts"][key] for p in parts)
    check(merged["counts"][key] == total, f"merged counts.{key} {merged['counts'][key]} = sum over 2 shards {total}")
check(merged["input_digest"] == unsharded["input_digest"], "merged and unsharded searched the same problem")
best, ref = merged["top"][0]["step_time_s"], unsharded["top"][0]["step_time_s"]
check(best == ref, f"top plan step time {best!r} s = unsharded best {ref!r} s")
sys.exit(0 if ok else 1)
EOF
grep -q "merging 2 shards" "$out/logs/merge.log" || fail "the merge log does not report 2 shards"
grep -q "^Top plans" "$out/merged.txt" || fail "merged.txt is not the text report"

# A failing shard must fail --wait (and the merge must not run): a missing
# input makes every shard exit 2.
bad=$tmp/out-bad
if run_limited 45 "$submit" -n 2 -o "$bad" --binary "$bin" --wait -- "$tmp/no-such-scenario.json" \
  >"$tmp/bad.out" 2>&1; then
  cat "$tmp/bad.out" >&2
  fail "submit-search.sh --wait succeeded although every shard failed"
fi
[[ ! -e $bad/merged.json ]] || fail "the merge ran although the shards failed"
grep -q "shard 0: FAILED" "$tmp/bad.out" || {
  cat "$tmp/bad.out" >&2
  fail "submit-search.sh did not name the failed shard"
}
echo "ok:   a failing shard fails --wait: $(grep -c 'FAILED' "$tmp/bad.out") shards reported failed"

# Usage errors exit 2 before anything is submitted: more shards than the
# cluster's MaxArraySize (1001 by default), and an option the array sets.
jobs_before=$(squeue -h -o %i | wc -l)
usage_check() { # MESSAGE-PATTERN ARGS... of submit-search.sh
  local pattern=$1 rc=0
  shift
  "$submit" "$@" >"$tmp/usage.out" 2>&1 || rc=$?
  if ((rc != 2)) || ! grep -q -- "$pattern" "$tmp/usage.out"; then
    cat "$tmp/usage.out" >&2
    fail "submit-search.sh $*: exit $rc, expected 2 and '$pattern'"
  fi
}
usage_check MaxArraySize -n 100000 -o "$tmp/out-usage" --binary "$bin" -- "$scenario"
usage_check "do not pass -o" -n 2 -o "$tmp/out-usage" --binary "$bin" --wait -- "$scenario" -o part.json
[[ $(squeue -h -o %i | wc -l) == "$jobs_before" ]] || fail "a usage error submitted a job"
echo "ok:   usage errors exit 2 and submit nothing"

echo "PASS: sharded search on Slurm in $((SECONDS - test_started)) s"
