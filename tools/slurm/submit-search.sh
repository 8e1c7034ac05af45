#!/usr/bin/env bash
# Submits one optimizer search as a Slurm job array of N shards and a merge
# job that runs when every shard has succeeded. See docs/SLURM.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
me=submit-search.sh

usage() {
  cat <<EOF
Usage: $me -n N [-o DIR] [--binary PATH] [-c CPUS] [--wait] -- OPTIMIZE-ARGS...

Searches with \`scaleacross optimize OPTIMIZE-ARGS...\` split into N shards, one
Slurm array task each (DIR/part-I.json), then merges them in a job that
depends on the array (DIR/merged.json and the text report DIR/merged.txt).
The job logs go to DIR/logs/. DIR and the binary must be on a file system
that the compute nodes share.

Options:
  -n N                 number of shards (array tasks 0..N-1)
  -o DIR               output directory (default: ./scaleacross-search-DATE-TIME);
                       it must not hold the part files of an earlier search
  --binary PATH        the scaleacross binary (default: \$SCALEACROSS_BIN, else
                       scaleacross on PATH)
  -c, --cpus-per-task CPUS
                       cores per shard; each shard gets --threads CPUS
  --wait               wait for the merge; exit 1 if a shard or the merge failed
  -h, --help           this help

OPTIMIZE-ARGS: a scenario file, or --cluster C --model M [--plan P], and any
optimize options except --shard, --json and -o. Other sbatch settings
(partition, account, time limit) come from sbatch's own environment
variables: SBATCH_PARTITION, SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ...

Exit codes: 0 submitted (with --wait: merged), 1 a submission, shard or the
merge failed, 2 bad usage.
EOF
}

usage_error() {
  echo "$me: $*" >&2
  echo "Try '$me --help'." >&2
  exit 2
}

die() {
  echo "$me: $*" >&2
  exit 1
}

shards=""
dir=""
bin=${SCALEACROSS_BIN:-}
cpus=""
wait_for_merge=0
while (($# > 0)); do
  case $1 in
    -n)
      (($# >= 2)) || usage_error "-n needs a value"
      shards=$2
      shift 2
      ;;
    -o)
      (($# >= 2)) || usage_error "-o needs a value"
      dir=$2
      shift 2
      ;;
    --binary)
      (($# >= 2)) || usage_error "--binary needs a value"
      bin=$2
      shift 2
      ;;
    --binary=*)
      bin=${1#--binary=}
      shift
      ;;
    -c | --cpus-per-task)
      (($# >= 2)) || usage_error "$1 needs a value"
      cpus=$2
      shift 2
      ;;
    --cpus-per-task=*)
      cpus=${1#--cpus-per-task=}
      shift
      ;;
    --wait)
      wait_for_merge=1
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    --)
      shift
      break
      ;;
    *) usage_error "unknown option '$1' (the optimize arguments go after --)" ;;
  esac
done
optimize_args=("$@")

[[ -n $shards ]] || usage_error "give the number of shards with -n N"
[[ $shards =~ ^[1-9][0-9]*$ ]] || usage_error "-n: expected a positive integer, got '$shards'"
[[ -z $cpus || $cpus =~ ^[1-9][0-9]*$ ]] || usage_error "--cpus-per-task: expected a positive integer, got '$cpus'"
((${#optimize_args[@]} > 0)) ||
  usage_error "give the optimize arguments after --: a scenario file, or --cluster/--model/--plan"
for a in "${optimize_args[@]}"; do
  case $a in
    --shard | --shard=* | -o | --output | --output=* | --json)
      usage_error "do not pass $a to optimize: each shard gets --shard I/N --json -o DIR/part-I.json"
      ;;
  esac
done

for tool in sbatch squeue scontrol; do
  command -v "$tool" >/dev/null ||
    usage_error "$tool not found on PATH: run this on a Slurm submit host (Debian: apt-get install slurm-client)"
done

# Array indices must stay below MaxArraySize; say so before sbatch answers
# only "Invalid job array specification".
max_array=$(scontrol show config 2>/dev/null | sed -n 's/^MaxArraySize *= *\([0-9]*\).*/\1/p')
if [[ -n $max_array ]] && ((shards > max_array)); then
  usage_error "-n $shards: this cluster runs arrays of at most $max_array tasks (MaxArraySize)"
fi

# The jobs run elsewhere and later: give them absolute paths.
if [[ -z $bin ]]; then
  bin=$(command -v scaleacross) || usage_error "scaleacross not found on PATH: give --binary PATH or set SCALEACROSS_BIN"
elif [[ $bin != */* ]]; then
  bin=$(command -v "$bin") || usage_error "--binary: '$bin' not found on PATH"
fi
[[ -f $bin && -x $bin ]] || usage_error "--binary: '$bin' is not an executable file"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

[[ -n $dir ]] || dir=scaleacross-search-$(date +%Y%m%d-%H%M%S)
mkdir -p "$dir/logs" || die "cannot create $dir/logs"
dir=$(cd "$dir" && pwd)
# merge globs part-*.json: parts of an earlier search (another N, other
# inputs) in the same directory would make it fail, or worse, be joined.
shopt -s nullglob
stale=("$dir"/part-*.json "$dir"/merged.json*)
shopt -u nullglob
((${#stale[@]} == 0)) ||
  usage_error "$dir already holds results of a search (${stale[0]##*/}, ...): choose another -o DIR or remove them"

export SCALEACROSS_BIN=$bin SCALEACROSS_OUT_DIR=$dir SCALEACROSS_SHARDS=$shards
# --export=ALL: the scripts read the variables above even if the user's
# SBATCH_EXPORT says otherwise. --chdir: relative scenario paths resolve as here.
common=(--parsable --export=ALL --chdir="$PWD")

array_opts=(--array="0-$((shards - 1))" --output="$dir/logs/part-%a.log")
[[ -z $cpus ]] || array_opts+=(--cpus-per-task="$cpus")
array_out=$(sbatch "${common[@]}" "${array_opts[@]}" "$here/optimize-array.sbatch" "${optimize_args[@]}") ||
  die "sbatch refused the shard array (see its message above)"
array_job=${array_out%%;*} # --parsable prints JOBID or JOBID;CLUSTER

# --kill-on-invalid-dep: when a shard fails, afterok can never be met; cancel
# the merge then instead of leaving it pending forever.
merge_out=$(sbatch "${common[@]}" --dependency="afterok:$array_job" --kill-on-invalid-dep=yes \
  --output="$dir/logs/merge.log" "$here/merge-parts.sbatch") || {
  scancel "$array_job" 2>/dev/null || true
  die "sbatch refused the merge job (see its message above); cancelled the shards (job $array_job)"
}
merge_job=${merge_out%%;*}

echo "shards: job $array_job, array 0-$((shards - 1)) -> $dir/part-I.json"
echo "merge:  job $merge_job, after the shards -> $dir/merged.json, $dir/merged.txt"
echo "logs:   $dir/logs/"
((wait_for_merge)) || exit 0

# "JobState=X" of a job, empty once slurmctld has forgotten it (MinJobAge).
job_field() { # JOBID FIELD
  scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# Polls rather than sbatch --wait, whose interval grows to 32 s; a merge takes
# well under a second. Transient scontrol failures (empty answer while the
# job is still known to squeue) are retried.
delay=1
while :; do
  state=$(job_field "$merge_job" JobState)
  case $state in
    PENDING)
      if [[ $(job_field "$merge_job" Reason) == DependencyNeverSatisfied ]]; then
        scancel "$merge_job" 2>/dev/null || true
        state=CANCELLED
        break
      fi
      ;;
    RUNNING | CONFIGURING | COMPLETING | SUSPENDED | REQUEUED | RESIZING | "") ;;
    *) break ;;
  esac
  if [[ -z $state ]] && ! squeue -h -j "$merge_job" 2>/dev/null | grep -q .; then
    break # no longer known: finished long enough ago to be purged
  fi
  sleep "$delay"
  ((delay < 5)) && delay=$((delay + 1))
done

# Which shards failed: one line per array task that did not complete.
failed=0
while read -r line; do
  [[ -n $line ]] || continue
  task=$(sed -n 's/.*ArrayTaskId=\([^ ]*\).*/\1/p' <<<"$line")
  task_state=$(sed -n 's/.*JobState=\([^ ]*\).*/\1/p' <<<"$line")
  code=$(sed -n 's/.* ExitCode=\([^ ]*\).*/\1/p' <<<"$line")
  if [[ $task_state != COMPLETED ]]; then
    echo "$me: shard $task: $task_state (exit $code), see $dir/logs/part-$task.log" >&2
    failed=1
  fi
done < <(scontrol -o show job "$array_job" 2>/dev/null || true)

if [[ $state == COMPLETED && -f $dir/merged.json ]]; then
  echo "merged $shards shards: $dir/merged.json"
  exit "$failed"
fi
if [[ -z $state && -f $dir/merged.json && $failed == 0 ]]; then
  echo "merged $shards shards: $dir/merged.json (the merge job is no longer known to slurmctld)"
  exit 0
fi
missing=()
for ((i = 0; i < shards; ++i)); do
  [[ -f $dir/part-$i.json ]] || missing+=("part-$i.json")
done
((${#missing[@]} == 0)) || echo "$me: missing in $dir: ${missing[*]}" >&2
if [[ $state == CANCELLED ]] && ((failed || ${#missing[@]} > 0)); then
  die "a shard failed, so the merge (job $merge_job) was cancelled"
fi
die "the merge (job $merge_job) did not complete (${state:-unknown}); see $dir/logs/merge.log"
