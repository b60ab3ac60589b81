#!/usr/bin/env bash
# The SLURM lane of CI (issue 37): a real single-node SLURM cluster on this machine, started
# from nothing, grading a small class the way an instructor would (docs/grading.md, "SLURM").
#
#   sudo deploy/slurm/ci-lane.sh        (as root; after `make setup`, which makes .venv/)
#
# It installs slurm-wlm and munge from Debian if they are missing, starts munged, slurmctld
# and slurmd (state in a scratch folder), then:
#   1. submits deploy/slurm/grade-array.sbatch as a 2-task array and grade-merge.sbatch with
#      --dependency=afterok, and checks that the class's reports (JSON, CSV, JUnit) equal,
#      byte for byte, those of grading the same notebooks in one process;
#   2. submits the array again where the course's worker cannot run (a broken nbclient on
#      PYTHONPATH): a grader-wide failure, which must fail the array task, so that the
#      afterok merge never runs.
# The daemons it started are stopped at the end, by the PIDs in their pid files.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
PYTHON="${COURSE_PYTHON:-$ROOT/.venv/bin/python}"
FIXTURES="$ROOT/tests/fixtures/grading"

say() { printf 'slurm lane: %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "run it as root (CI does): it starts munged, slurmctld and slurmd"
[ -x "$PYTHON" ] || fail "no course Python at $PYTHON: run make setup first"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    say "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq slurm-wlm munge >/dev/null
fi

SCRATCH="$(mktemp -d /tmp/slurm-lane.XXXXXX)"
chmod 755 "$SCRATCH"
STARTED_MUNGE=""
PASSED=""
stop() {
    for pidfile in "$SCRATCH/slurmd.pid" "$SCRATCH/slurmctld.pid" $STARTED_MUNGE; do
        if [ -s "$pidfile" ]; then
            kill "$(cat "$pidfile")" 2>/dev/null || true
        fi
    done
    sleep 1
    if [ -n "$PASSED" ]; then
        rm -rf "$SCRATCH"
    else
        say "logs kept in $SCRATCH (ctld.log, d.log, jobs/)"
    fi
}
trap stop EXIT

# --- munge: a key owned by the munge user, then the daemon as that user
if ! (munge -n | unmunge) >/dev/null 2>&1; then
    mkdir -p /etc/munge /run/munge /var/log/munge /var/lib/munge
    if [ ! -s /etc/munge/munge.key ]; then
        dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
    fi
    chmod 400 /etc/munge/munge.key
    chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge
    su -s /bin/sh munge -c /usr/sbin/munged
    STARTED_MUNGE=/run/munge/munged.pid
    for _ in $(seq 50); do (munge -n | unmunge) >/dev/null 2>&1 && break; sleep 0.2; done
fi
(munge -n | unmunge) >/dev/null 2>&1 || fail "munged does not answer"

# --- slurmctld and slurmd, this host as the only node, state in the scratch folder
HOST="$(hostname -s)"
CPUS="$(nproc)"
mkdir -p "$SCRATCH/state" "$SCRATCH/spool"
export SLURM_CONF="$SCRATCH/slurm.conf"
cat > "$SLURM_CONF" <<EOF
ClusterName=lane
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$SCRATCH/state
SlurmdSpoolDir=$SCRATCH/spool
SlurmctldPidFile=$SCRATCH/slurmctld.pid
SlurmdPidFile=$SCRATCH/slurmd.pid
SlurmctldLogFile=$SCRATCH/ctld.log
SlurmdLogFile=$SCRATCH/d.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=3600
NodeName=$HOST CPUs=$CPUS RealMemory=16000 State=UNKNOWN
PartitionName=lane Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
    sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed)' && break
    sleep 1
done
sinfo -h -o %T | grep -qE '^(idle|mixed)' || fail "the node never became idle: $(tail -5 "$SCRATCH/ctld.log")"
say "cluster up: $(sinfo -h -o '%P %D %T %c')"

job_state() { scontrol show job "$1" | tr ' ' '\n' | sed -n 's/^JobState=//p' | sort -u | tr '\n' ' '; }

FINAL="COMPLETED FAILED CANCELLED TIMEOUT OUT_OF_MEMORY NODE_FAIL PREEMPTED BOOT_FAIL DEADLINE"
wait_for() {  # wait_for JOB: until every task of JOB has ended; its states, once each
    local job="$1"
    for _ in $(seq 1200); do
        local states ended=1
        states="$(job_state "$job")"
        for state in $states; do
            case " $FINAL " in *" $state "*) ;; *) ended=0 ;; esac
        done
        if [ "$ended" = 1 ] && [ -n "$states" ]; then
            echo "$states"
            return 0
        fi
        sleep 1
    done
    fail "job $job is still $(job_state "$job")"
}
submit() { sbatch --parsable "$@" | cut -d';' -f1; }

# --- a small class, in nbgrader's layout, and a key only the grader and this lane hold
CLASS="$SCRATCH/class"
for pair in alice:correct bob:tampering carol:odd_names dave:correct; do
    student="${pair%%:*}"
    mkdir -p "$CLASS/submitted/$student/ps1"
    cp "$FIXTURES/${pair##*:}.ipynb" "$CLASS/submitted/$student/ps1/00_start_here.ipynb"
done
RESULTS="$SCRATCH/results"
KEY="$SCRATCH/grading.key"
mkdir -p "$RESULTS" "$SCRATCH/jobs"
export SUBMISSIONS="$CLASS/submitted" RESULTS COURSE_PYTHON="$PYTHON" GRADING_KEY_FILE="$KEY"
export OMP_NUM_THREADS=1 COURSE_PROGRESS=off

say "1. the array and its afterok merge, as an instructor submits them"
cd "$SCRATCH/jobs"
array="$(submit --array=1-2 --cpus-per-task=1 --mem=4G "$ROOT/deploy/slurm/grade-array.sbatch")"
merge="$(submit --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    "$ROOT/deploy/slurm/grade-merge.sbatch")"
[ "$(wait_for "$array")" = "COMPLETED " ] || fail "the array ended $(job_state "$array")"
[ "$(wait_for "$merge")" = "COMPLETED " ] || fail "the merge ended $(job_state "$merge")"
cd "$ROOT"
"$PYTHON" -m course_helpers grade "$SUBMISSIONS" --jobs 2 --key-file "$KEY" \
    --json "$SCRATCH/one.json" --csv "$SCRATCH/one.csv" --junit "$SCRATCH/one.xml" \
    > "$SCRATCH/one.txt" 2> "$SCRATCH/one.err" || [ $? -le 1 ] \
    || fail "one-process run: $(tail -3 "$SCRATCH/one.err")"
cmp "$RESULTS/class.json" "$SCRATCH/one.json" || fail "the merged class.json differs from one run's"
cmp "$RESULTS/gradebook.csv" "$SCRATCH/one.csv" || fail "the merged gradebook differs from one run's"
cmp "$RESULTS/class.xml" "$SCRATCH/one.xml" || fail "the merged JUnit report differs from one run's"
grep -q '"score": 4' "$RESULTS/class.json" || fail "the class scored $(grep -m1 '"score"' "$RESULTS/class.json")"
say "the merged reports equal one run's: $(tail -n +2 "$RESULTS/gradebook.csv" | wc -l) notebooks"

say "2. a grader-wide failure fails the array task, and the merge never runs"
BROKEN="$SCRATCH/broken"
mkdir -p "$BROKEN/nbclient"
echo "raise ImportError('nbclient is broken here')" > "$BROKEN/nbclient/__init__.py"
RESULTS="$SCRATCH/results-broken"
mkdir -p "$RESULTS"
cd "$SCRATCH/jobs"
array="$(PYTHONPATH="$BROKEN" RESULTS="$RESULTS" submit --array=1-1 --cpus-per-task=1 \
    --mem=4G "$ROOT/deploy/slurm/grade-array.sbatch")"
merge="$(RESULTS="$RESULTS" submit --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    "$ROOT/deploy/slurm/grade-merge.sbatch")"
[ "$(wait_for "$array")" = "FAILED " ] || fail "the broken array task ended $(job_state "$array")"
[ "$(wait_for "$merge")" = "CANCELLED " ] || fail "the merge ran anyway: $(job_state "$merge")"
grep -q "GRADER FAILURE" "$SCRATCH/jobs/course-grading-${array}_1.out" \
    || fail "the task's log does not say why: $(tail -3 "$SCRATCH/jobs/course-grading-${array}_1.out")"
[ ! -e "$RESULTS/class.json" ] || fail "a class report was written for a failed grading"
say "the failed task says: $(grep -m1 'GRADER FAILURE' "$SCRATCH/jobs/course-grading-${array}_1.out" | cut -c1-160)"
PASSED=1
say "passed"
